package dev.weir.servlet;

import static dev.weir.servlet.Support.servlet;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.weir.LoadShedder;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import dev.weir.http.ServerThreads;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.Test;

/**
 * The filter in Jetty 12.1's ee11 environment (Servlet 6.1), whose requests are not the ee10
 * objects the filter's Jetty fast paths know: it must work through the Servlet API alone, and
 * still read the server's threads (from the servlet context's handler, in every environment).
 */
class Ee11HttpTest {
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  /** A Jetty 12 server of {@code threads} threads, one ee11 context, the filter and a servlet. */
  private static final class Ee11Server implements AutoCloseable {
    final QueuedThreadPool pool;
    final Server server;
    final ServerConnector connector;

    Ee11Server(WeirFilter filter, int threads, HttpServlet servlet) throws Exception {
      pool = new QueuedThreadPool(threads);
      server = new Server(pool);
      connector = new ServerConnector(server);
      connector.setHost("127.0.0.1");
      connector.setPort(0);
      server.addConnector(connector);
      ServletContextHandler context = new ServletContextHandler();
      context.setContextPath("/");
      FilterHolder weir = new FilterHolder(filter);
      weir.setAsyncSupported(true);
      context.addFilter(weir, "/*", EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
      ServletHolder app = new ServletHolder(servlet);
      app.setAsyncSupported(true);
      context.addServlet(app, "/app");
      server.setHandler(context);
      server.start();
    }

    CompletableFuture<HttpResponse<String>> get(String path, String tier) {
      URI uri = URI.create("http://127.0.0.1:" + connector.getLocalPort() + path);
      return CLIENT.sendAsync(HttpRequest.newBuilder(uri).header("X-Weir-Tier", tier).build(),
          HttpResponse.BodyHandlers.ofString());
    }

    @Override
    public void close() throws Exception {
      server.stop();
    }
  }

  @Test
  void aWaitingRequestIsDispatchedBackAndTheTierHeaderRead() throws Exception {
    WeirFilter filter = WeirFilter.builder().shedder(LoadShedder.builder()
        .limit(() -> Limits.fixed(1)).rejector(Rejectors::none).queueCapacity(4)
        .requestTimeout(Duration.ofSeconds(30)).queueTimeout(Duration.ofSeconds(20))).build();
    CountDownLatch release = new CountDownLatch(1);
    HttpServlet servlet = servlet((req, res) -> {
      if (req.getParameter("hold") != null && !release.await(30, TimeUnit.SECONDS)) {
        throw new AssertionError("never released");
      }
      res.getWriter().print(req.getAttribute(WeirFilter.PRIORITY_ATTRIBUTE));
    });
    try (Ee11Server s = new Ee11Server(filter, 40, servlet)) {
      assertEquals(200, s.get("/app", "1").get(10, TimeUnit.SECONDS).statusCode());
      LoadShedder route = filter.shedders().get("GET /app");
      CompletableFuture<HttpResponse<String>> first = s.get("/app?hold", "1");
      Support.await(() -> route.inflight() == 1, Duration.ofSeconds(10),
          () -> "in flight " + route.inflight());
      CompletableFuture<HttpResponse<String>> second = s.get("/app", "2:7");
      Support.await(() -> route.queued() == 1, Duration.ofSeconds(10),
          () -> "queued " + route.queued());
      release.countDown();
      assertEquals(200, first.get(10, TimeUnit.SECONDS).statusCode());
      HttpResponse<String> b = second.get(10, TimeUnit.SECONDS);
      assertEquals(200, b.statusCode());
      assertEquals(Integer.toString(2 * 128 + 7), b.body(), "tier 2, cohort 7, from the header");
    }
  }

  @Test
  void aSynchronousRouteIsCappedAtTheServersThreads() throws Exception {
    WeirFilter filter = WeirFilter.builder().build();
    try (Ee11Server s = new Ee11Server(filter, 40,
        servlet((req, res) -> res.getWriter().print("ok")))) {
      assertEquals(200, s.get("/app", "1").get(10, TimeUnit.SECONDS).statusCode());
      LoadShedder route = filter.shedders().get("GET /app");
      int expected = ServerThreads.admittable(s.pool.getMaxAvailableThreads());
      Support.await(() -> route.concurrencyCap() == expected, Duration.ofSeconds(5),
          () -> "cap " + route.concurrencyCap() + ", expected " + expected);
    }
  }
}
