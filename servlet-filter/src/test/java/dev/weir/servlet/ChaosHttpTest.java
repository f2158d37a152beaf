package dev.weir.servlet;

import static dev.weir.servlet.Support.assertDrained;
import static dev.weir.servlet.Support.await;
import static dev.weir.servlet.Support.servlet;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.LoadShedder;
import dev.weir.Priority;
import dev.weir.Snapshot;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Shutdown, hostile headers, bounded response time and other unkind conditions, over HTTP. */
class ChaosHttpTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static HttpClient client;

  @BeforeAll
  static void startClient() {
    client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();
  }

  private static CompletableFuture<HttpResponse<String>> send(TestServer s, String path,
      String... headers) {
    HttpRequest.Builder b = HttpRequest.newBuilder(s.uri(path)).timeout(Duration.ofSeconds(20));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static HttpResponse<String> get(TestServer s, String path, String... headers)
      throws Exception {
    return send(s, path, headers).get(20, TimeUnit.SECONDS);
  }

  @Test
  void shutdownAnswersQueuedRequestsAndLeaksNothing() throws Exception {
    CountDownLatch firstIn = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    WeirFilter filter = WeirFilter.builder().shedder(Support.oneAtATime()
        .requestTimeout(Duration.ofSeconds(30)).queueTimeout(Duration.ofSeconds(20))).build();
    TestServer s = TestServer.with(filter).servlet("/work", servlet((req, res) -> {
      if (req.getHeader("X-Test") != null) {
        firstIn.countDown();
        releaseFirst.await(20, TimeUnit.SECONDS);
      }
      res.getWriter().print("ok");
    })).start();
    try {
      CompletableFuture<HttpResponse<String>> first = send(s, "/work", "X-Test", "1");
      assertTrue(firstIn.await(10, TimeUnit.SECONDS));
      LoadShedder shedder = filter.shedders().get("GET /work");
      List<CompletableFuture<HttpResponse<String>>> queued = new ArrayList<>();
      for (int tier = 0; tier < 3; tier++) {
        queued.add(send(s, "/work", "X-Weir-Tier", Integer.toString(tier)));
        int n = queued.size();
        await(() -> shedder.queued() == n, WAIT, () -> "queued " + shedder.queued());
      }
      CompletableFuture<Void> stop = CompletableFuture.runAsync(() -> {
        try {
          s.server.stop();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      // The queue empties, by the connections closing under it or by the filter's destroy().
      // Only then may the first request finish: the JDK client retries a GET whose connection
      // closed, and a retry must not find a free permit in a server that is still stopping.
      await(() -> shedder.queued() == 0 && shedder.isClosed(), WAIT,
          () -> "still queued or open: " + shedder);
      releaseFirst.countDown();
      stop.get(30, TimeUnit.SECONDS);
      for (CompletableFuture<HttpResponse<String>> f : queued) {
        try {
          int status = f.get(20, TimeUnit.SECONDS).statusCode();
          assertEquals(503, status, "a queued request was answered " + status);
        } catch (ExecutionException e) {
          assertTrue(e.getCause() instanceof java.io.IOException, e.toString()); // closed
        }
      }
      first.handle((r, e) -> null).get(20, TimeUnit.SECONDS);
      assertDrained(filter);
      // At least the three queued requests; client retries may add more.
      await(() -> shedder.snapshot().total(Snapshot.Counter.SHUTTING_DOWN)
              + shedder.snapshot().total(Snapshot.Counter.CANCELLED) >= 3, WAIT,
          () -> "queued requests not all answered: " + shedder.snapshot());
      assertEquals(1, shedder.snapshot().total(Snapshot.Counter.ADMITTED));
    } finally {
      releaseFirst.countDown();
      s.server.stop();
    }
  }

  @Test
  void hostilePriorityHeadersAreServedAtTheDefaultPriority() throws Exception {
    WeirFilter filter = WeirFilter.builder().build();
    try (TestServer s = TestServer.with(filter).servlet("/echo", servlet((req, res) -> res
        .getWriter().print(Priority.toString(
            (Integer) req.getAttribute(WeirFilter.PRIORITY_ATTRIBUTE))))).start()) {
      String huge = "1".repeat(64 * 1024);
      String[][] hostile = {
          {"X-Weir-Tier", huge},
          {"X-Weir-Tier", "-1"},
          {"X-Weir-Tier", "abc"},
          {"X-Weir-Tier", "99999999999999999999999"},
          {"X-Weir-Tier", "2:999"},
          {"X-Weir-Tier", ":"},
          {"X-Weir-Tier", "1", "X-Weir-Tier", "0"},
          {"baggage", "weir-tier=" + huge},
          {"baggage", "x=" + huge + ",weir-tier=1"},
          {"baggage", "weir-tier=-1,weir-cohort=abc"},
          {"baggage", ",,=;;==,weir-tier,weir-tier=,weir-cohort=1e3"},
      };
      for (String[] headers : hostile) {
        HttpResponse<String> r = get(s, "/echo", headers);
        String shown = headers[1].length() > 40 ? headers[1].substring(0, 40) + "..." : headers[1];
        assertEquals(200, r.statusCode(), headers[0] + ": " + shown);
        // The default tier; no cohort was given, so it is random.
        assertTrue(r.body().startsWith("3:"), headers[0] + ": " + shown + " gave " + r.body());
      }
      assertEquals("1:40", get(s, "/echo", "X-Weir-Tier", " 1:40 ").body());
      assertTrue(get(s, "/echo", "baggage", "weir-tier=2").body().startsWith("2:"));
      assertEquals("1:9", get(s, "/echo", "baggage",
          "foo=bar;p=1, weir-tier = 1 ;prop, weir-cohort=9").body());
      // The explicit header wins over baggage, and its missing cohort comes from baggage.
      assertEquals("0:9", get(s, "/echo", "X-Weir-Tier", "0",
          "baggage", "weir-tier=4,weir-cohort=9").body());
      assertDrained(filter);
    }
  }

  @Test
  void boundedResponseTimeAnswers503OnTimeAndSilencesLateWrites() throws Exception {
    CountDownLatch appIn = new CountDownLatch(1);
    CountDownLatch appGo = new CountDownLatch(1);
    CountDownLatch appDone = new CountDownLatch(1);
    WeirFilter filter = WeirFilter.builder().boundedResponseTime(true)
        .shedder(LoadShedder.builder().requestTimeout(Duration.ofMillis(500))
            .rejector(Rejectors::none).limit(() -> Limits.fixed(4))).build();
    try (TestServer s = TestServer.with(filter)
        .servlet("/slow", servlet((req, res) -> {
          res.setHeader("X-App", "early");
          res.getWriter().print("partial ");
          appIn.countDown();
          appGo.await(20, TimeUnit.SECONDS);
          res.setStatus(200);
          res.setHeader("X-App", "late");
          res.getWriter().print("late write");
          res.getWriter().flush();
          res.flushBuffer();
          appDone.countDown();
        }))
        .servlet("/fast", servlet((req, res) -> {
          res.setStatus(201);
          res.setHeader("X-App", "fast");
          res.setContentType("text/plain;charset=utf-8");
          res.getWriter().print("fast ✓");
        })).start()) {
      HttpResponse<String> fast = get(s, "/fast");
      assertEquals(201, fast.statusCode());
      assertEquals("fast ✓", fast.body());
      assertEquals("fast", fast.headers().firstValue("X-App").orElse(null));

      long start = System.nanoTime();
      HttpResponse<String> slow = get(s, "/slow");
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertEquals(503, slow.statusCode());
      assertEquals("Service unavailable: the request took too long\n", slow.body());
      assertEquals("deadline", slow.headers().firstValue("X-Weir-Outcome").orElse(null));
      assertEquals("1", slow.headers().firstValue("Retry-After").orElse(null));
      assertFalse(slow.headers().firstValue("X-App").isPresent());
      assertTrue(tookMs >= 450 && tookMs < 5_000, "answered after " + tookMs + "ms");
      assertTrue(appIn.getCount() == 0 && appDone.getCount() == 1, "app still working");
      LoadShedder shedder = filter.shedders().get("GET /slow");
      await(() -> shedder.inflight() == 1, WAIT,
          () -> "the permit is held while the app's thread is busy: " + shedder.inflight());

      appGo.countDown();
      assertTrue(appDone.await(10, TimeUnit.SECONDS));
      assertDrained(filter);
      Snapshot snap = shedder.snapshot();
      assertEquals(1, snap.total(Snapshot.Counter.DROPPED), snap.toString());
      assertEquals(1, snap.total(Snapshot.Counter.DEADLINE_MISSED), snap.toString());
      // Nothing the app wrote late reached the wire: the connection serves the next request.
      for (int i = 0; i < 3; i++) {
        HttpResponse<String> again = get(s, "/fast");
        assertEquals(201, again.statusCode());
        assertEquals("fast ✓", again.body());
      }
      assertDrained(filter);
    }
  }

  @Test
  void boundedModeDeliversErrorsRedirectsAndCookiesIntact() throws Exception {
    WeirFilter filter = WeirFilter.builder().boundedResponseTime(true).build();
    try (TestServer s = TestServer.with(filter)
        .servlet("/missing", servlet((req, res) -> res.sendError(404, "no such thing")))
        .servlet("/moved", servlet((req, res) -> res.sendRedirect("/elsewhere")))
        .servlet("/cookie", servlet((req, res) -> {
          res.addCookie(new jakarta.servlet.http.Cookie("k", "v"));
          res.addHeader("X-Multi", "a");
          res.addHeader("X-Multi", "b");
          res.getOutputStream().write("bytes".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }))
        .servlet("/boom", servlet((req, res) -> {
          res.getWriter().print("half an answer");
          throw new IllegalStateException("boom");
        })).start()) {
      assertEquals(404, get(s, "/missing").statusCode());
      HttpResponse<String> moved = get(s, "/moved");
      assertEquals(302, moved.statusCode());
      assertTrue(moved.headers().firstValue("Location").orElse("").endsWith("/elsewhere"));
      HttpResponse<String> cookie = get(s, "/cookie");
      assertEquals("bytes", cookie.body());
      assertEquals(List.of("a", "b"), cookie.headers().allValues("X-Multi"));
      assertTrue(cookie.headers().firstValue("Set-Cookie").orElse("").startsWith("k=v"));
      HttpResponse<String> boom = get(s, "/boom");
      assertEquals(500, boom.statusCode());
      assertFalse(boom.body().contains("half an answer"), boom.body());
      assertDrained(filter);
      assertEquals(1, filter.snapshots().get("GET /boom").total(Snapshot.Counter.FAILED));
    }
  }

  /**
   * Text from getWriter() with no charset named: bounded mode encodes it, and names its charset,
   * as the container does (Jetty: UTF-8 unnamed for JSON, its default named for text/plain).
   */
  @Test
  void boundedModeEncodesWriterTextAsTheContainerDoes() throws Exception {
    String json = "{\"name\":\"Zoë 日本\"}";
    String[] types = {"application/json", "text/plain", "text/html", "none"};
    List<String> plain = new ArrayList<>();
    for (boolean bounded : new boolean[] {false, true}) {
      WeirFilter filter = WeirFilter.builder().boundedResponseTime(bounded).build();
      try (TestServer s = TestServer.with(filter).servlet("/text", servlet((req, res) -> {
        String type = req.getParameter("type");
        if (!type.equals("none")) {
          res.setContentType(type);
        }
        res.getWriter().print(json);
      })).start()) {
        for (int i = 0; i < types.length; i++) {
          HttpResponse<byte[]> r = client.send(HttpRequest.newBuilder(
              s.uri("/text?type=" + types[i])).timeout(Duration.ofSeconds(20)).build(),
              HttpResponse.BodyHandlers.ofByteArray());
          assertEquals(200, r.statusCode(), types[i]);
          String seen = r.headers().firstValue("Content-Type").orElse("-") + " "
              + java.util.HexFormat.of().formatHex(r.body());
          if (!bounded) {
            plain.add(seen);
          } else {
            assertEquals(plain.get(i), seen, types[i]);
          }
          if (i == 0) {
            assertEquals(json, new String(r.body(), java.nio.charset.StandardCharsets.UTF_8));
            assertEquals("application/json", r.headers().firstValue("Content-Type").orElse(null));
          }
        }
        assertDrained(filter);
      }
    }
  }

  /**
   * The container's setDateHeader takes any long; in bounded mode a date past what an HTTP date
   * can print is clamped to the nearest printable one, not a 500.
   */
  @Test
  void boundedModeAcceptsAnyDateHeader() throws Exception {
    WeirFilter filter = WeirFilter.builder().boundedResponseTime(true).build();
    try (TestServer s = TestServer.with(filter).servlet("/dated", servlet((req, res) -> {
      res.setDateHeader("Expires", Long.MAX_VALUE);
      res.addDateHeader("X-Since", Long.MIN_VALUE);
      res.getWriter().print("ok");
    })).start()) {
      HttpResponse<String> r = get(s, "/dated");
      assertEquals(200, r.statusCode(), r.body());
      assertEquals("ok", r.body());
      java.time.format.DateTimeFormatter http =
          java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME;
      assertEquals(java.time.Instant.parse("9999-12-31T23:59:59Z"), java.time.Instant.from(
          http.parse(r.headers().firstValue("Expires").orElse(""))));
      assertEquals(java.time.Instant.parse("0001-01-01T00:00:00Z"), java.time.Instant.from(
          http.parse(r.headers().firstValue("X-Since").orElse(""))));
      assertDrained(filter);
      assertEquals(1, filter.snapshots().get("GET /dated").total(Snapshot.Counter.SUCCEEDED));
    }
  }

  @Test
  void servletsWithoutAsyncSupportWaitInPlaceInPriorityOrder() throws Exception {
    CountDownLatch firstIn = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    List<String> ran = Collections.synchronizedList(new ArrayList<>());
    WeirFilter filter = WeirFilter.builder().shedder(Support.oneAtATime()
        .requestTimeout(Duration.ofSeconds(30))).build();
    try (TestServer s = TestServer.with(filter).servletsAsyncSupported(false)
        .servlet("/sync", servlet((req, res) -> {
          ran.add(req.getHeader("X-Weir-Tier"));
          if ("first".equals(req.getHeader("X-Test"))) {
            firstIn.countDown();
            releaseFirst.await(20, TimeUnit.SECONDS);
          }
          res.getWriter().print("ok");
        })).start()) {
      CompletableFuture<HttpResponse<String>> first = send(s, "/sync", "X-Weir-Tier", "5",
          "X-Test", "first");
      assertTrue(firstIn.await(10, TimeUnit.SECONDS));
      LoadShedder shedder = filter.shedders().get("GET /sync");
      CompletableFuture<HttpResponse<String>> low = send(s, "/sync", "X-Weir-Tier", "4");
      await(() -> shedder.queued() == 1, WAIT, () -> "not queued");
      CompletableFuture<HttpResponse<String>> high = send(s, "/sync", "X-Weir-Tier", "1");
      await(() -> shedder.queued() == 2, WAIT, () -> "not queued");
      releaseFirst.countDown();
      for (CompletableFuture<HttpResponse<String>> f : List.of(first, low, high)) {
        assertEquals(200, f.get(20, TimeUnit.SECONDS).statusCode());
      }
      assertEquals(List.of("5", "1", "4"), ran);
      assertDrained(filter);
    }
  }

  /**
   * A request an earlier filter will not let suspend (its wrapper's startAsync() throws though
   * async is supported) waits in place, as one whose servlet is not async-supported does, and is
   * served once a permit frees.
   */
  @Test
  void requestsThatCannotSuspendWaitInPlace() throws Exception {
    CountDownLatch firstIn = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    WeirFilter weir = WeirFilter.builder().shedder(Support.oneAtATime()
        .requestTimeout(Duration.ofSeconds(30)).queueTimeout(Duration.ofSeconds(20))).build();
    jakarta.servlet.Filter refusesAsync = (req, res, chain) -> weir.doFilter(
        new jakarta.servlet.http.HttpServletRequestWrapper(
            (jakarta.servlet.http.HttpServletRequest) req) {
          @Override
          public jakarta.servlet.AsyncContext startAsync() {
            throw new IllegalStateException("this filter's requests do not suspend");
          }
        }, res, chain);
    try (TestServer s = TestServer.with(refusesAsync).servlet("/work", servlet((req, res) -> {
      if (req.getHeader("X-Test") != null) {
        firstIn.countDown();
        releaseFirst.await(20, TimeUnit.SECONDS);
      }
      res.getWriter().print(req.getDispatcherType());
    })).start()) {
      CompletableFuture<HttpResponse<String>> first = send(s, "/work", "X-Test", "1");
      assertTrue(firstIn.await(10, TimeUnit.SECONDS));
      LoadShedder shedder = weir.shedders().get("GET /work");
      CompletableFuture<HttpResponse<String>> queued = send(s, "/work");
      await(() -> shedder.queued() == 1 || queued.isDone(), WAIT, () -> "not queued");
      releaseFirst.countDown();
      assertEquals(200, first.get(20, TimeUnit.SECONDS).statusCode());
      HttpResponse<String> r = queued.get(20, TimeUnit.SECONDS);
      assertEquals(200, r.statusCode(), r.headers().firstValue("X-Weir-Outcome").orElse(""));
      assertEquals("REQUEST", r.body()); // on the thread that waited, not in an async dispatch
      assertDrained(weir);
      assertEquals(2, shedder.snapshot().total(Snapshot.Counter.SUCCEEDED));
      assertEquals(0, shedder.snapshot().total(Snapshot.Counter.CANCELLED));
    }
  }

  @Test
  void metersArePublishedPerRoute() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    WeirFilter filter = WeirFilter.builder().meterRegistry(registry).build();
    try (TestServer s = TestServer.with(filter)
        .servlet("/m", servlet((req, res) -> res.getWriter().print("ok"))).start()) {
      assertEquals(200, get(s, "/m", "X-Weir-Tier", "2").statusCode());
      assertNotNull(registry.find("weir.inflight").tag("shedder", "GET /m").gauge());
      assertEquals(1.0, registry.find("weir.requests").tags("shedder", "GET /m", "tier", "2",
          "outcome", "admitted").functionCounter().count());
    }
  }

  @Test
  void metersCarryTheFiltersTagsAndGoWhenItIsDestroyed() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    WeirFilter filter = WeirFilter.builder()
        .meterRegistry(registry, io.micrometer.core.instrument.Tags.of("app", "orders")).build();
    try (TestServer s = TestServer.with(filter)
        .servlet("/m", servlet((req, res) -> res.getWriter().print("ok"))).start()) {
      assertEquals(200, get(s, "/m", "X-Weir-Tier", "2").statusCode());
      assertEquals(1.0, registry.find("weir.requests").tags("shedder", "GET /m", "tier", "2",
          "outcome", "admitted", "app", "orders").functionCounter().count());
    }
    assertEquals(0, registry.getMeters().size(), "a destroyed filter's meters are removed");
  }

  @Test
  void aSecondFilterOnOneRegistryNeedsTagsOfItsOwn() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    WeirFilter one = WeirFilter.builder().meterRegistry(registry).build();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> WeirFilter.builder().meterRegistry(registry).build());
    assertTrue(e.getMessage().startsWith("meterRegistry"), e.getMessage());
    WeirFilter two = WeirFilter.builder()
        .meterRegistry(registry, io.micrometer.core.instrument.Tags.of("app", "two")).build();
    try (TestServer s = TestServer.with(two)
        .servlet("/m", servlet((req, res) -> res.getWriter().print("ok"))).start()) {
      assertEquals(200, get(s, "/m", "X-Weir-Tier", "2").statusCode());
      one.destroy();
      assertEquals(1.0, registry.find("weir.requests").tags("shedder", "GET /m", "tier", "2",
          "outcome", "admitted", "app", "two").functionCounter().count(),
          "destroying the untagged filter leaves the tagged one's meters");
      WeirFilter again = WeirFilter.builder().meterRegistry(registry).build();
      again.destroy(); // the untagged filter's place is free again once it is destroyed
    }
  }

  @Test
  void shedderCountIsBoundedAndRouteKeysAreConfigurable() throws Exception {
    WeirFilter filter = WeirFilter.builder().maxShedders(2)
        .routeKey(r -> "x-fail".equals(r.getHeader("X-Route")) ? null : r.getRequestURI())
        .build();
    try (TestServer s = TestServer.with(filter)
        .servlet("/*", servlet((req, res) -> res.getWriter().print("ok"))).start()) {
      for (String path : new String[] {"/a", "/b", "/c", "/d", "/a"}) {
        assertEquals(200, get(s, path).statusCode());
      }
      assertEquals(200, get(s, "/e", "X-Route", "x-fail").statusCode());
      assertEquals(java.util.Set.of("/a", "/b", WeirFilter.OVERFLOW_ROUTE),
          filter.shedders().keySet());
      assertEquals(2, filter.shedders().get("/a").snapshot().total(Snapshot.Counter.ADMITTED));
      assertEquals(3, filter.shedders().get(WeirFilter.OVERFLOW_ROUTE).snapshot()
          .total(Snapshot.Counter.ADMITTED));
      assertDrained(filter);
    }
  }

  /**
   * Many concurrent requests of mixed tiers against a tiny limit and queue, half of them to an
   * async endpoint: every request gets exactly one answer among 200, 429 and 503, the counters
   * add up, and nothing stays held or queued.
   */
  @Test
  void concurrentMixedLoadGetsOneAnswerEachAndDrains() throws Exception {
    java.util.concurrent.ScheduledExecutorService later =
        java.util.concurrent.Executors.newScheduledThreadPool(2);
    WeirFilter filter = WeirFilter.builder().singleShedder().shedder(LoadShedder.builder()
        .limit(() -> Limits.fixed(2)).rejector(Rejectors::none).queueCapacity(8)
        .requestTimeout(Duration.ofSeconds(3)).queueTimeout(Duration.ofMillis(150))).build();
    try (TestServer s = TestServer.with(filter)
        .servlet("/sync", servlet((req, res) -> {
          Thread.sleep(2); // the work being protected, not synchronisation
          res.getWriter().print("ok");
        }))
        .servlet("/async", servlet((req, res) -> {
          jakarta.servlet.AsyncContext ac = req.startAsync();
          later.schedule(() -> {
            try {
              ac.getResponse().getWriter().print("ok");
            } catch (java.io.IOException e) {
              throw new java.io.UncheckedIOException(e);
            } finally {
              ac.complete();
            }
          }, 2, TimeUnit.MILLISECONDS);
        })).start()) {
      int n = 400;
      List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
      java.util.Random random = new java.util.Random(42);
      long start = System.nanoTime();
      for (int i = 0; i < n; i++) {
        all.add(send(s, i % 2 == 0 ? "/sync" : "/async",
            "X-Weir-Tier", Integer.toString(random.nextInt(Priority.TIERS))));
      }
      java.util.Map<Integer, Integer> byStatus = new java.util.TreeMap<>();
      for (CompletableFuture<HttpResponse<String>> f : all) {
        byStatus.merge(f.get(30, TimeUnit.SECONDS).statusCode(), 1, Integer::sum);
      }
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      System.out.println("concurrentMixedLoad: " + n + " requests in " + tookMs + "ms: "
          + byStatus + " " + filter.snapshots().get("all"));
      assertTrue(java.util.Set.of(200, 429, 503).containsAll(byStatus.keySet()), byStatus.toString());
      assertEquals(n, byStatus.values().stream().mapToInt(Integer::intValue).sum());
      assertTrue(byStatus.getOrDefault(200, 0) > 0, byStatus.toString());
      assertDrained(filter);
      Snapshot snap = filter.snapshots().get("all");
      assertEquals(byStatus.getOrDefault(200, 0), (int) snap.total(Snapshot.Counter.SUCCEEDED));
      assertEquals(byStatus.getOrDefault(429, 0), (int) snap.total(Snapshot.Counter.QUEUE_FULL));
      assertEquals(byStatus.getOrDefault(503, 0), (int) snap.total(Snapshot.Counter.QUEUE_TIMEOUT));
      assertEquals(snap.total(Snapshot.Counter.ADMITTED), snap.total(Snapshot.Counter.SUCCEEDED));
      long[] admitted = new long[Priority.TIERS];
      for (int t = 0; t < Priority.TIERS; t++) {
        admitted[t] = snap.count(Snapshot.Counter.ADMITTED, t);
      }
      System.out.println("admitted by tier: " + java.util.Arrays.toString(admitted));
      // Under contention the queue favours the important: tier 0 beats tier 5 by far.
      assertTrue(admitted[0] > 2 * admitted[5], java.util.Arrays.toString(admitted));
    } finally {
      later.shutdownNow();
    }
  }
}
