package dev.weir.servlet;

import static dev.weir.servlet.Support.assertDrained;
import static dev.weir.servlet.Support.servlet;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.Clock;
import dev.weir.LoadShedder;
import dev.weir.Timer;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import jakarta.servlet.AsyncContext;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The deadline against what the application committed, on a clock the test moves: a response the
 * application committed (flushBuffer, close) before the deadline must not be replaced.
 */
class BoundedDeadlineHttpTest {
  private static final Duration TIMEOUT = Duration.ofMinutes(10);
  private static final HttpClient CLIENT = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).build();

  /** Real time plus a jump; tasks run only when the test jumps, on its thread. */
  static final class JumpTime implements Timer, Clock {
    private final List<Object[]> tasks = new ArrayList<>();
    private volatile long offset;

    @Override
    public long nanoTime() {
      return System.nanoTime() + offset;
    }

    @Override
    public Clock clock() {
      return this;
    }

    @Override
    public synchronized Timeout schedule(Runnable task, long deadlineNanos) {
      Object[] t = {task, deadlineNanos, false};
      tasks.add(t);
      return () -> {
        synchronized (JumpTime.this) {
          boolean was = !(Boolean) t[2];
          t[2] = true;
          return was;
        }
      };
    }

    /** Moves the clock by {@code d} and runs every task then due. */
    void jump(Duration d) {
      offset += d.toNanos();
      List<Runnable> due = new ArrayList<>();
      synchronized (this) {
        long now = nanoTime();
        tasks.removeIf(t -> {
          if ((Boolean) t[2]) {
            return true;
          }
          if ((Long) t[1] - now <= 0) {
            t[2] = true;
            due.add((Runnable) t[0]);
            return true;
          }
          return false;
        });
      }
      due.forEach(Runnable::run);
    }
  }

  private static WeirFilter filter(boolean bounded, JumpTime time) {
    return WeirFilter.builder().boundedResponseTime(bounded)
        .shedder(LoadShedder.builder().timer(time).requestTimeout(TIMEOUT)
            .rejector(Rejectors::none).limit(() -> Limits.fixed(4))).build();
  }

  /**
   * The application commits (flushBuffer or closes its stream) well before its deadline, then
   * finishes some work past it. Plain mode: the client has the application's 200. Bounded mode
   * must answer the same: the response was committed by the deadline.
   */
  @ParameterizedTest(name = "bounded={0}")
  @ValueSource(booleans = {false, true})
  void committedBeforeTheDeadlineIsNotReplaced(boolean bounded) throws Exception {
    JumpTime time = new JumpTime();
    WeirFilter filter = filter(bounded, time);
    CountDownLatch committed = new CountDownLatch(1);
    CountDownLatch go = new CountDownLatch(1);
    try (TestServer s = TestServer.with(filter)
        .servlet("/flush", servlet((req, res) -> {
          res.setContentType("text/plain");
          res.getOutputStream().write("head,".getBytes(StandardCharsets.US_ASCII));
          res.flushBuffer(); // commits: status and headers are on the wire
          committed.countDown();
          go.await(20, TimeUnit.SECONDS);
          res.getOutputStream().write("tail".getBytes(StandardCharsets.US_ASCII));
        })).start()) {
      for (String path : new String[] {"/flush"}) {
        var f = CLIENT.sendAsync(HttpRequest.newBuilder(s.uri(path))
            .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofInputStream());
        assertTrue(committed.await(10, TimeUnit.SECONDS));
        time.jump(TIMEOUT.plusSeconds(1)); // the deadline passes while the app still works
        HttpResponse<InputStream> r = f.get(20, TimeUnit.SECONDS);
        go.countDown();
        String body = new String(r.body().readAllBytes(), StandardCharsets.US_ASCII);
        assertEquals((path.equals("/flush") ? "200 head,tail" : "200 whole"),
            r.statusCode() + " " + body, path + " bounded=" + bounded);
        assertDrained(filter);
      }
    }
  }

  @ParameterizedTest(name = "bounded={0}")
  @ValueSource(booleans = {false, true})
  void closedBeforeTheDeadlineIsNotReplaced(boolean bounded) throws Exception {
    JumpTime time = new JumpTime();
    WeirFilter filter = filter(bounded, time);
    CountDownLatch committed = new CountDownLatch(1);
    CountDownLatch go = new CountDownLatch(1);
    try (TestServer s = TestServer.with(filter)
        .servlet("/close", servlet((req, res) -> {
          res.setContentType("text/plain");
          res.getOutputStream().write("whole".getBytes(StandardCharsets.US_ASCII));
          res.getOutputStream().close(); // the answer is complete
          committed.countDown();
          go.await(20, TimeUnit.SECONDS); // say, auditing after answering
        })).start()) {
      var f = CLIENT.sendAsync(HttpRequest.newBuilder(s.uri("/close"))
          .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
      assertTrue(committed.await(10, TimeUnit.SECONDS));
      time.jump(TIMEOUT.plusSeconds(1));
      HttpResponse<String> r = f.get(20, TimeUnit.SECONDS);
      go.countDown();
      assertEquals("200 whole", r.statusCode() + " " + r.body(), "bounded=" + bounded);
      assertDrained(filter);
    }
  }

  /**
   * The application returns exactly as the deadline fires, many times: each request gets one
   * whole answer, either the application's or the 503, the connection stays usable, and every
   * permit is released.
   */
  @ParameterizedTest(name = "async={0}")
  @ValueSource(booleans = {false, true})
  void returningAtTheDeadlineGivesOneAnswer(boolean async) throws Exception {
    JumpTime time = new JumpTime();
    WeirFilter filter = filter(true, time);
    CountDownLatch[] in = new CountDownLatch[1];
    CountDownLatch[] go = new CountDownLatch[1];
    try (TestServer s = TestServer.with(filter)
        .servlet("/race", servlet((req, res) -> {
          in[0].countDown();
          go[0].await(20, TimeUnit.SECONDS);
          if (async) {
            AsyncContext ac = req.startAsync(req, res);
            res.getWriter().print("ok");
            ac.complete();
          } else {
            res.setHeader("X-App", "1");
            res.getWriter().print("ok");
          }
        })).start()) {
      int app = 0;
      int deadline = 0;
      for (int i = 0; i < 200; i++) {
        in[0] = new CountDownLatch(1);
        go[0] = new CountDownLatch(1);
        var f = CLIENT.sendAsync(HttpRequest.newBuilder(s.uri("/race"))
            .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
        assertTrue(in[0].await(10, TimeUnit.SECONDS));
        CountDownLatch g = go[0];
        Thread t = new Thread(g::countDown);
        t.start();
        time.jump(TIMEOUT.plusSeconds(1));
        t.join();
        HttpResponse<String> r = f.get(20, TimeUnit.SECONDS);
        if (r.statusCode() == 200) {
          assertEquals("ok", r.body());
          app++;
        } else {
          assertEquals(503, r.statusCode(), r.body());
          assertEquals("Service unavailable: the request took too long\n", r.body());
          deadline++;
        }
        assertDrained(filter);
      }
      System.out.println("race: app " + app + ", deadline " + deadline);
    }
  }

  /**
   * Trailers the application set before its deadline must not ride on Weir's 503: nothing of the
   * application's answer reaches the client once the deadline answered.
   */
  @org.junit.jupiter.api.Test
  void deadlineAnswerCarriesNoTrailersOfTheApplication() throws Exception {
    JumpTime time = new JumpTime();
    WeirFilter filter = filter(true, time);
    CountDownLatch in = new CountDownLatch(1);
    CountDownLatch go = new CountDownLatch(1);
    try (TestServer s = TestServer.with(filter)
        .servlet("/t", servlet((req, res) -> {
          res.setTrailerFields(() -> java.util.Map.of("X-Checksum", "app"));
          res.getOutputStream().write("app body".getBytes(StandardCharsets.US_ASCII));
          in.countDown();
          go.await(20, TimeUnit.SECONDS);
        })).start()) {
      var f = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
        try {
          return BoundedParityHttpTest.exchange(s, "GET", "/t");
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      });
      assertTrue(in.await(10, TimeUnit.SECONDS));
      time.jump(TIMEOUT.plusSeconds(1));
      String answer = f.get(20, TimeUnit.SECONDS);
      go.countDown();
      System.out.println(answer);
      assertTrue(answer.startsWith("HTTP/1.1 503"), answer);
      assertTrue(!answer.contains("x-checksum"), answer);
      assertDrained(filter);
    }
  }
}
