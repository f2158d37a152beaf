package dev.weir.servlet;

import static dev.weir.servlet.Support.servlet;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.LoadShedder;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import dev.weir.http.ServerThreads;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.Test;

/**
 * A route whose requests run on the container's threads from start to finish has its limit capped
 * at what those threads can run, leaving a sixteenth of the pool (at least 2) to the container:
 * past that, admitted requests would wait for a thread in Jetty's queue, where the filter neither
 * sees nor orders them, and a limit above the threads would never bind. A route whose application
 * answers after its dispatch returned holds no thread while it runs, and stays uncapped. A limit of
 * the user's own choosing is capped all the same.
 */
class ContainerThreadsHttpTest {
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private static int get(TestServer s, String path) throws Exception {
    return CLIENT.send(HttpRequest.newBuilder(s.uri(path)).build(),
        HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  @Test
  void aSynchronousRouteIsCappedAtWhatTheContainersThreadsRunAndAnAsyncOneIsNot()
      throws Exception {
    // The async servlet answers only once the request's first dispatch has returned through every
    // filter: the outer filter, ahead of Weir's, opens the latch.
    CountDownLatch dispatchReturned = new CountDownLatch(1);
    Filter outer = (req, res, chain) -> {
      chain.doFilter(req, res);
      if (((HttpServletRequest) req).getRequestURI().equals("/async")) {
        dispatchReturned.countDown();
      }
    };
    try (TestServer s = TestServer.withClass(Map.of())
        .maxThreads(40)
        .outerFilter(outer)
        .servlet("/sync", servlet((req, res) -> res.getWriter().print("ok")))
        .servlet("/async", servlet((req, res) -> {
          AsyncContext ac = req.startAsync();
          ac.start(() -> {
            try {
              if (!dispatchReturned.await(10, TimeUnit.SECONDS)) {
                throw new AssertionError("the dispatch did not return");
              }
              ac.getResponse().getWriter().print("ok");
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            ac.complete();
          });
        }))
        .start()) {
      assertEquals(200, get(s, "/sync"));
      assertEquals(200, get(s, "/async"));
      QueuedThreadPool pool = (QueuedThreadPool) s.server.getThreadPool();
      int expected = ServerThreads.admittable(pool.getMaxAvailableThreads());
      assertTrue(expected <= pool.getMaxAvailableThreads() - 2,
          "the cap leaves threads to the container: " + expected);
      Map<String, LoadShedder> routes = s.filter().shedders();
      LoadShedder sync = routes.get("GET /sync");
      // Set before the dispatch returns; Jetty commits the response after it, but the container
      // may flush earlier.
      Support.await(() -> sync.concurrencyCap() == expected, Duration.ofSeconds(5),
          () -> "cap " + sync.concurrencyCap() + ", expected " + expected);
      // The async route's dispatch returned before its response was written: its decision is made.
      assertEquals(Integer.MAX_VALUE, routes.get("GET /async").concurrencyCap());
    }
  }

  @Test
  void aSynchronousRouteInBoundedModeIsCappedToo() throws Exception {
    WeirFilter filter = WeirFilter.builder().boundedResponseTime(true).build();
    try (TestServer s = TestServer.with(filter)
        .maxThreads(40)
        .servlet("/sync", servlet((req, res) -> res.getWriter().print("ok")))
        .start()) {
      assertEquals(200, get(s, "/sync"));
      QueuedThreadPool pool = (QueuedThreadPool) s.server.getThreadPool();
      int expected = ServerThreads.admittable(pool.getMaxAvailableThreads());
      LoadShedder route = filter.shedders().get("GET /sync");
      // The bounded run answers the client before its dispatch returns, where the cap is set.
      Support.await(() -> route.concurrencyCap() == expected, Duration.ofSeconds(5),
          () -> "cap " + route.concurrencyCap() + ", expected " + expected);
    }
  }

  @Test
  void aFixedLimitAboveTheThreadsIsCappedToo() throws Exception {
    WeirFilter filter = WeirFilter.builder()
        .shedder(LoadShedder.builder().limit(() -> Limits.fixed(500)))
        .build();
    try (TestServer s = TestServer.with(filter)
        .maxThreads(40)
        .servlet("/sync", servlet((req, res) -> res.getWriter().print("ok")))
        .start()) {
      assertEquals(200, get(s, "/sync"));
      LoadShedder route = filter.shedders().get("GET /sync");
      Support.await(() -> route.concurrencyCap() < 40, Duration.ofSeconds(5),
          () -> "cap " + route.concurrencyCap());
      int cap = route.concurrencyCap();
      Support.await(() -> route.limit() == cap, Duration.ofSeconds(5),
          () -> "limit " + route.limit() + ", cap " + cap);
    }
  }

  /**
   * Two synchronous routes in front of one pool: each alone could take every thread, so together,
   * each under its own cap, they would hold more threads than the pool has and neither limit would
   * bind. They share one budget instead: the second route's limit is what the first leaves of it,
   * and its excess waits in its own queue, holding no thread.
   */
  @Test
  void twoSynchronousRoutesShareTheThreads() throws Exception {
    WeirFilter filter = WeirFilter.builder()
        .shedder(LoadShedder.builder().limit(() -> Limits.fixed(500)).rejector(Rejectors::none)
            .requestTimeout(Duration.ofSeconds(60)))
        .build();
    CountDownLatch release = new CountDownLatch(1);
    HttpServlet holding = servlet((req, res) -> {
      if (req.getParameter("hold") != null && !release.await(30, TimeUnit.SECONDS)) {
        throw new AssertionError("never released");
      }
      res.getWriter().print("ok");
    });
    try (TestServer s = TestServer.with(filter)
        .maxThreads(40)
        .servlet("/a", holding)
        .servlet("/b", holding)
        .start()) {
      assertEquals(200, get(s, "/a"));
      assertEquals(200, get(s, "/b"));
      LoadShedder a = filter.shedders().get("GET /a");
      LoadShedder b = filter.shedders().get("GET /b");
      Support.await(() -> a.concurrencyBudget() != null
              && a.concurrencyBudget() == b.concurrencyBudget(), Duration.ofSeconds(5),
          () -> "budgets " + a.concurrencyBudget() + ", " + b.concurrencyBudget());
      QueuedThreadPool pool = (QueuedThreadPool) s.server.getThreadPool();
      int total = a.concurrencyBudget().threads();
      assertEquals(ServerThreads.admittable(pool.getMaxAvailableThreads()), total);
      Support.await(() -> a.limit() == total, Duration.ofSeconds(5), () -> "limit " + a.limit());

      List<CompletableFuture<HttpResponse<Void>>> answers = new ArrayList<>();
      int onA = total / 2;
      for (int i = 0; i < onA; i++) {
        answers.add(getAsync(s, "/a?hold"));
      }
      Support.await(() -> a.inflight() == onA, Duration.ofSeconds(10),
          () -> "route a holds " + a.inflight());
      int left = total - onA;
      Support.await(() -> b.limit() == left, Duration.ofSeconds(5),
          () -> "route b's limit " + b.limit() + ", expected " + left);
      for (int i = 0; i < left + 5; i++) {
        answers.add(getAsync(s, "/b?hold"));
      }
      Support.await(() -> b.inflight() == left && b.queued() == 5, Duration.ofSeconds(10),
          () -> "route b holds " + b.inflight() + ", queued " + b.queued());
      assertTrue(a.inflight() + b.inflight() <= pool.getMaxAvailableThreads(),
          a.inflight() + " + " + b.inflight());

      release.countDown();
      for (CompletableFuture<HttpResponse<Void>> answer : answers) {
        assertEquals(200, answer.get(30, TimeUnit.SECONDS).statusCode());
      }
    }
  }

  /**
   * A route that answers some requests during their dispatch (an invalid request, say) and the
   * rest asynchronously: capped after the first kind, it is uncapped by the second for good, since
   * most of its requests hold no thread while they run.
   */
  @Test
  void aRouteThatAlsoAnswersAsynchronouslyIsNotCapped() throws Exception {
    AtomicInteger returned = new AtomicInteger();
    Filter outer = (req, res, chain) -> {
      chain.doFilter(req, res);
      returned.incrementAndGet(); // after Weir's filter has seen the dispatch return
    };
    try (TestServer s = TestServer.withClass(Map.of())
        .maxThreads(40)
        .outerFilter(outer)
        .servlet("/mixed", servlet((req, res) -> {
          if (req.getParameter("now") != null) {
            res.setStatus(400);
            return;
          }
          int before = returned.get();
          AsyncContext ac = req.startAsync();
          ac.start(() -> {
            // Completes only once this request's dispatch has returned through every filter.
            Support.await(() -> returned.get() > before, Duration.ofSeconds(10),
                () -> "the dispatch did not return");
            ((HttpServletResponse) ac.getResponse()).setStatus(200);
            ac.complete();
          });
        }))
        .start()) {
      assertEquals(400, get(s, "/mixed?now"));
      LoadShedder route = s.filter().shedders().get("GET /mixed");
      Support.await(() -> returned.get() == 1, Duration.ofSeconds(5), () -> "dispatches");
      assertNotNull(route.concurrencyBudget(), "answered during its dispatch: capped");
      assertEquals(200, get(s, "/mixed"));
      Support.await(() -> returned.get() == 2, Duration.ofSeconds(5), () -> "dispatches");
      assertNull(route.concurrencyBudget(), "answered asynchronously: uncapped");
      assertEquals(400, get(s, "/mixed?now"));
      Support.await(() -> returned.get() == 3, Duration.ofSeconds(5), () -> "dispatches");
      assertNull(route.concurrencyBudget(), "and not capped again");
    }
  }

  private static CompletableFuture<HttpResponse<Void>> getAsync(TestServer s, String path) {
    return CLIENT.sendAsync(HttpRequest.newBuilder(s.uri(path)).build(),
        HttpResponse.BodyHandlers.discarding());
  }
}
