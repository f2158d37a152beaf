package dev.weir.servlet;

import static dev.weir.servlet.Support.servlet;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.LoadShedder;
import dev.weir.Snapshot;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import jakarta.servlet.http.HttpServlet;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * What the filter must do on every container, through the Servlet API alone, run by each
 * container's test (Tomcat, Undertow, Jetty's ee11) on its own server: a request that waits
 * suspends and is dispatched back when a permit frees; a queue timeout and an eviction are
 * answered by the filter; in bounded mode the deadline is answered while the application works.
 */
final class ContainerCases {
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  /** A container on 127.0.0.1 serving the filter and one servlet at {@code /app}. */
  interface App extends AutoCloseable {
    /** The URI of {@code path} on this server. */
    URI uri(String path);

    /** {@code GET path} with {@code X-Weir-Tier: tier}, sent asynchronously. */
    default CompletableFuture<HttpResponse<String>> get(String path, String tier) {
      return CLIENT.sendAsync(HttpRequest.newBuilder(uri(path)).header("X-Weir-Tier", tier)
          .build(), HttpResponse.BodyHandlers.ofString());
    }
  }

  /** Starts a container with {@code filter} in front of {@code servlet}. */
  @FunctionalInterface
  interface Apps {
    App start(WeirFilter filter, HttpServlet servlet) throws Exception;
  }

  private ContainerCases() {}

  /** One permit, no rejector, a queue of one: the next request waits, a third is evicted. */
  static WeirFilter.Builder limitOfOne(Duration queueTimeout) {
    return WeirFilter.builder().shedder(LoadShedder.builder().limit(() -> Limits.fixed(1))
        .rejector(Rejectors::none).queueCapacity(1).requestTimeout(Duration.ofSeconds(30))
        .queueTimeout(queueTimeout));
  }

  /**
   * Holds requests whose query says {@code hold} until {@code release}; answers the request's
   * packed priority, as the filter gives it to the application.
   */
  static HttpServlet holding(CountDownLatch release) {
    return servlet((req, res) -> {
      if (req.getParameter("hold") != null && !release.await(30, TimeUnit.SECONDS)) {
        throw new AssertionError("never released");
      }
      res.getWriter().print(req.getAttribute(WeirFilter.PRIORITY_ATTRIBUTE));
    });
  }

  /** One request answered, so that the route exists; its shedder. */
  private static LoadShedder warmed(App s, WeirFilter filter) throws Exception {
    assertEquals(200, s.get("/app", "1").get(10, TimeUnit.SECONDS).statusCode());
    return filter.shedders().get("GET /app");
  }

  /** A request that holds the route's one permit until the servlet's latch is released. */
  private static CompletableFuture<HttpResponse<String>> holdThePermit(App s, LoadShedder route) {
    CompletableFuture<HttpResponse<String>> holder = s.get("/app?hold", "1");
    Support.await(() -> route.inflight() == 1, Duration.ofSeconds(10),
        () -> "in flight " + route.inflight());
    return holder;
  }

  /** A request of {@code tier} that waits in the queue behind the held permit. */
  private static CompletableFuture<HttpResponse<String>> queue(App s, LoadShedder route,
      String tier) {
    CompletableFuture<HttpResponse<String>> waiter = s.get("/app", tier);
    Support.await(() -> route.queued() == 1, Duration.ofSeconds(10),
        () -> "queued " + route.queued());
    return waiter;
  }

  static void aWaitingRequestIsDispatchedBackWhenAPermitFrees(Apps apps) throws Exception {
    WeirFilter filter = limitOfOne(Duration.ofSeconds(20)).build();
    CountDownLatch release = new CountDownLatch(1);
    try (App s = apps.start(filter, holding(release))) {
      LoadShedder route = warmed(s, filter);
      CompletableFuture<HttpResponse<String>> first = holdThePermit(s, route);
      CompletableFuture<HttpResponse<String>> second = queue(s, route, "2:7");
      release.countDown();
      assertEquals(200, first.get(10, TimeUnit.SECONDS).statusCode());
      HttpResponse<String> b = second.get(10, TimeUnit.SECONDS);
      assertEquals(200, b.statusCode(), "the waiter, dispatched back: " + b.body());
      assertEquals(Integer.toString(2 * 128 + 7), b.body(), "tier 2, cohort 7, from the header");
      Support.await(() -> route.inflight() == 0, Duration.ofSeconds(5),
          () -> "in flight " + route.inflight());
      assertEquals(0, route.snapshot().total(Snapshot.Counter.DROPPED),
          "no permit dropped for want of a dispatch");
    }
  }

  static void aQueueTimeoutAndAnEvictionAreAnsweredByTheFilter(Apps apps) throws Exception {
    WeirFilter filter = limitOfOne(Duration.ofMillis(300)).build();
    CountDownLatch release = new CountDownLatch(1);
    try (App s = apps.start(filter, holding(release))) {
      LoadShedder route = warmed(s, filter);
      CompletableFuture<HttpResponse<String>> holder = holdThePermit(s, route);

      HttpResponse<String> late = s.get("/app", "1").get(10, TimeUnit.SECONDS);
      assertEquals(503, late.statusCode());
      assertEquals("queue-timeout", late.headers().firstValue("X-Weir-Outcome").orElse(null));

      CompletableFuture<HttpResponse<String>> batch = queue(s, route, "5");
      CompletableFuture<HttpResponse<String>> important = s.get("/app", "0");
      HttpResponse<String> evicted = batch.get(10, TimeUnit.SECONDS);
      assertTrue(evicted.statusCode() == 503 || evicted.statusCode() == 429,
          "evicted: " + evicted.statusCode());
      assertTrue(evicted.headers().firstValue("X-Weir-Outcome").isPresent());
      release.countDown();
      assertEquals(200, holder.get(10, TimeUnit.SECONDS).statusCode());
      assertEquals(200, important.get(10, TimeUnit.SECONDS).statusCode());
    }
  }

  /**
   * The filter destroyed while a request waits (a webapp undeployed under load): the waiter is
   * answered 503 {@code shutting-down} at once, and the request that holds the permit finishes.
   */
  static void aRequestQueuedWhenTheFilterIsDestroyedIsAnswered(Apps apps) throws Exception {
    WeirFilter filter = limitOfOne(Duration.ofSeconds(20)).build();
    CountDownLatch release = new CountDownLatch(1);
    try (App s = apps.start(filter, holding(release))) {
      LoadShedder route = warmed(s, filter);
      CompletableFuture<HttpResponse<String>> holder = holdThePermit(s, route);
      CompletableFuture<HttpResponse<String>> waiter = queue(s, route, "1");
      filter.destroy();
      HttpResponse<String> answered = waiter.get(10, TimeUnit.SECONDS);
      assertEquals(503, answered.statusCode());
      assertEquals("shutting-down",
          answered.headers().firstValue("X-Weir-Outcome").orElse(null));
      release.countDown();
      assertEquals(200, holder.get(10, TimeUnit.SECONDS).statusCode());
      Support.await(() -> route.inflight() == 0, Duration.ofSeconds(5),
          () -> "in flight " + route.inflight());
    }
  }

  static void inBoundedModeTheDeadlineIsAnsweredWhileTheApplicationStillWorks(Apps apps)
      throws Exception {
    WeirFilter filter = WeirFilter.builder().boundedResponseTime(true)
        .shedder(LoadShedder.builder().requestTimeout(Duration.ofMillis(500))).build();
    CountDownLatch appGo = new CountDownLatch(1);
    CountDownLatch appDone = new CountDownLatch(1);
    HttpServlet slow = servlet((req, res) -> {
      try {
        if (!appGo.await(30, TimeUnit.SECONDS)) {
          throw new AssertionError("never released");
        }
        res.setHeader("X-App", "late");
        res.getWriter().print("too late");
      } finally {
        appDone.countDown();
      }
    });
    try (App s = apps.start(filter, slow)) {
      HttpResponse<String> r = s.get("/app", "1").get(10, TimeUnit.SECONDS);
      assertEquals(503, r.statusCode());
      assertEquals("deadline", r.headers().firstValue("X-Weir-Outcome").orElse(null));
      assertTrue(r.headers().firstValue("X-App").isEmpty());
      assertEquals(1, appDone.getCount(), "the application still works");
      appGo.countDown();
      assertTrue(appDone.await(10, TimeUnit.SECONDS));
      LoadShedder route = filter.shedders().get("GET /app");
      Support.await(() -> route.inflight() == 0, Duration.ofSeconds(5),
          () -> "in flight " + route.inflight());
    }
  }
}
