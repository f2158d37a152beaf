package dev.weir.servlet;

import static dev.weir.servlet.Support.servlet;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.weir.LoadShedder;
import dev.weir.http.ServerThreads;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import java.net.URI;
import java.time.Duration;
import java.util.EnumSet;
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
 * objects the filter's Jetty fast paths know: it must work through the Servlet API alone ({@link
 * ContainerCases}, the tier read from its header), and still read the server's threads (from the
 * servlet context's handler, in every environment).
 */
class Ee11HttpTest {
  /** A Jetty 12 server of {@code threads} threads, one ee11 context, the filter and a servlet. */
  private static final class Ee11Server implements ContainerCases.App {
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

    @Override
    public URI uri(String path) {
      return URI.create("http://127.0.0.1:" + connector.getLocalPort() + path);
    }

    @Override
    public void close() throws Exception {
      server.stop();
    }
  }

  @Test
  void aWaitingRequestSuspendsAndIsDispatchedBackWhenAPermitFrees() throws Exception {
    ContainerCases.aWaitingRequestIsDispatchedBackWhenAPermitFrees(
        (filter, servlet) -> new Ee11Server(filter, 40, servlet));
  }

  @Test
  void aQueueTimeoutAndAnEvictionAreAnsweredByTheFilter() throws Exception {
    ContainerCases.aQueueTimeoutAndAnEvictionAreAnsweredByTheFilter(
        (filter, servlet) -> new Ee11Server(filter, 40, servlet));
  }
  @Test
  void aRequestQueuedWhenTheFilterIsDestroyedIsAnswered() throws Exception {
    ContainerCases.aRequestQueuedWhenTheFilterIsDestroyedIsAnswered(
        (filter, servlet) -> new Ee11Server(filter, 40, servlet));
  }

  @Test
  void inBoundedModeTheDeadlineIsAnsweredWhileTheApplicationStillWorks() throws Exception {
    ContainerCases.inBoundedModeTheDeadlineIsAnsweredWhileTheApplicationStillWorks(
        (filter, servlet) -> new Ee11Server(filter, 40, servlet));
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
