package dev.weir.jetty;

import static dev.weir.jetty.Support.WAIT;
import static dev.weir.jetty.Support.app;
import static dev.weir.jetty.Support.assertDrained;
import static dev.weir.jetty.Support.await;
import static dev.weir.jetty.Support.holdOrAnswer;
import static dev.weir.jetty.Support.body;
import static dev.weir.jetty.Support.get;
import static dev.weir.jetty.Support.ok;
import static dev.weir.jetty.Support.oneAtATime;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.LoadShedder;
import dev.weir.Permit;
import dev.weir.Priority;
import dev.weir.Snapshot;
import dev.weir.control.Limits;
import dev.weir.http.HttpAnswers;
import dev.weir.http.RejectionFormat;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The handler on a real Jetty 12 server, through real HTTP/1.1 and HTTP/2 clients. */
class WeirHandlerHttpTest {

  @ParameterizedTest
  @EnumSource(Support.Protocol.class)
  void admittedRequestsPassAndReleaseTheirPermitOnTheCallback(Support.Protocol protocol)
      throws Exception {
    WeirHandler weir = new WeirHandler(ok("hello"));
    try (TestServer s = TestServer.start(weir)) {
      HttpClient client = protocol.client();
      try {
        for (int i = 0; i < 20; i++) {
          ContentResponse r = get(client, s.uri("/x"), "X-Weir-Tier", "1");
          assertEquals(200, r.getStatus());
          assertEquals("hello", body(r));
        }
        LoadShedder shedder = weir.shedders().get(WeirHandler.SINGLE_ROUTE);
        await(() -> shedder.snapshot().total(Snapshot.Counter.SUCCEEDED) == 20, WAIT,
            () -> shedder.snapshot().toString());
        assertEquals(20, shedder.count(Snapshot.Counter.ADMITTED, 1));
        assertDrained(weir);
      } finally {
        client.stop();
      }
    }
  }

  @Test
  void shedRequestsGet429WithRetryAfterAtOnce() throws Exception {
    WeirHandler weir = WeirHandler.builder()
        .shedder(LoadShedder.builder().limit(() -> Limits.fixed(1))
            .rejector(Support.CutoffRejector::new))
        .answers(HttpAnswers.builder().retryAfter(Duration.ofSeconds(2))
            .format(RejectionFormat.JSON).build())
        .handler(ok("ok")).build();
    try (TestServer s = TestServer.start(weir)) {
      HttpClient client = Support.Protocol.HTTP1.client();
      try {
        assertEquals(200, get(client, s.uri("/api"), "X-Weir-Tier", "4").getStatus());
        LoadShedder shedder = weir.shedders().get(WeirHandler.SINGLE_ROUTE);
        await(() -> shedder.cutoff() == Priority.of(3, 0), WAIT, () -> "no tick yet");
        await(() -> shedder.inflight() == 0, WAIT, () -> "its permit is not back");
        Permit taken = shedder.acquire(Priority.HIGHEST); // the only permit: tier 4 would wait

        long start = System.nanoTime();
        ContentResponse shed = get(client, s.uri("/api"), "X-Weir-Tier", "4");
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertEquals(429, shed.getStatus());
        assertEquals("2", shed.getHeaders().get("Retry-After"));
        assertEquals("shed", shed.getHeaders().get("X-Weir-Outcome"));
        assertEquals("no-store", shed.getHeaders().get("Cache-Control"));
        assertEquals("application/json", shed.getHeaders().get("Content-Type"));
        assertEquals("{\"error\":\"overloaded\",\"reason\":\"SHED\",\"status\":429,"
            + "\"retryAfterSeconds\":2}", body(shed));
        assertEquals(String.valueOf(body(shed).length()), shed.getHeaders().get("Content-Length"));
        assertTrue(tookMs < 1000, "shed after " + tookMs + " ms");
        taken.success();
        assertEquals(200, get(client, s.uri("/api"), "X-Weir-Tier", "2").getStatus());
        assertEquals(1, shedder.snapshot().count(Snapshot.Counter.SHED, 4));
        assertDrained(weir);
      } finally {
        client.stop();
      }
    }
  }

  /**
   * A queue timeout is decided on the shared timer thread; its 503 is written on a server thread.
   * An outer handler records the thread of every write.
   */
  @Test
  void queueTimeoutGets503WrittenOffTheTimerThread() throws Exception {
    AtomicReference<Callback> held = new AtomicReference<>();
    WeirHandler weir = WeirHandler.builder()
        .shedder(oneAtATime().requestTimeout(Duration.ofSeconds(20))
            .queueTimeout(Duration.ofMillis(200)))
        .handler(holdOrAnswer(new AtomicInteger(), held)).build();
    Queue<String> writers = new ConcurrentLinkedQueue<>();
    Handler.Wrapper recorder = new Handler.Wrapper(weir) {
      @Override
      public boolean handle(Request request, Response response, Callback callback)
          throws Exception {
        return super.handle(request, new Response.Wrapper(request, response) {
          @Override
          public void write(boolean last, ByteBuffer content, Callback cb) {
            writers.add(Thread.currentThread().getName());
            super.write(last, content, cb);
          }
        }, callback);
      }
    };
    try (TestServer s = TestServer.start(recorder)) {
      HttpClient client = Support.Protocol.HTTP1.client();
      try {
        CompletableFuture<ContentResponse> first = new CompletableResponseListener(
            client.newRequest(s.uri("/hold")).headers(h -> h.add("X-Hold", "1"))).send();
        await(() -> held.get() != null, WAIT, () -> "not held");
        writers.clear();
        long start = System.nanoTime();
        ContentResponse late = get(client, s.uri("/work"));
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertEquals(503, late.getStatus());
        assertEquals("queue-timeout", late.getHeaders().get("X-Weir-Outcome"));
        assertEquals("1", late.getHeaders().get("Retry-After"));
        assertEquals("Service unavailable: waited too long in the queue\n", body(late));
        assertTrue(tookMs >= 190, "answered before its queue timeout: " + tookMs + " ms");
        assertEquals(1, writers.size(), writers.toString());
        assertTrue(writers.peek().startsWith("test-server"), "written on " + writers);
        held.get().succeeded();
        assertEquals(200, first.get(WAIT.toSeconds(), TimeUnit.SECONDS).getStatus());
        assertEquals(1, weir.snapshots().get(WeirHandler.SINGLE_ROUTE)
            .total(Snapshot.Counter.QUEUE_TIMEOUT));
        assertDrained(weir);
      } finally {
        client.stop();
      }
    }
  }

  /**
   * Eight server threads, acceptor and selector included, and forty queued requests: a queued
   * request holds no thread. When the permit comes back every one of them is served.
   */
  @ParameterizedTest
  @EnumSource(Support.Protocol.class)
  void queuedRequestsHoldNoServerThread(Support.Protocol protocol) throws Exception {
    int threads = 8;
    int queued = 40;
    AtomicReference<Callback> held = new AtomicReference<>();
    Queue<String> ranOn = new ConcurrentLinkedQueue<>();
    WeirHandler weir = WeirHandler.builder()
        .shedder(oneAtATime().requestTimeout(Duration.ofSeconds(60))
            .queueTimeout(Duration.ofSeconds(30)))
        .handler(app((req, res, cb) -> {
          if (req.getHeaders().get("X-Hold") != null) {
            held.set(Callback.from(() -> Content.Sink.write(res, true, "held", cb)));
            return true;
          }
          ranOn.add(Thread.currentThread().getName());
          Content.Sink.write(res, true, "ok", cb);
          return true;
        })).build();
    try (TestServer s = TestServer.start(weir, threads)) {
      HttpClient client = protocol.client();
      try {
        CompletableFuture<ContentResponse> first = new CompletableResponseListener(
            client.newRequest(s.uri("/hold")).headers(h -> h.add("X-Hold", "1"))).send();
        await(() -> held.get() != null, WAIT, () -> "not held");
        LoadShedder shedder = weir.shedders().get(WeirHandler.SINGLE_ROUTE);
        List<CompletableFuture<ContentResponse>> waiting = new ArrayList<>();
        for (int i = 0; i < queued; i++) {
          waiting.add(new CompletableResponseListener(client.newRequest(s.uri("/work"))
              .timeout(WAIT.toSeconds(), TimeUnit.SECONDS)).send());
        }
        await(() -> shedder.queued() == queued, WAIT,
            () -> "queued " + shedder.queued() + ", threads " + s.threads);
        assertTrue(s.threads.getThreads() <= threads, s.threads.toString());
        assertTrue(s.threads.getIdleThreads() + s.threads.getReadyThreads() > 0
            || s.threads.getThreads() < threads, "no thread left: " + s.threads);
        held.get().succeeded();
        for (CompletableFuture<ContentResponse> f : waiting) {
          ContentResponse r = f.get(WAIT.toSeconds(), TimeUnit.SECONDS);
          assertEquals(200, r.getStatus());
          assertEquals("ok", body(r));
        }
        assertEquals(200, first.get(WAIT.toSeconds(), TimeUnit.SECONDS).getStatus());
        assertEquals(queued, ranOn.size());
        assertTrue(ranOn.stream().allMatch(t -> t.startsWith("test-server")), ranOn.toString());
        assertDrained(weir);
        assertEquals(queued + 1, shedder.snapshot().total(Snapshot.Counter.SUCCEEDED));
      } finally {
        client.stop();
      }
    }
  }

  /** In front of an ee10 servlet context, with no filter: the servlet runs with the permit. */
  @Test
  void protectsAServletContextWithoutAFilter() throws Exception {
    ServletContextHandler context = new ServletContextHandler("/");
    context.addServlet(new ServletHolder(new HttpServlet() {
      private static final long serialVersionUID = 1L;

      @Override
      protected void doGet(HttpServletRequest req, HttpServletResponse res) throws IOException {
        Permit p = (Permit) req.getAttribute(WeirHandler.PERMIT_ATTRIBUTE);
        res.getWriter().print(p == null ? "none" : "tier " + Priority.tier(p.priority()));
      }
    }), "/servlet");
    WeirHandler weir = WeirHandler.builder().handler(context)
        .routeKey(r -> Request.getPathInContext(r).startsWith("/servlet") ? "/servlet" : null)
        .build();
    try (TestServer s = TestServer.start(weir)) {
      HttpClient client = Support.Protocol.HTTP2.client();
      try {
        ContentResponse r = get(client, s.uri("/servlet"), "X-Weir-Tier", "2");
        assertEquals(200, r.getStatus());
        assertEquals("tier 2", body(r));
        assertEquals(404, get(client, s.uri("/nothing")).getStatus());
        assertTrue(weir.shedders().containsKey("GET /servlet"), weir.shedders().toString());
        assertTrue(weir.shedders().containsKey(WeirHandler.OVERFLOW_ROUTE));
        assertDrained(weir);
      } finally {
        client.stop();
      }
    }
  }

  /** Stopping answers queued requests 503 shutting-down; they never run. */
  @Test
  void stoppingAnswersQueuedRequests() throws Exception {
    AtomicReference<Callback> held = new AtomicReference<>();
    WeirHandler weir = WeirHandler.builder()
        .shedder(oneAtATime().requestTimeout(Duration.ofSeconds(60))
            .queueTimeout(Duration.ofSeconds(30)))
        .handler(app((req, res, cb) -> {
          if (req.getHeaders().get("X-Hold") != null) {
            held.set(cb);
            return true;
          }
          Content.Sink.write(res, true, "ok", cb);
          return true;
        })).build();
    TestServer s = TestServer.start(weir);
    HttpClient client = Support.Protocol.HTTP1.client();
    try {
      new CompletableResponseListener(
          client.newRequest(s.uri("/hold")).headers(h -> h.add("X-Hold", "1"))).send();
      await(() -> held.get() != null, WAIT, () -> "not held");
      LoadShedder shedder = weir.shedders().get(WeirHandler.SINGLE_ROUTE);
      CompletableFuture<ContentResponse> queued = new CompletableResponseListener(
          client.newRequest(s.uri("/work"))).send();
      await(() -> shedder.queued() == 1, WAIT, () -> "not queued");
      weir.stop();
      ContentResponse r = queued.get(WAIT.toSeconds(), TimeUnit.SECONDS);
      assertEquals(503, r.getStatus());
      assertEquals("shutting-down", r.getHeaders().get("X-Weir-Outcome"));
      assertFalse(shedder.queued() > 0);
    } finally {
      client.stop();
      s.close();
    }
  }
}
