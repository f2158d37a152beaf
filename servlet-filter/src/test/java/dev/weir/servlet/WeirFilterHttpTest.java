package dev.weir.servlet;

import static dev.weir.servlet.Support.assertDrained;
import static dev.weir.servlet.Support.await;
import static dev.weir.servlet.Support.servlet;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.ControlWindow;
import dev.weir.LoadShedder;
import dev.weir.Outcome;
import dev.weir.Permit;
import dev.weir.Priority;
import dev.weir.Rejector;
import dev.weir.Snapshot;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import dev.weir.http.HttpAnswers;
import dev.weir.http.RejectionFormat;
import jakarta.servlet.AsyncContext;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The filter on a real Jetty 12 server, driven over 127.0.0.1 by a real HTTP client. */
class WeirFilterHttpTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static HttpClient client;
  private static ExecutorService appThreads;

  @BeforeAll
  static void startClient() {
    client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();
    appThreads = Executors.newCachedThreadPool();
  }

  @AfterAll
  static void stopClient() {
    appThreads.shutdownNow();
  }

  private static HttpResponse<String> get(TestServer s, String path, String... headers)
      throws Exception {
    return send(s, path, headers).get(20, TimeUnit.SECONDS);
  }

  private static CompletableFuture<HttpResponse<String>> send(TestServer s, String path,
      String... headers) {
    HttpRequest.Builder b = HttpRequest.newBuilder(s.uri(path)).timeout(Duration.ofSeconds(20));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  // ------------------------------------------------------------------------------ basics

  @Test
  void zeroConfigurationPassesRequestsThroughWithAPermit() throws Exception {
    try (TestServer s = TestServer.withClass(Map.of())
        .servlet("/hello", servlet((req, res) -> {
          Permit p = (Permit) req.getAttribute(WeirFilter.PERMIT_ATTRIBUTE);
          res.setHeader("X-Had-Permit", Boolean.toString(p != null && !p.isReleased()));
          res.setHeader("X-Priority",
              Priority.toString((Integer) req.getAttribute(WeirFilter.PRIORITY_ATTRIBUTE)));
          res.getWriter().print("hello");
        })).start()) {
      HttpResponse<String> r = get(s, "/hello", "X-Weir-Tier", "1:7");
      assertEquals(200, r.statusCode());
      assertEquals("hello", r.body());
      assertEquals("true", r.headers().firstValue("X-Had-Permit").orElse(null));
      assertEquals("1:7", r.headers().firstValue("X-Priority").orElse(null));
      LoadShedder shedder = s.filter().shedders().get("GET /hello");
      assertNotNull(shedder, "one shedder per route: " + s.filter().shedders().keySet());
      assertEquals(1, shedder.snapshot().count(Snapshot.Counter.SUCCEEDED, 1));
      assertDrained(s.filter());

      HttpResponse<String> status = get(s, "/weir/status");
      assertEquals(200, status.statusCode());
      assertTrue(status.body().contains("\"GET /hello\":{\"limit\":"), status.body());
      assertTrue(status.body().contains("\"succeeded\":[0,1,0,0,0,0]"), status.body());
      assertEquals("application/json", status.headers().firstValue("Content-Type").orElse(null));
      HttpResponse<String> page = get(s, "/weir/status?view=html");
      assertEquals(200, page.statusCode());
      assertTrue(page.headers().firstValue("Content-Type").orElse("").startsWith("text/html"));
      assertTrue(page.body().startsWith("<!DOCTYPE html>"), page.body());
    }
  }

  @Test
  void queuedRequestsResumeInPriorityOrder() throws Exception {
    CountDownLatch firstIn = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    List<String> ran = Collections.synchronizedList(new ArrayList<>());
    List<String> threads = Collections.synchronizedList(new ArrayList<>());
    WeirFilter filter = WeirFilter.builder()
        .shedder(Support.oneAtATime().requestTimeout(Duration.ofSeconds(30))).build();
    try (TestServer s = TestServer.with(filter).servlet("/work", servlet((req, res) -> {
      String tier = req.getHeader("X-Weir-Tier");
      ran.add(tier);
      threads.add(req.getDispatcherType().name());
      if ("first".equals(req.getHeader("X-Test"))) {
        firstIn.countDown();
        releaseFirst.await(20, TimeUnit.SECONDS);
      }
      res.getWriter().print(tier);
    })).start()) {
      CompletableFuture<HttpResponse<String>> first = send(s, "/work", "X-Weir-Tier", "5",
          "X-Test", "first");
      assertTrue(firstIn.await(10, TimeUnit.SECONDS));
      LoadShedder shedder = filter.shedders().get("GET /work");
      List<CompletableFuture<HttpResponse<String>>> queued = new ArrayList<>();
      for (String tier : new String[] {"4", "2", "3", "0", "1"}) {
        queued.add(send(s, "/work", "X-Weir-Tier", tier));
        int expected = queued.size();
        await(() -> shedder.queued() == expected, WAIT, () -> "queued " + shedder.queued());
      }
      await(() -> shedder.inflight() == 1, WAIT, () -> "held " + shedder.inflight());
      releaseFirst.countDown();
      assertEquals(200, first.get(20, TimeUnit.SECONDS).statusCode());
      for (CompletableFuture<HttpResponse<String>> f : queued) {
        assertEquals(200, f.get(20, TimeUnit.SECONDS).statusCode());
      }
      assertEquals(List.of("5", "0", "1", "2", "3", "4"), ran);
      // Queued requests ran in the filter's own async re-dispatch, not on a held thread.
      assertEquals(List.of("REQUEST", "ASYNC", "ASYNC", "ASYNC", "ASYNC", "ASYNC"), threads);
      assertDrained(filter);
    }
  }

  /** Sheds tiers at or above 3 from its first tick on. */
  private static final class CutoffRejector implements Rejector {
    @Override
    public int update(ControlWindow window) {
      return Priority.of(3, 0);
    }

    @Override
    public double ratio() {
      return 0.5;
    }

    @Override
    public boolean overloaded() {
      return true;
    }
  }

  @Test
  void shedRequestsGet429WithRetryAfter() throws Exception {
    WeirFilter filter = WeirFilter.builder()
        .shedder(LoadShedder.builder().limit(() -> Limits.fixed(1)).rejector(CutoffRejector::new))
        .answers(HttpAnswers.builder().retryAfter(Duration.ofSeconds(2))
            .format(RejectionFormat.JSON).build()).build();
    try (TestServer s = TestServer.with(filter)
        .servlet("/api", servlet((req, res) -> res.getWriter().print("ok"))).start()) {
      assertEquals(200, get(s, "/api", "X-Weir-Tier", "4").statusCode()); // before the first tick
      LoadShedder shedder = filter.shedders().get("GET /api");
      await(() -> shedder.cutoff() == Priority.of(3, 0), WAIT, () -> "no tick yet");
      // The cutoff sheds only what would wait: with the only permit free, tier 4 runs.
      assertEquals(200, get(s, "/api", "X-Weir-Tier", "4").statusCode());
      await(() -> shedder.inflight() == 0, WAIT, () -> "its permit is not back");
      Permit held = shedder.acquire(Priority.HIGHEST); // the only permit: now tier 4 would wait

      HttpResponse<String> shed = get(s, "/api", "X-Weir-Tier", "4");
      assertEquals(429, shed.statusCode());
      assertEquals("2", shed.headers().firstValue("Retry-After").orElse(null));
      assertEquals("application/json", shed.headers().firstValue("Content-Type").orElse(null));
      assertEquals("{\"error\":\"overloaded\",\"reason\":\"SHED\",\"status\":429,"
          + "\"retryAfterSeconds\":2}", shed.body());
      // Left to the container to send, the answer still says how long it is: the connection is
      // kept, not closed to end the body.
      assertEquals(String.valueOf(shed.body().length()),
          shed.headers().firstValue("Content-Length").orElse(null));
      held.success();
      assertEquals(200, get(s, "/api", "X-Weir-Tier", "2").statusCode());
      assertEquals(1, shedder.snapshot().count(Snapshot.Counter.SHED, 4));
      assertDrained(filter);
    }
  }

  @Test
  void queueTimeoutGets503WithRetryAfter() throws Exception {
    CountDownLatch firstIn = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    WeirFilter filter = WeirFilter.builder().shedder(Support.oneAtATime()
        .requestTimeout(Duration.ofSeconds(20)).queueTimeout(Duration.ofMillis(200))).build();
    try (TestServer s = TestServer.with(filter).servlet("/work", servlet((req, res) -> {
      if (req.getHeader("X-Test") != null) {
        firstIn.countDown();
        releaseFirst.await(20, TimeUnit.SECONDS);
      }
      res.getWriter().print("ok");
    })).start()) {
      CompletableFuture<HttpResponse<String>> first = send(s, "/work", "X-Test", "1");
      assertTrue(firstIn.await(10, TimeUnit.SECONDS));
      long start = System.nanoTime();
      HttpResponse<String> late = get(s, "/work");
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertEquals(503, late.statusCode());
      assertEquals("1", late.headers().firstValue("Retry-After").orElse(null));
      assertEquals("Service unavailable: waited too long in the queue\n", late.body());
      assertEquals("queue-timeout", late.headers().firstValue("X-Weir-Outcome").orElse(null));
      assertTrue(tookMs >= 190, "answered before its queue timeout: " + tookMs + "ms");
      releaseFirst.countDown();
      assertEquals(200, first.get(20, TimeUnit.SECONDS).statusCode());
      assertEquals(1, filter.snapshots().get("GET /work").total(Snapshot.Counter.QUEUE_TIMEOUT));
      assertDrained(filter);
    }
  }

  // ------------------------------------------------------------------- async applications

  /** A fixed limit that records the largest latency sample it was shown. */
  private static final class RecordingLimit implements dev.weir.Limit {
    final AtomicLong maxLatencyNanos = new AtomicLong();
    final AtomicLong ticks = new AtomicLong();

    @Override
    public int initialLimit() {
      return 4;
    }

    @Override
    public int maxLimit() {
      return 4;
    }

    @Override
    public int update(ControlWindow w) {
      if (w.latencySamples() > 0) {
        maxLatencyNanos.accumulateAndGet(w.latencyQuantileNanos(1.0), Math::max);
      }
      ticks.incrementAndGet();
      return 4;
    }
  }

  @Test
  void asyncApplicationHoldsItsPermitUntilCompletion() throws Exception {
    RecordingLimit limit = new RecordingLimit();
    CountDownLatch finish = new CountDownLatch(1);
    AtomicLong servletReturned = new AtomicLong();
    AtomicLong completed = new AtomicLong();
    WeirFilter filter = WeirFilter.builder()
        .shedder(LoadShedder.builder().limit(() -> limit).rejector(Rejectors::none)).build();
    try (TestServer s = TestServer.with(filter).servlet("/async", servlet((req, res) -> {
      AsyncContext ac = req.startAsync();
      appThreads.execute(() -> {
        try {
          finish.await();
          ac.getResponse().getWriter().print("late");
          completed.set(System.nanoTime());
          ac.complete();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      servletReturned.set(System.nanoTime());
    })).start()) {
      CompletableFuture<HttpResponse<String>> r = send(s, "/async");
      await(() -> servletReturned.get() != 0, WAIT, () -> "servlet never ran");
      LoadShedder shedder = filter.shedders().get("GET /async");
      // Let at least two control ticks (>= 200ms) pass: the permit must still be held.
      long ticks = limit.ticks.get();
      await(() -> limit.ticks.get() >= ticks + 2, WAIT, () -> "no control ticks");
      await(() -> shedder.inflight() == 1, WAIT,
          () -> "permit released before the async completion: " + shedder.inflight());
      assertFalse(r.isDone());
      finish.countDown();
      HttpResponse<String> done = r.get(20, TimeUnit.SECONDS);
      assertEquals(200, done.statusCode());
      assertEquals("late", done.body());
      assertDrained(filter);
      assertEquals(1, shedder.snapshot().count(Snapshot.Counter.SUCCEEDED, 3));
      long heldNanos = completed.get() - servletReturned.get();
      await(() -> limit.maxLatencyNanos.get() > 0, WAIT, () -> "no latency sample");
      // The sample is the time to completion (histogram precision ~3%), not to doFilter's return.
      assertTrue(limit.maxLatencyNanos.get() >= heldNanos * 0.95,
          "latency " + limit.maxLatencyNanos.get() + "ns < held " + heldNanos + "ns");
    }
  }

  @Test
  void queuedRequestWhoseApplicationGoesAsyncHoldsItsPermitUntilCompletion() throws Exception {
    CountDownLatch firstIn = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    CountDownLatch asyncStarted = new CountDownLatch(1);
    WeirFilter filter = WeirFilter.builder().singleShedder()
        .shedder(Support.oneAtATime().requestTimeout(Duration.ofSeconds(30))).build();
    try (TestServer s = TestServer.with(filter)
        .servlet("/block", servlet((req, res) -> {
          firstIn.countDown();
          releaseFirst.await(20, TimeUnit.SECONDS);
        }))
        .servlet("/async", servlet((req, res) -> {
          AsyncContext ac = req.startAsync();
          appThreads.execute(() -> {
            try {
              finish.await();
              ac.getResponse().getWriter().print("async after queue");
            } catch (Exception e) {
              throw new IllegalStateException(e);
            } finally {
              ac.complete();
            }
          });
          asyncStarted.countDown();
        })).start()) {
      CompletableFuture<HttpResponse<String>> first = send(s, "/block");
      assertTrue(firstIn.await(10, TimeUnit.SECONDS));
      LoadShedder shedder = filter.shedders().get("all");
      CompletableFuture<HttpResponse<String>> queued = send(s, "/async");
      await(() -> shedder.queued() == 1, WAIT, () -> "not queued");
      releaseFirst.countDown();
      assertEquals(200, first.get(20, TimeUnit.SECONDS).statusCode());
      assertTrue(asyncStarted.await(10, TimeUnit.SECONDS));
      // The application's own async cycle follows ours: the permit stays held.
      await(() -> shedder.snapshot().total(Snapshot.Counter.SUCCEEDED) == 1, WAIT,
          () -> "first not released");
      await(() -> shedder.inflight() == 1, WAIT, () -> "held " + shedder.inflight());
      assertFalse(queued.isDone());
      finish.countDown();
      HttpResponse<String> r = queued.get(20, TimeUnit.SECONDS);
      assertEquals(200, r.statusCode());
      assertEquals("async after queue", r.body());
      assertDrained(filter);
      assertEquals(2, shedder.snapshot().total(Snapshot.Counter.SUCCEEDED));
    }
  }

  /**
   * The container keeps one async timeout for the whole request, and the filter shortens it while
   * a request waits in the queue: the application that goes async in the filter's dispatch (a long
   * poll, say) must start with the container's timeout, as on the fast path, not with the wait's.
   */
  @Test
  void queuedRequestsOwnAsyncCycleStartsWithTheContainersTimeout() throws Exception {
    CountDownLatch firstIn = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    WeirFilter filter = WeirFilter.builder().singleShedder()
        .shedder(Support.oneAtATime().requestTimeout(Duration.ofSeconds(30))
            .queueTimeout(Duration.ofSeconds(2))).build();
    try (TestServer s = TestServer.with(filter)
        .servlet("/block", servlet((req, res) -> {
          firstIn.countDown();
          releaseFirst.await(20, TimeUnit.SECONDS);
        }))
        .servlet("/poll", servlet((req, res) -> {
          AsyncContext ac = req.startAsync();
          // What would bound the long poll; reported instead of waited for.
          res.getWriter().print(req.getDispatcherType() + " " + ac.getTimeout());
          ac.complete();
        })).start()) {
      HttpResponse<String> fast = get(s, "/poll");
      assertEquals(200, fast.statusCode());
      String containers = fast.body().substring("REQUEST ".length());
      assertTrue(Long.parseLong(containers) > 2_000 + 5_000, "container's timeout " + containers);
      CompletableFuture<HttpResponse<String>> first = send(s, "/block");
      assertTrue(firstIn.await(10, TimeUnit.SECONDS));
      LoadShedder shedder = filter.shedders().get("all");
      CompletableFuture<HttpResponse<String>> queued = send(s, "/poll");
      await(() -> shedder.queued() == 1, WAIT, () -> "not queued");
      releaseFirst.countDown();
      assertEquals(200, first.get(20, TimeUnit.SECONDS).statusCode());
      HttpResponse<String> r = queued.get(20, TimeUnit.SECONDS);
      assertEquals(200, r.statusCode());
      assertEquals("ASYNC " + containers, r.body());
      assertDrained(filter);
      assertEquals(3, shedder.snapshot().total(Snapshot.Counter.SUCCEEDED));
    }
  }

  @Test
  void applicationErrorsReleaseTheirPermitAsErrors() throws Exception {
    WeirFilter filter = WeirFilter.builder().build();
    try (TestServer s = TestServer.with(filter)
        .servlet("/boom", servlet((req, res) -> {
          throw new IllegalStateException("boom");
        }))
        .servlet("/busy", servlet((req, res) -> res.sendError(503))).start()) {
      assertEquals(500, get(s, "/boom").statusCode());
      assertEquals(503, get(s, "/busy").statusCode());
      assertDrained(filter);
      assertEquals(1, filter.snapshots().get("GET /boom").total(Snapshot.Counter.FAILED));
      assertEquals(1, filter.snapshots().get("GET /busy").total(Snapshot.Counter.DROPPED));
    }
  }

  // ------------------------------------------------------------------------------- chaos

  /**
   * Jetty does not tell a suspended HTTP/1.1 request that its client closed the connection (no
   * AsyncListener.onError until the connection is next used), so here the abandoned request leaves
   * the queue at its queue timeout at the latest; containers that do notify (Jetty's HTTP/2 on
   * RST_STREAM, for one) make it leave at once through the listener's cancel. Either way it must
   * leave the queue, must never run and must leak nothing.
   */
  @Test
  void clientDisconnectingWhileQueuedLeavesTheQueueAndNeverRuns() throws Exception {
    CountDownLatch firstIn = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    AtomicLong runs = new AtomicLong();
    WeirFilter filter = WeirFilter.builder().shedder(Support.oneAtATime()
        .requestTimeout(Duration.ofSeconds(30)).queueTimeout(Duration.ofMillis(500))).build();
    try (TestServer s = TestServer.with(filter).servlet("/work", servlet((req, res) -> {
      runs.incrementAndGet();
      if (req.getHeader("X-Test") != null) {
        firstIn.countDown();
        releaseFirst.await(20, TimeUnit.SECONDS);
      }
      res.getWriter().print("ok");
    })).start()) {
      org.eclipse.jetty.client.HttpClient jetty = new org.eclipse.jetty.client.HttpClient();
      jetty.start();
      try {
        CompletableFuture<HttpResponse<String>> first = send(s, "/work", "X-Test", "1");
        assertTrue(firstIn.await(10, TimeUnit.SECONDS));
        LoadShedder shedder = filter.shedders().get("GET /work");
        AtomicReference<Throwable> failure = new AtomicReference<>();
        org.eclipse.jetty.client.Request doomed = jetty.newRequest(s.uri("/work"));
        doomed.send(result -> failure.set(result.getFailure()));
        await(() -> shedder.queued() == 1, WAIT, () -> "not queued");
        assertTrue(doomed.abort(new Exception("client gone")).get(5, TimeUnit.SECONDS));
        // The queue length drops just before the counters move: wait for both.
        await(() -> shedder.queued() == 0 && shedder.snapshot().total(Snapshot.Counter.CANCELLED)
                + shedder.snapshot().total(Snapshot.Counter.QUEUE_TIMEOUT) == 1, WAIT,
            () -> "still queued: " + shedder.snapshot());
        assertNotNull(failure.get());
        releaseFirst.countDown();
        assertEquals(200, first.get(20, TimeUnit.SECONDS).statusCode());
        assertDrained(filter);
        assertEquals(1, shedder.snapshot().total(Snapshot.Counter.ADMITTED));
        assertEquals(1, runs.get(), "the abandoned request ran");
      } finally {
        jetty.stop();
      }
    }
  }

  /**
   * Over HTTP/2 the client's stream reset reaches the queued request: it leaves at once. Jetty
   * reports a reset to the servlet only from {@code startAsync} on: a reset that lands between the
   * request's queueing and its {@code startAsync} (microseconds, longer on a cold JVM) is dropped
   * by Jetty, and that request leaves at its queue timeout instead. So three requests are reset in
   * turn: every one must leave the queue, none may run, and at least one must leave at once.
   */
  @Test
  void clientResettingItsStreamWhileQueuedLeavesTheQueueAtOnce() throws Exception {
    CountDownLatch firstIn = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    AtomicLong runs = new AtomicLong();
    // A queue timeout past the "at once" deadline below, and well within the polling deadline.
    WeirFilter filter = WeirFilter.builder().shedder(Support.oneAtATime()
        .requestTimeout(Duration.ofSeconds(60)).queueTimeout(Duration.ofSeconds(3))).build();
    try (TestServer s = TestServer.with(filter).servlet("/work", servlet((req, res) -> {
      runs.incrementAndGet();
      if (req.getHeader("X-Test") != null) {
        firstIn.countDown();
        releaseFirst.await(30, TimeUnit.SECONDS);
      }
      res.getWriter().print("ok");
    })).start()) {
      org.eclipse.jetty.client.HttpClient h2 = new org.eclipse.jetty.client.HttpClient(
          new org.eclipse.jetty.http2.client.transport.HttpClientTransportOverHTTP2(
              new org.eclipse.jetty.http2.client.HTTP2Client()));
      h2.start();
      try {
        CompletableFuture<HttpResponse<String>> first = send(s, "/work", "X-Test", "1");
        assertTrue(firstIn.await(10, TimeUnit.SECONDS));
        LoadShedder shedder = filter.shedders().get("GET /work");
        List<Long> atOnce = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
          int left = i;
          org.eclipse.jetty.client.Request doomed = h2.newRequest(s.uri("/work"));
          CompletableFuture<org.eclipse.jetty.client.Result> result = new CompletableFuture<>();
          doomed.send(result::complete);
          await(() -> shedder.queued() == 1, WAIT, () -> "not queued");
          long abortedAt = System.nanoTime();
          assertTrue(doomed.abort(new Exception("client gone")).get(5, TimeUnit.SECONDS));
          // The queue length drops just before the counters move: wait for both.
          await(() -> shedder.queued() == 0 && leftQueue(shedder) == left, WAIT,
              () -> "still queued: " + shedder.snapshot());
          long leftMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - abortedAt);
          if (shedder.snapshot().total(Snapshot.Counter.CANCELLED) == atOnce.size() + 1) {
            atOnce.add(leftMs);
          }
          assertNotNull(result.get(5, TimeUnit.SECONDS).getFailure());
        }
        System.out.println("h2 reset: cancelled at once " + atOnce.size() + " of 3, after "
            + atOnce + " ms");
        assertFalse(atOnce.isEmpty(), "no reset reached its queued request");
        for (long ms : atOnce) {
          assertTrue(ms < 2_000, "left the queue " + ms + " ms after the abort");
        }
        releaseFirst.countDown();
        assertEquals(200, first.get(20, TimeUnit.SECONDS).statusCode());
        assertDrained(filter);
        assertEquals(1, runs.get(), "an abandoned request ran");
      } finally {
        h2.stop();
      }
    }
  }

  private static long leftQueue(LoadShedder shedder) {
    Snapshot snap = shedder.snapshot();
    return snap.total(Snapshot.Counter.CANCELLED) + snap.total(Snapshot.Counter.QUEUE_TIMEOUT);
  }

  /**
   * Mapped for REQUEST only, the filter's resume dispatch bypasses it: queued requests still run,
   * and their permits are still released when they complete, async or not.
   */
  @Test
  void filterMappedForRequestOnlyStillReleasesQueuedPermits() throws Exception {
    CountDownLatch firstIn = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    WeirFilter filter = WeirFilter.builder().singleShedder()
        .shedder(Support.oneAtATime().requestTimeout(Duration.ofSeconds(30))).build();
    try (TestServer s = TestServer.with(filter)
        .filterDispatches(java.util.EnumSet.of(jakarta.servlet.DispatcherType.REQUEST))
        .servlet("/block", servlet((req, res) -> {
          firstIn.countDown();
          releaseFirst.await(20, TimeUnit.SECONDS);
        }))
        .servlet("/sync", servlet((req, res) -> res.getWriter().print("sync")))
        .servlet("/async", servlet((req, res) -> {
          AsyncContext ac = req.startAsync();
          appThreads.execute(() -> {
            try {
              finish.await(20, TimeUnit.SECONDS);
              ac.getResponse().getWriter().print("async");
            } catch (Exception e) {
              throw new IllegalStateException(e);
            } finally {
              ac.complete();
            }
          });
        })).start()) {
      LoadShedder shedder;
      CompletableFuture<HttpResponse<String>> first = send(s, "/block");
      assertTrue(firstIn.await(10, TimeUnit.SECONDS));
      shedder = filter.shedders().get("all");
      CompletableFuture<HttpResponse<String>> async = send(s, "/async", "X-Weir-Tier", "0");
      await(() -> shedder.queued() == 1, WAIT, () -> "not queued");
      CompletableFuture<HttpResponse<String>> sync = send(s, "/sync", "X-Weir-Tier", "1");
      await(() -> shedder.queued() == 2, WAIT, () -> "not queued");
      releaseFirst.countDown();
      assertEquals(200, first.get(20, TimeUnit.SECONDS).statusCode());
      // The async one ran first and holds the only permit until it completes.
      await(() -> shedder.snapshot().total(Snapshot.Counter.ADMITTED) == 2, WAIT,
          () -> "not admitted: " + shedder.snapshot());
      assertEquals(1, shedder.queued());
      assertFalse(async.isDone());
      finish.countDown();
      assertEquals("async", async.get(20, TimeUnit.SECONDS).body());
      assertEquals("sync", sync.get(20, TimeUnit.SECONDS).body());
      assertDrained(filter);
      assertEquals(3, shedder.snapshot().total(Snapshot.Counter.SUCCEEDED));
    }
  }
}
