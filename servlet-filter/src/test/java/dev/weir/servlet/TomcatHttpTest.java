package dev.weir.servlet;

import static dev.weir.servlet.Support.servlet;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.weir.LoadShedder;
import dev.weir.http.ServerThreads;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.File;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.core.StandardThreadExecutor;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.junit.jupiter.api.Test;

/**
 * The filter on a second real Servlet 6.0 container, Tomcat 10.1 (embedded), through the
 * Servlet API alone: a request admitted at once runs; one that waits suspends, holding no
 * thread, and is dispatched back when a permit frees; one whose queue timeout passes gets its 503
 * from the filter; a less important waiter evicted for a more important request gets its 503
 * too; and a synchronous route's limit is capped at the connector's threads: read from its
 * executor (its own pool, a shared one, a JDK pool; with no MBean, as in Spring Boot), from the
 * {@code ThreadPool} MBean Tomcat registers, or given ({@link
 * WeirFilter.Builder#containerThreads}); an executor of no size leaves it uncapped.
 */
class TomcatHttpTest {
  /** An embedded Tomcat on 127.0.0.1, an ephemeral port, with one filter and one servlet. */
  private static final class Server implements ContainerCases.App {
    final Tomcat tomcat = new Tomcat();
    final Connector connector = new Connector();
    final File base;

    Server(WeirFilter filter, int maxThreads, HttpServlet servlet) throws Exception {
      this(filter, maxThreads, null, servlet);
    }

    /** With the connector's requests run on {@code executor}, if not null, instead of its own. */
    Server(WeirFilter filter, int maxThreads, Executor executor, HttpServlet servlet)
        throws Exception {
      // Under the build directory, which a clean removes whatever is left.
      base = Files.createTempDirectory(Files.createDirectories(Path.of("target")), "tomcat")
          .toFile();
      tomcat.setBaseDir(base.getAbsolutePath());
      connector.setPort(0);
      connector.setProperty("address", "127.0.0.1");
      connector.setProperty("maxThreads", Integer.toString(maxThreads));
      if (executor instanceof org.apache.catalina.Executor) {
        tomcat.getService().addExecutor((org.apache.catalina.Executor) executor);
      }
      if (executor != null) {
        connector.getProtocolHandler().setExecutor(executor);
      }
      tomcat.setConnector(connector);
      Context ctx = tomcat.addContext("", base.getAbsolutePath());
      Tomcat.addServlet(ctx, "app", servlet).setAsyncSupported(true);
      ctx.addServletMappingDecoded("/app", "app");
      FilterDef def = new FilterDef();
      def.setFilterName("weir");
      def.setFilter(filter);
      def.setAsyncSupported("true");
      ctx.addFilterDef(def);
      FilterMap map = new FilterMap();
      map.setFilterName("weir");
      map.addURLPattern("/*");
      map.setDispatcher("REQUEST");
      map.setDispatcher("ASYNC");
      ctx.addFilterMap(map);
      tomcat.start();
    }

    @Override
    public URI uri(String path) {
      return URI.create("http://127.0.0.1:" + connector.getLocalPort() + path);
    }

    @Override
    public void close() throws Exception {
      try {
        tomcat.stop();
        tomcat.destroy();
      } finally {
        try (Stream<Path> files = Files.walk(base.toPath())) {
          files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
      }
    }
  }

  /** Holds requests whose query says {@code hold}, for ever. */
  private static final CountDownLatch NEVER = new CountDownLatch(1);

  private static HttpServlet holding(CountDownLatch release) {
    return ContainerCases.holding(release);
  }

  @Test
  void aWaitingRequestSuspendsAndIsDispatchedBackWhenAPermitFrees() throws Exception {
    ContainerCases.aWaitingRequestIsDispatchedBackWhenAPermitFrees(
        (filter, servlet) -> new Server(filter, 20, servlet));
  }

  @Test
  void aQueueTimeoutAndAnEvictionAreAnsweredByTheFilter() throws Exception {
    ContainerCases.aQueueTimeoutAndAnEvictionAreAnsweredByTheFilter(
        (filter, servlet) -> new Server(filter, 20, servlet));
  }
  @Test
  void aRequestQueuedWhenTheFilterIsDestroyedIsAnswered() throws Exception {
    ContainerCases.aRequestQueuedWhenTheFilterIsDestroyedIsAnswered(
        (filter, servlet) -> new Server(filter, 20, servlet));
  }

  @Test
  void inBoundedModeTheDeadlineIsAnsweredWhileTheApplicationStillWorks() throws Exception {
    ContainerCases.inBoundedModeTheDeadlineIsAnsweredWhileTheApplicationStillWorks(
        (filter, servlet) -> new Server(filter, 20, servlet));
  }

  @Test
  void aSynchronousRouteIsCappedAtTheConnectorsThreads() throws Exception {
    WeirFilter unnamed = WeirFilter.builder().build();
    try (Server s = new Server(unnamed, 20, holding(NEVER))) {
      assertEquals(200, s.get("/app", "1").get(10, TimeUnit.SECONDS).statusCode());
      LoadShedder route = unnamed.shedders().get("GET /app");
      int expected = ServerThreads.admittable(20);
      Support.await(() -> route.concurrencyCap() == expected, Duration.ofSeconds(5),
          () -> "cap " + route.concurrencyCap() + ", expected " + expected
              + ": read from the connector's executor");
    }
    WeirFilter named = WeirFilter.builder().containerThreads(20).build();
    try (Server s = new Server(named, 20, holding(NEVER))) {
      assertEquals(200, s.get("/app", "1").get(10, TimeUnit.SECONDS).statusCode());
      LoadShedder route = named.shedders().get("GET /app");
      int expected = ServerThreads.admittable(20);
      Support.await(() -> route.concurrencyCap() == expected, Duration.ofSeconds(5),
          () -> "cap " + route.concurrencyCap() + ", expected " + expected);
    }
  }

  @Test
  void withoutTheConnectorsMBeanARouteIsStillCapped() throws Exception {
    // As in Spring Boot, whose embedded Tomcat registers no MBeans: this connector's is removed.
    WeirFilter filter = WeirFilter.builder().build();
    try (Server s = new Server(filter, 20, holding(NEVER))) {
      MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
      int removed = 0;
      for (ObjectName n : jmx.queryNames(new ObjectName("*:type=ThreadPool,*"), null)) {
        if (Integer.valueOf(s.connector.getLocalPort()).equals(jmx.getAttribute(n, "localPort"))) {
          jmx.unregisterMBean(n);
          removed++;
        }
      }
      assertEquals(1, removed, "the connector's ThreadPool MBean");
      assertEquals(200, s.get("/app", "1").get(10, TimeUnit.SECONDS).statusCode());
      LoadShedder route = filter.shedders().get("GET /app");
      int expected = ServerThreads.admittable(20);
      Support.await(() -> route.concurrencyCap() == expected, Duration.ofSeconds(5),
          () -> "cap " + route.concurrencyCap() + ", expected " + expected);
    }
  }

  /**
   * What the two reads find on the servlet's own request, and through a wrapper an earlier
   * filter put around it: {@code [connector, wrapped, mbean]}.
   */
  private static int[] threadsRead(int maxThreads, Executor executor) throws Exception {
    int[] read = new int[3];
    HttpServlet servlet = servlet((req, res) -> {
      read[0] = TomcatThreads.fromConnector(req);
      read[1] = TomcatThreads.fromConnector(new HttpServletRequestWrapper(req));
      read[2] = TomcatThreads.fromMBean(req);
      res.getWriter().print("ok");
    });
    try (Server s = new Server(WeirFilter.builder().build(), maxThreads, executor, servlet)) {
      assertEquals(200, s.get("/app", "1").get(10, TimeUnit.SECONDS).statusCode());
    }
    return read;
  }

  @Test
  void theConnectorsOwnPoolIsReadWithoutItsMBeanAndThroughAWrapper() throws Exception {
    int[] read = threadsRead(23, null);
    assertEquals(23, read[0], "from the connector");
    assertEquals(23, read[1], "through a wrapper");
    assertEquals(23, read[2], "from the MBean");
  }

  @Test
  void aSharedExecutorOrAJdkPoolIsReadFromTheConnector() throws Exception {
    StandardThreadExecutor shared = new StandardThreadExecutor();
    shared.setName("shared");
    shared.setMaxThreads(12);
    shared.setMinSpareThreads(2);
    int[] read = threadsRead(23, shared);
    assertEquals(12, read[0], "the shared <Executor>'s maxThreads");
    assertEquals(0, read[2], "the MBean of a connector on a shared executor reports no maximum");

    ThreadPoolExecutor jdk = new ThreadPoolExecutor(4, 9, 1, TimeUnit.MINUTES,
        new LinkedBlockingQueue<>());
    try {
      assertEquals(9, threadsRead(23, jdk)[0], "a ThreadPoolExecutor's maximum pool size");
    } finally {
      jdk.shutdownNow();
    }
  }

  @Test
  void anExecutorWithoutAMaximumLeavesTheRouteUncapped() throws Exception {
    // As Spring Boot's virtual threads are given to Tomcat: an executor that reports no size.
    Executor unsized = r -> new Thread(r, "unsized").start();
    assertEquals(0, threadsRead(23, unsized)[0]);

    WeirFilter filter = WeirFilter.builder().build();
    try (Server s = new Server(filter, 23, unsized, holding(NEVER))) {
      assertEquals(200, s.get("/app", "1").get(10, TimeUnit.SECONDS).statusCode());
      assertEquals(200, s.get("/app", "1").get(10, TimeUnit.SECONDS).statusCode());
      LoadShedder route = filter.shedders().get("GET /app");
      assertEquals(null, route.concurrencyBudget());
      assertEquals(Integer.MAX_VALUE, route.concurrencyCap());
    }
  }
}
