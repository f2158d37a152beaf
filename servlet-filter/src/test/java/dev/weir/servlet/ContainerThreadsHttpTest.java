package dev.weir.servlet;

import static dev.weir.servlet.Support.servlet;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.LoadShedder;
import dev.weir.control.Limits;
import dev.weir.http.ServerThreads;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.Test;

/**
 * A route whose requests run on the container's threads from start to finish has its limit capped
 * at what those threads can run, leaving a sixteenth of the pool (at least 4) to the container:
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
      assertTrue(expected <= pool.getMaxAvailableThreads() - 4,
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
}
