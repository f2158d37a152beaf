package dev.weir.jetty;

import static dev.weir.jetty.Support.WAIT;
import static dev.weir.jetty.Support.app;
import static dev.weir.jetty.Support.assertDrained;
import static dev.weir.jetty.Support.await;
import static dev.weir.jetty.Support.body;
import static dev.weir.jetty.Support.get;
import static dev.weir.jetty.Support.oneAtATime;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.LoadShedder;
import dev.weir.Snapshot;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Applications that misbehave: every request still gets exactly one answer, and every permit
 * comes back, counted once.
 */
class FaultsHttpTest {
  private HttpClient client;

  @BeforeEach
  void client() throws Exception {
    client = Support.Protocol.HTTP1.client();
  }

  @AfterEach
  void stop() throws Exception {
    client.stop();
  }

  private static LoadShedder single(WeirHandler weir) {
    return weir.shedders().get(WeirHandler.SINGLE_ROUTE);
  }

  @Test
  void anApplicationThatThrowsGetsOneErrorAnswerAndItsPermitBack() throws Exception {
    WeirHandler weir = new WeirHandler(app((req, res, cb) -> {
      throw new IllegalStateException("boom");
    }));
    try (TestServer s = TestServer.start(weir)) {
      assertEquals(500, get(client, s.uri("/x")).getStatus());
      assertEquals(500, get(client, s.uri("/x")).getStatus());
      await(() -> single(weir).snapshot().total(Snapshot.Counter.FAILED) == 2, WAIT,
          () -> single(weir).snapshot().toString());
      assertDrained(weir);
    }
  }

  @Test
  void anApplicationThatFailsItsCallbackGetsOneErrorAnswer() throws Exception {
    WeirHandler weir = new WeirHandler(app((req, res, cb) -> {
      cb.failed(new IOException("failed by the application"));
      cb.succeeded(); // a second completion is ignored
      return true;
    }));
    try (TestServer s = TestServer.start(weir)) {
      assertEquals(500, get(client, s.uri("/x")).getStatus());
      await(() -> single(weir).snapshot().total(Snapshot.Counter.FAILED) == 1, WAIT,
          () -> single(weir).snapshot().toString());
      assertEquals(0, single(weir).snapshot().total(Snapshot.Counter.SUCCEEDED));
      assertDrained(weir);
    }
  }

  /** Admitted from the queue, the application runs on a server thread: a throw there too. */
  @Test
  void anApplicationAdmittedFromTheQueueThatThrowsOrDeclines() throws Exception {
    AtomicReference<Callback> held = new AtomicReference<>();
    WeirHandler weir = WeirHandler.builder().shedder(oneAtATime()
        .requestTimeout(Duration.ofSeconds(60)).queueTimeout(Duration.ofSeconds(30)))
        .handler(app((req, res, cb) -> {
          String path = req.getHttpURI().getPath();
          if (path.equals("/hold")) {
            held.set(Callback.from(() -> Content.Sink.write(res, true, "held", cb)));
            return true;
          }
          if (path.equals("/throw")) {
            throw new IllegalStateException("boom");
          }
          return false; // not mine
        })).build();
    try (TestServer s = TestServer.start(weir)) {
      CompletableFuture<ContentResponse> first =
          new CompletableResponseListener(client.newRequest(s.uri("/hold"))).send();
      await(() -> held.get() != null, WAIT, () -> "not held");
      CompletableFuture<ContentResponse> thrower =
          new CompletableResponseListener(client.newRequest(s.uri("/throw"))).send();
      CompletableFuture<ContentResponse> declined =
          new CompletableResponseListener(client.newRequest(s.uri("/declined"))).send();
      await(() -> single(weir).queued() == 2, WAIT, () -> "not queued");
      held.get().succeeded();
      assertEquals(200, first.get(WAIT.toSeconds(), TimeUnit.SECONDS).getStatus());
      assertEquals(500, thrower.get(WAIT.toSeconds(), TimeUnit.SECONDS).getStatus());
      assertEquals(404, declined.get(WAIT.toSeconds(), TimeUnit.SECONDS).getStatus());
      // Declined inline, Jetty answers its own 404.
      assertEquals(404, get(client, s.uri("/declined-inline")).getStatus());
      Snapshot snap = single(weir).snapshot();
      assertEquals(1, snap.total(Snapshot.Counter.FAILED), snap.toString());
      assertEquals(3, snap.total(Snapshot.Counter.SUCCEEDED), snap.toString());
      assertDrained(weir);
    }
  }

  /**
   * Bounded response time, an application that never completes: the client has its 503 at the
   * deadline, and the watchdog reclaims the permit at the deadline plus its grace.
   */
  @Test
  void anApplicationThatNeverCompletesIsAnsweredAtItsDeadlineAndItsPermitReclaimed()
      throws Exception {
    WeirHandler weir = WeirHandler.builder().boundedResponseTime(true)
        .shedder(LoadShedder.builder().requestTimeout(Duration.ofMillis(300))
            .watchdogGrace(Duration.ofMillis(300)))
        .handler(app((req, res, cb) -> {
          res.getHeaders().put("X-App", "never sent");
          return true; // and never completes
        })).build();
    try (TestServer s = TestServer.start(weir)) {
      long start = System.nanoTime();
      ContentResponse r = get(client, s.uri("/stuck"));
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertEquals(503, r.getStatus());
      assertEquals("deadline", r.getHeaders().get("X-Weir-Outcome"));
      assertEquals("1", r.getHeaders().get("Retry-After"));
      assertEquals(null, r.getHeaders().get("X-App"), "the application's header leaked");
      assertTrue(tookMs >= 290 && tookMs < 5_000, "answered after " + tookMs + " ms");
      LoadShedder shedder = single(weir);
      await(() -> shedder.snapshot().total(Snapshot.Counter.RECLAIMED) == 1, WAIT,
          shedder::toString);
      assertDrained(weir);
    }
  }

  /** After its deadline answer, the application's writes fail and its completion counts once. */
  @Test
  void aLateApplicationIsSilencedAfterTheDeadlineAnswer() throws Exception {
    CompletableFuture<Response> late = new CompletableFuture<>();
    AtomicReference<Callback> lateCallback = new AtomicReference<>();
    WeirHandler weir = WeirHandler.builder().boundedResponseTime(true)
        .shedder(LoadShedder.builder().requestTimeout(Duration.ofMillis(200)))
        .handler(app((req, res, cb) -> {
          lateCallback.set(cb);
          late.complete(res);
          return true;
        })).build();
    try (TestServer s = TestServer.start(weir)) {
      ContentResponse r = get(client, s.uri("/slow"));
      assertEquals(503, r.getStatus());
      assertEquals("Service unavailable: the request took too long\n", body(r));
      Response res = late.get(5, TimeUnit.SECONDS);
      assertTrue(res.isCommitted());
      CompletableFuture<Void> write = new CompletableFuture<>();
      res.write(true, ByteBuffer.wrap("late".getBytes(StandardCharsets.UTF_8)),
          Callback.from(() -> write.complete(null), write::completeExceptionally));
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> write.get(5, TimeUnit.SECONDS));
      assertInstanceOf(IOException.class, e.getCause());
      lateCallback.get().succeeded();
      lateCallback.get().succeeded();
      LoadShedder shedder = single(weir);
      assertDrained(weir);
      Snapshot snap = shedder.snapshot();
      assertEquals(1, snap.total(Snapshot.Counter.DROPPED), snap.toString());
      assertEquals(0, snap.total(Snapshot.Counter.SUCCEEDED), snap.toString());
      assertEquals(0, snap.total(Snapshot.Counter.RECLAIMED), snap.toString());
    }
  }

  /** Bounded, an application that answers in time is untouched: its status and headers go out. */
  @Test
  void boundedModeLeavesATimelyAnswerAlone() throws Exception {
    WeirHandler weir = WeirHandler.builder().boundedResponseTime(true)
        .handler(app((req, res, cb) -> {
          res.setStatus(201);
          res.getHeaders().put("X-App", "yes");
          Content.Sink.write(res, true, "made", cb);
          return true;
        })).build();
    try (TestServer s = TestServer.start(weir)) {
      ContentResponse r = get(client, s.uri("/make"));
      assertEquals(201, r.getStatus());
      assertEquals("yes", r.getHeaders().get("X-App"));
      assertEquals("made", body(r));
      assertDrained(weir);
      assertEquals(0, single(weir).snapshot().total(Snapshot.Counter.DEADLINE_MISSED));
    }
  }
}
