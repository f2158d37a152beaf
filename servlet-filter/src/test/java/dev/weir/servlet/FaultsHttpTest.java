package dev.weir.servlet;

import static dev.weir.servlet.Support.assertDrained;
import static dev.weir.servlet.Support.await;
import static dev.weir.servlet.Support.servlet;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.Limit;
import dev.weir.LoadShedder;
import dev.weir.RejectReason;
import dev.weir.Snapshot;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import dev.weir.http.HttpAnswer;
import java.io.OutputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.eclipse.jetty.client.AsyncRequestContent;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Faults and abuse (issue 17) on a real Jetty 12: each test fails without its fix. */
class FaultsHttpTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static HttpClient client;
  private static org.eclipse.jetty.client.HttpClient jetty;

  @BeforeAll
  static void start() throws Exception {
    client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();
    jetty = new org.eclipse.jetty.client.HttpClient();
    jetty.start();
  }

  @AfterAll
  static void stop() throws Exception {
    jetty.stop();
  }

  private static HttpResponse<String> get(TestServer s, String path, String... headers)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(s.uri(path)).timeout(WAIT);
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static LoadShedder.Builder fixed(int limit) {
    return LoadShedder.builder().limit(() -> Limits.fixed(limit)).rejector(Rejectors::none)
        .requestTimeout(Duration.ofSeconds(30)).queueTimeout(Duration.ofSeconds(2));
  }

  /**
   * Clients that leave while the application works, in bounded mode. The buffered answer
   * (4 MB, under the cap) cannot be written at commit; the permit must come back all the same.
   */
  @Test
  void boundedModeReleasesThePermitWhenTheAnswerCannotBeWritten() throws Exception {
    WeirFilter filter = WeirFilter.builder().boundedResponseTime(true)
        .maxBufferedBytes(8 << 20).shedder(fixed(2)).build();
    AtomicInteger entered = new AtomicInteger();
    List<CountDownLatch> gates = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      gates.add(new CountDownLatch(1));
    }
    gates.get(5).countDown(); // the last request, from a client that stays
    try (TestServer s = TestServer.with(filter)
        .servlet("/big", servlet((req, res) -> {
          int me = entered.getAndIncrement();
          gates.get(me).await(20, TimeUnit.SECONDS);
          OutputStream out = res.getOutputStream();
          out.write(new byte[4 << 20]);
        }))
        .servlet("/small", servlet((req, res) -> res.getWriter().print("ok"))).start()) {
      for (int i = 0; i < 5; i++) {
        int n = i + 1;
        org.eclipse.jetty.client.Request doomed = jetty.newRequest(s.uri("/big"));
        doomed.send(result -> { });
        await(() -> entered.get() == n, WAIT, () -> "not entered: " + filter.snapshots());
        assertTrue(doomed.abort(new Exception("client gone")).get(5, TimeUnit.SECONDS));
        gates.get(i).countDown();
        await(() -> filter.shedders().get("GET /big").inflight() == 0, WAIT,
            () -> "permit leaked: " + filter.snapshots());
      }
      assertEquals(200, get(s, "/big").statusCode(), "the route still serves");
      assertDrained(filter);
      Snapshot snap = filter.snapshots().get("GET /big");
      assertEquals(6, snap.total(Snapshot.Counter.ADMITTED));
      assertEquals(5, snap.total(Snapshot.Counter.FAILED), snap.toString());
    }
  }

  /**
   * Bounded mode keeps at most maxBufferedBytes of a response in memory; a longer one
   * streams, complete, and a short one is still buffered with its length.
   */
  @Test
  void boundedModeBuffersUpToItsCapThenStreams() throws Exception {
    int cap = 64 << 10;
    WeirFilter filter = WeirFilter.builder().boundedResponseTime(true).maxBufferedBytes(cap)
        .build();
    AtomicInteger peak = new AtomicInteger();
    byte[] expected = new byte[5 << 20];
    for (int i = 0; i < expected.length; i++) {
      expected[i] = (byte) (i * 31 + (i >>> 11));
    }
    try (TestServer s = TestServer.with(filter)
        .servlet("/large", servlet((req, res) -> {
          res.setContentType("application/octet-stream");
          OutputStream out = res.getOutputStream();
          for (int off = 0; off < expected.length; off += 8192) {
            out.write(expected, off, Math.min(8192, expected.length - off));
            peak.accumulateAndGet(((BufferedResponse) res).bufferedMemory(), Math::max);
          }
        }))
        .servlet("/short", servlet((req, res) -> res.getWriter().print("short"))).start()) {
      HttpResponse<byte[]> r = client.send(HttpRequest.newBuilder(s.uri("/large")).timeout(WAIT)
          .build(), HttpResponse.BodyHandlers.ofByteArray());
      assertEquals(200, r.statusCode());
      assertArrayEquals(expected, r.body());
      assertTrue(peak.get() > 0 && peak.get() <= cap, "buffered up to " + peak.get());
      HttpResponse<String> small = get(s, "/short");
      assertEquals("short", small.body());
      assertEquals("5", small.headers().firstValue("Content-Length").orElse(null));
      assertDrained(filter);
    }
  }

  /**
   * Junk methods and paths cannot take the per-route slots: keys come from known methods
   * and servlet mapping patterns, so a real route keeps its own shedder.
   */
  @Test
  void junkRequestsDoNotPushRealRoutesIntoTheOverflowShedder() throws Exception {
    WeirFilter filter = WeirFilter.builder().build(); // 64 slots
    try (TestServer s = TestServer.with(filter)
        .servlet("/hello", servlet((req, res) -> res.getWriter().print("hello")))
        .servlet("/api/*", servlet((req, res) -> res.getWriter().print("api"))).start()) {
      List<CompletableFuture<HttpResponse<String>>> junk = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        String method = i % 2 == 0 ? "JUNK" + i : "GET";
        String path = i % 3 == 0 ? "/api/item/" + i : "/nowhere/" + i;
        junk.add(client.sendAsync(HttpRequest.newBuilder(s.uri(path)).timeout(WAIT)
            .method(method, HttpRequest.BodyPublishers.noBody()).build(),
            HttpResponse.BodyHandlers.ofString()));
      }
      for (CompletableFuture<HttpResponse<String>> f : junk) {
        assertNotNull(f.get(20, TimeUnit.SECONDS));
      }
      assertEquals("hello", get(s, "/hello").body());
      Set<String> keys = filter.shedders().keySet();
      assertTrue(keys.contains("GET /hello"), keys.toString());
      assertFalse(keys.contains(WeirFilter.OVERFLOW_ROUTE), keys.toString());
      assertTrue(keys.size() <= 5, keys.toString());
      assertTrue(keys.contains("OTHER /api/*") && keys.contains("GET /api/*"), keys.toString());
      assertEquals(1, filter.snapshots().get("GET /hello").total(Snapshot.Counter.ADMITTED));
      assertDrained(filter);
    }
  }

  /** A route idle for routeIdleTimeout gives its slot back and its shedder is closed. */
  @Test
  void idleRoutesAgeOutAndFreeTheirSlot() throws Exception {
    WeirFilter filter = WeirFilter.builder().maxShedders(1)
        .routeIdleTimeout(Duration.ofMillis(200)).routeKey(r -> r.getRequestURI()).build();
    try (TestServer s = TestServer.with(filter)
        .servlet("/*", servlet((req, res) -> res.getWriter().print("ok"))).start()) {
      assertEquals(200, get(s, "/a").statusCode());
      LoadShedder a = filter.shedders().get("/a");
      assertNotNull(a);
      assertEquals(200, get(s, "/b").statusCode());
      assertTrue(filter.shedders().containsKey(WeirFilter.OVERFLOW_ROUTE));
      await(() -> a.isClosed() && !filter.shedders().containsKey("/a"), WAIT,
          () -> "not aged out: " + filter.shedders().keySet());
      assertEquals(200, get(s, "/b").statusCode());
      assertNotNull(filter.shedders().get("/b"), filter.shedders().keySet().toString());
      assertDrained(filter);
    }
  }

  /**
   * A limit factory that fails on a later call (throws, or returns null) costs the route
   * its own shedder, not its answers: the overflow shedder, built and validated at init, serves.
   */
  @Test
  void aShedderThatCannotBeBuiltFallsBackToTheOverflowShedder() throws Exception {
    for (boolean throwing : new boolean[] {true, false}) {
      AtomicInteger calls = new AtomicInteger();
      Supplier<Limit> flaky = () -> {
        if (calls.incrementAndGet() <= 2) { // validate() and the overflow shedder, at init
          return Limits.fixed(4);
        }
        if (throwing) {
          throw new IllegalStateException("limit factory broke");
        }
        return null;
      };
      WeirFilter filter = WeirFilter.builder().shedder(LoadShedder.builder().limit(flaky))
          .build();
      try (TestServer s = TestServer.with(filter)
          .servlet("/w", servlet((req, res) -> res.getWriter().print("ok"))).start()) {
        for (int i = 0; i < 3; i++) {
          HttpResponse<String> r = get(s, "/w");
          assertEquals(200, r.statusCode(), r.body());
        }
        assertNull(filter.shedders().get("GET /w"));
        assertEquals(3, filter.snapshots().get(WeirFilter.OVERFLOW_ROUTE)
            .total(Snapshot.Counter.ADMITTED));
        assertDrained(filter);
      }
    }
    // A template that cannot build its overflow shedder fails at build time instead.
    AtomicInteger calls = new AtomicInteger();
    LoadShedder.Builder once = LoadShedder.builder().limit(
        () -> calls.incrementAndGet() == 1 ? Limits.fixed(1) : null);
    assertThrows(IllegalArgumentException.class, () -> WeirFilter.builder().shedder(once).build());
  }

  /**
   * Four clients sending their bodies at a byte every 300 ms hold every permit of the
   * route; past bodyReadTimeout the permits are released as DROPPED and a normal upload is
   * served while they still dribble. Read by the application, or by the container for it (a
   * form's parameters).
   */
  @Test
  void slowBodiesDoNotPinTheLimit() throws Exception {
    slowBodiesDoNotPinTheLimit(null, req -> req.getInputStream().readAllBytes().length);
  }

  @Test
  void slowFormBodiesReadByTheContainerDoNotPinTheLimit() throws Exception {
    slowBodiesDoNotPinTheLimit("application/x-www-form-urlencoded",
        req -> String.valueOf(req.getParameter("a")).length());
  }

  private interface BodyRead {
    int length(jakarta.servlet.http.HttpServletRequest req) throws Exception;
  }

  private void slowBodiesDoNotPinTheLimit(String contentType, BodyRead read) throws Exception {
    WeirFilter filter = WeirFilter.builder().bodyReadTimeout(Duration.ofMillis(500))
        .shedder(LoadShedder.builder().limit(() -> Limits.fixed(4)).rejector(Rejectors::none)
            .requestTimeout(Duration.ofSeconds(30)).queueTimeout(Duration.ofSeconds(10)))
        .build();
    ScheduledExecutorService dribble = Executors.newSingleThreadScheduledExecutor();
    List<AsyncRequestContent> bodies = new ArrayList<>();
    try (TestServer s = TestServer.with(filter)
        .servlet("/upload", servlet((req, res) -> res.getWriter().print(read.length(req))))
        .start()) {
      for (int i = 0; i < 4; i++) {
        AsyncRequestContent body = contentType == null ? new AsyncRequestContent()
            : new AsyncRequestContent(contentType);
        bodies.add(body);
        jetty.newRequest(s.uri("/upload")).method("POST").headers(h -> h.put("Content-Length",
            "1000")).body(body).send(result -> { });
        body.write(ByteBuffer.wrap("a=".getBytes(java.nio.charset.StandardCharsets.US_ASCII)),
            Callback.NOOP);
      }
      // A byte every 300 ms on each, for at most 6 s: the abuse, not synchronisation.
      AtomicInteger ticks = new AtomicInteger();
      dribble.scheduleAtFixedRate(() -> {
        if (ticks.incrementAndGet() > 20) {
          bodies.forEach(b -> b.fail(new Exception("enough")));
          throw new IllegalStateException("done dribbling");
        }
        bodies.forEach(b -> b.write(ByteBuffer.wrap(new byte[] {'x'}), Callback.NOOP));
      }, 0, 300, TimeUnit.MILLISECONDS);
      await(() -> filter.shedders().get("POST /upload") != null
              && filter.snapshots().get("POST /upload").total(Snapshot.Counter.ADMITTED) == 4,
          WAIT, () -> "slow uploads not admitted: " + filter.snapshots());
      long start = System.nanoTime();
      HttpRequest.Builder small = HttpRequest.newBuilder(s.uri("/upload"))
          .timeout(WAIT).header("X-Weir-Tier", "0")
          .POST(HttpRequest.BodyPublishers.ofString("a=hello"));
      if (contentType != null) {
        small.header("Content-Type", contentType);
      }
      HttpResponse<String> r = client.send(small.build(), HttpResponse.BodyHandlers.ofString());
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertEquals(200, r.statusCode(), r.body());
      assertEquals(contentType == null ? "7" : "5", r.body());
      assertTrue(tookMs < 5_000, "served after " + tookMs + "ms");
      assertTrue(ticks.get() < 20, "served only once the dribbling stopped");
      assertTrue(filter.snapshots().get("POST /upload").total(Snapshot.Counter.DROPPED) >= 1);
      // Every slow upload's permit is dropped by its guard, while the clients still dribble.
      await(() -> filter.snapshots().get("POST /upload").total(Snapshot.Counter.DROPPED) == 4,
          WAIT, () -> "not dropped: " + filter.snapshots());
      assertTrue(ticks.get() < 20, "dropped only once the dribbling stopped");
      bodies.forEach(b -> b.fail(new Exception("test over")));
      assertDrained(filter);
    } finally {
      dribble.shutdownNow();
    }
  }

  /**
   * A queued request whose HTTP/1.1 client left is not withdrawn
   * (Jetty reports no close of a suspended HTTP/1.1 request); it runs once a permit frees, and
   * its permit comes back like any other.
   */
  @Test
  void aQueuedRequestWhoseHttp11ClientLeftRunsOnceAPermitFrees() throws Exception {
    CountDownLatch firstIn = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    AtomicInteger runs = new AtomicInteger();
    WeirFilter filter = WeirFilter.builder().shedder(Support.oneAtATime()
        .requestTimeout(Duration.ofSeconds(30)).queueTimeout(Duration.ofSeconds(20))).build();
    try (TestServer s = TestServer.with(filter).servlet("/work", servlet((req, res) -> {
      runs.incrementAndGet();
      if (req.getHeader("X-Test") != null) {
        firstIn.countDown();
        releaseFirst.await(20, TimeUnit.SECONDS);
      }
      res.getWriter().print("ok");
    })).start()) {
      CompletableFuture<HttpResponse<String>> first = client.sendAsync(HttpRequest.newBuilder(
          s.uri("/work")).header("X-Test", "1").timeout(WAIT).build(),
          HttpResponse.BodyHandlers.ofString());
      assertTrue(firstIn.await(10, TimeUnit.SECONDS));
      LoadShedder shedder = filter.shedders().get("GET /work");
      for (int i = 0; i < 3; i++) {
        int n = i + 1;
        org.eclipse.jetty.client.Request doomed = jetty.newRequest(s.uri("/work"));
        doomed.send(result -> { });
        await(() -> shedder.queued() == n, WAIT, () -> "not queued");
        assertTrue(doomed.abort(new Exception("client gone")).get(5, TimeUnit.SECONDS));
      }
      assertEquals(3, shedder.queued(), "withdrawn");
      releaseFirst.countDown();
      assertEquals(200, first.get(20, TimeUnit.SECONDS).statusCode());
      await(() -> runs.get() == 4, WAIT, () -> "ran " + runs.get());
      assertDrained(filter);
      assertEquals(4, shedder.snapshot().total(Snapshot.Counter.ADMITTED));
      assertEquals(0, shedder.snapshot().total(Snapshot.Counter.CANCELLED));
    }
  }

  /**
   * A filter before Weir took the response's writer (without writing): the filter's own answers
   * (queue full, queue timeout, shutting down) still carry their body, through that writer.
   */
  @Test
  void answersKeepTheirBodyWhenAnEarlierFilterTookTheWriter() throws Exception {
    CountDownLatch firstIn = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    WeirFilter weir = WeirFilter.builder().singleShedder().shedder(Support.oneAtATime()
        .queueCapacity(1).requestTimeout(Duration.ofSeconds(30))
        .queueTimeout(Duration.ofSeconds(1))).build();
    jakarta.servlet.Filter takesWriter = (req, res, chain) -> {
      res.getWriter();
      weir.doFilter(req, res, chain);
    };
    try (TestServer s = TestServer.with(takesWriter).servlet("/work", servlet((req, res) -> {
      if (req.getHeader("X-Test") != null) {
        firstIn.countDown();
        releaseFirst.await(20, TimeUnit.SECONDS);
      }
      res.getWriter().print("ok");
    })).start()) {
      CompletableFuture<HttpResponse<String>> first = client.sendAsync(HttpRequest.newBuilder(
          s.uri("/work")).header("X-Test", "1").timeout(WAIT).build(),
          HttpResponse.BodyHandlers.ofString());
      assertTrue(firstIn.await(10, TimeUnit.SECONDS));
      LoadShedder shedder = weir.shedders().get("all");
      // One priority for both: a random cohort could make the second evict the first.
      CompletableFuture<HttpResponse<String>> queued = client.sendAsync(HttpRequest.newBuilder(
          s.uri("/work")).header("X-Weir-Tier", "3:64").timeout(WAIT).build(),
          HttpResponse.BodyHandlers.ofString());
      await(() -> shedder.queued() == 1, WAIT, () -> "not queued");
      assertAnswer(weir, RejectReason.QUEUE_FULL, get(s, "/work", "X-Weir-Tier", "3:64")); // in place
      assertAnswer(weir, RejectReason.QUEUE_TIMEOUT, queued.get(20, TimeUnit.SECONDS)); // async
      releaseFirst.countDown();
      assertEquals("ok", first.get(20, TimeUnit.SECONDS).body());
      assertDrained(weir);
      weir.destroy();
      assertAnswer(weir, RejectReason.SHUTTING_DOWN, get(s, "/work"));
    }
  }

  private static void assertAnswer(WeirFilter weir, RejectReason reason, HttpResponse<String> r) {
    HttpAnswer expected = weir.answers().rejected(reason);
    assertEquals(expected.status(), r.statusCode(), reason.toString());
    assertEquals(expected.outcome(), r.headers().firstValue("X-Weir-Outcome").orElse(null));
    assertEquals(expected.body(), r.body(), reason.toString());
  }

  /**
   * Asynchronous cycles that never complete (timeout 0, never completed), in both modes:
   * the shedder's watchdog reclaims their permits as DROPPED past the deadline plus its grace,
   * and the route recovers.
   */
  @Test
  void neverCompletedAsyncCyclesDoNotHoldTheRoute() throws Exception {
    for (boolean bounded : new boolean[] {false, true}) {
      WeirFilter filter = WeirFilter.builder().boundedResponseTime(bounded)
          .shedder(LoadShedder.builder().limit(() -> Limits.fixed(4)).rejector(Rejectors::none)
              .requestTimeout(Duration.ofMillis(300)).queueTimeout(Duration.ofMillis(100)))
          .build();
      try (TestServer s = TestServer.with(filter).servlet("/stuck", servlet((req, res) -> {
        if (req.getHeader("X-Stuck") != null) {
          req.startAsync().setTimeout(0); // and never completed
        } else {
          res.getWriter().print("ok");
        }
      })).start()) {
        for (int i = 0; i < 4; i++) {
          jetty.newRequest(s.uri("/stuck")).headers(h -> h.put("X-Stuck", "1"))
              .timeout(1, TimeUnit.SECONDS).send(result -> { });
        }
        await(() -> filter.shedders().get("GET /stuck") != null
            && filter.shedders().get("GET /stuck").inflight() == 4, WAIT,
            () -> "not stuck: " + filter.snapshots());
        await(() -> filter.shedders().get("GET /stuck").inflight() == 0, WAIT,
            () -> "stuck for good: " + filter.snapshots());
        assertEquals(200, get(s, "/stuck").statusCode());
        assertDrained(filter);
        assertEquals(4, filter.snapshots().get("GET /stuck").total(Snapshot.Counter.DROPPED));
        assertEquals(4, filter.snapshots().get("GET /stuck").total(Snapshot.Counter.RECLAIMED));
      }
    }
  }
}
