package dev.weir.example.war;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.servlet.WeirFilter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import org.eclipse.jetty.ee10.webapp.WebAppContext;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.Test;

/**
 * The packaged webapp ({@code target/weir-example}, as the war plugin leaves it) deployed as a
 * standalone container deploys a WAR: on Jetty 12 ee10 through a {@code WebAppContext} and on
 * Tomcat 10.1 through {@code addWebapp}, each loading the filter from {@code WEB-INF/lib} in the
 * webapp's own class loader, which on Jetty hides the server's classes. There the filter must
 * still read the server's threads and cap the synchronous route below them, and once the webapp
 * stops, leave no thread of its own behind (its timer's would hold the webapp's class loader:
 * Tomcat names such a thread as a likely memory leak).
 */
class WarDeploymentIT {
  private static final Path WEBAPP = Path.of("target", "weir-example");
  private static final Pattern CAP =
      Pattern.compile("\"GET /work\":\\{[^}]*\"concurrencyCap\":(\\d+)");

  private final HttpClient client = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5)).build();

  @Test
  void onJettyTheFilterLoadsInTheWebappAndCapsTheRouteBelowTheThreads() throws Exception {
    Server server = new Server(); // Jetty's default pool: 200 threads
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    WebAppContext webapp = new WebAppContext(WEBAPP.toAbsolutePath().toString(), "/app");
    server.setHandler(webapp);
    server.start();
    try {
      ClassLoader loader = webapp.getClassLoader();
      assertNotSame(WeirFilter.class, loader.loadClass(WeirFilter.class.getName()),
          "the filter from WEB-INF/lib, not the test's class path");
      assertThrows(ClassNotFoundException.class,
          () -> loader.loadClass("org.eclipse.jetty.server.Server"), "Jetty hidden");
      assertCapped(connector.getLocalPort(), 200);
    } finally {
      server.stop();
    }
    assertNoTimerThreadOutlivesTheWebapp();
  }

  @Test
  void onTomcatTheFilterLoadsInTheWebappAndCapsTheRouteBelowTheThreads() throws Exception {
    Path base = Files.createTempDirectory(Files.createDirectories(Path.of("target")), "tomcat");
    Tomcat tomcat = new Tomcat(); // Tomcat's default connector: 200 threads
    tomcat.setBaseDir(base.toString());
    tomcat.getConnector().setPort(0);
    tomcat.getConnector().setProperty("address", "127.0.0.1");
    Context webapp = tomcat.addWebapp("/app", WEBAPP.toAbsolutePath().toString());
    // Tomcat's own leak checks, run as the webapp stops: a thread it started still running, a
    // thread-local whose key or value the webapp's class loader loaded (the JVM must open
    // java.lang to it: failsafe's argLine).
    List<String> leaks = new CopyOnWriteArrayList<>();
    Logger checks = Logger.getLogger("org.apache.catalina.loader.WebappClassLoaderBase");
    Handler record = new Handler() {
      @Override
      public void publish(LogRecord r) {
        String text = new java.text.MessageFormat(String.valueOf(r.getMessage()))
            .format(r.getParameters() == null ? new Object[0] : r.getParameters());
        if (text.contains("dev.weir") || text.contains("weir-timer")) {
          leaks.add(text);
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    checks.addHandler(record);
    tomcat.start();
    try {
      ClassLoader loader = webapp.getLoader().getClassLoader();
      assertNotSame(WeirFilter.class, loader.loadClass(WeirFilter.class.getName()),
          "the filter from WEB-INF/lib, not the test's class path");
      assertCapped(tomcat.getConnector().getLocalPort(), 200);
    } finally {
      tomcat.stop();
      tomcat.destroy();
      checks.removeHandler(record);
      try (Stream<Path> files = Files.walk(base)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    assertEquals(List.of(), leaks, "Tomcat's leak checks at the webapp's stop");
    assertNoTimerThreadOutlivesTheWebapp();
  }

  /**
   * The webapp's shedders are closed with it, and its timer, with nothing left pending, ends its
   * thread: polled with a deadline (the test's own class path starts no timer).
   */
  private static void assertNoTimerThreadOutlivesTheWebapp() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().equals("weir-timer") && t.isAlive())) {
      assertTrue(System.nanoTime() - deadline < 0, "weir-timer outlived the webapp");
      Thread.sleep(10); // polling for the end state, bounded
    }
  }

  /** One request to /app/work, then the route's cap from /app/weir/status: below the threads. */
  private void assertCapped(int port, int threads) throws Exception {
    HttpResponse<String> work = client.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + port + "/app/work")).timeout(Duration.ofSeconds(10))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, work.statusCode());
    assertEquals("ok", work.body());
    String status = client.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + port + "/app/weir/status"))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
    Matcher m = CAP.matcher(status);
    assertTrue(m.find(), "the route is capped at the server's threads: " + status);
    int cap = Integer.parseInt(m.group(1));
    assertTrue(cap > threads / 2 && cap < threads, "cap " + cap + " of " + threads + " threads");
  }
}
