package dev.weir.servlet;

import static dev.weir.servlet.Support.servlet;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.weir.LoadShedder;
import dev.weir.http.ServerThreads;
import io.undertow.Undertow;
import io.undertow.servlet.Servlets;
import io.undertow.servlet.api.DeploymentInfo;
import io.undertow.servlet.api.DeploymentManager;
import io.undertow.servlet.util.ImmediateInstanceFactory;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The filter on a third real Servlet 6.0 container, Undertow 2.3 (embedded), which holds to the
 * spec's async rules more strictly than Jetty and Tomcat (it refuses {@code setTimeout} once the
 * dispatch that started async has returned): a request that waits suspends and is dispatched back
 * when a permit frees; a queue timeout and an eviction are answered by the filter; and a
 * synchronous route's limit is capped at the worker threads, read from the request, or at the
 * deployment's own executor.
 */
class UndertowHttpTest {
  /** An embedded Undertow on 127.0.0.1, an ephemeral port, with one filter and one servlet. */
  private static final class Server implements ContainerCases.App {
    final DeploymentManager deployment;
    final Undertow undertow;

    /** With {@code workers} worker threads, and the deployment's own executor if not null. */
    Server(WeirFilter filter, int workers, ExecutorService executor, HttpServlet servlet)
        throws Exception {
      DeploymentInfo info = Servlets.deployment()
          .setClassLoader(UndertowHttpTest.class.getClassLoader())
          .setContextPath("/")
          .setDeploymentName("weir-" + System.nanoTime())
          .addServlet(Servlets.servlet("app", HttpServlet.class,
              new ImmediateInstanceFactory<>(servlet)).addMapping("/app").setAsyncSupported(true))
          .addFilter(Servlets.filter("weir", WeirFilter.class,
              new ImmediateInstanceFactory<>(filter)).setAsyncSupported(true))
          .addFilterUrlMapping("weir", "/*", DispatcherType.REQUEST)
          .addFilterUrlMapping("weir", "/*", DispatcherType.ASYNC);
      if (executor != null) {
        info.setExecutor(executor);
      }
      deployment = Servlets.defaultContainer().addDeployment(info);
      deployment.deploy();
      undertow = Undertow.builder().addHttpListener(0, "127.0.0.1").setWorkerThreads(workers)
          .setHandler(deployment.start()).build();
      undertow.start();
    }

    @Override
    public URI uri(String path) {
      InetSocketAddress a = (InetSocketAddress) undertow.getListenerInfo().get(0).getAddress();
      return URI.create("http://127.0.0.1:" + a.getPort() + path);
    }

    @Override
    public void close() throws Exception {
      try {
        undertow.stop();
      } finally {
        deployment.stop();
        deployment.undeploy();
      }
    }
  }

  @Test
  void aWaitingRequestSuspendsAndIsDispatchedBackWhenAPermitFrees() throws Exception {
    ContainerCases.aWaitingRequestIsDispatchedBackWhenAPermitFrees(
        (filter, servlet) -> new Server(filter, 16, null, servlet));
  }

  @Test
  void aQueueTimeoutAndAnEvictionAreAnsweredByTheFilter() throws Exception {
    ContainerCases.aQueueTimeoutAndAnEvictionAreAnsweredByTheFilter(
        (filter, servlet) -> new Server(filter, 16, null, servlet));
  }
  @Test
  void aRequestQueuedWhenTheFilterIsDestroyedIsAnswered() throws Exception {
    ContainerCases.aRequestQueuedWhenTheFilterIsDestroyedIsAnswered(
        (filter, servlet) -> new Server(filter, 16, null, servlet));
  }

  @Test
  void aSynchronousRouteIsCappedAtTheWorkerThreads() throws Exception {
    int[] read = new int[2];
    HttpServlet servlet = servlet((req, res) -> {
      read[0] = UndertowThreads.of(req);
      read[1] = UndertowThreads.of(new HttpServletRequestWrapper(req));
      res.getWriter().print("ok");
    });
    WeirFilter filter = WeirFilter.builder().build();
    try (Server s = new Server(filter, 24, null, servlet)) {
      assertEquals(200, s.get("/app", "1").get(10, TimeUnit.SECONDS).statusCode());
      assertEquals(24, read[0], "the worker's task threads");
      assertEquals(24, read[1], "through a wrapper");
      LoadShedder route = filter.shedders().get("GET /app");
      int expected = ServerThreads.admittable(24);
      Support.await(() -> route.concurrencyCap() == expected, Duration.ofSeconds(5),
          () -> "cap " + route.concurrencyCap() + ", expected " + expected);
    }
  }

  @Test
  void aDeploymentsOwnExecutorIsReadInsteadOfTheWorkers() throws Exception {
    int[] read = new int[1];
    HttpServlet servlet = servlet((req, res) -> {
      read[0] = UndertowThreads.of(req);
      res.getWriter().print("ok");
    });
    ThreadPoolExecutor own = new ThreadPoolExecutor(3, 11, 1, TimeUnit.MINUTES,
        new LinkedBlockingQueue<>());
    try (Server s = new Server(WeirFilter.builder().build(), 24, own, servlet)) {
      assertEquals(200, s.get("/app", "1").get(10, TimeUnit.SECONDS).statusCode());
      assertEquals(11, read[0]);
    } finally {
      own.shutdownNow();
    }
  }

  @Test
  void inBoundedModeTheDeadlineIsAnsweredWhileTheApplicationStillWorks() throws Exception {
    ContainerCases.inBoundedModeTheDeadlineIsAnsweredWhileTheApplicationStillWorks(
        (filter, servlet) -> new Server(filter, 16, null, servlet));
  }
}
