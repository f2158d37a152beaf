package dev.weir.examples;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.BindException;
import java.net.URI;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Locale;
import java.util.function.UnaryOperator;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A Jetty 12 (ee10) application whose endpoint {@code GET /work} makes one call to a {@link
 * Downstream} and answers {@code 200 ok}, whose {@code GET /compute} runs a fixed amount of CPU
 * work ({@link Compute}) and answers {@code 200 ok <hash>}, and whose {@code GET /hello} answers at
 * once; optionally protected by a servlet {@link Filter} on {@code /*}, so that every endpoint
 * passes the same guard.
 *
 * <p>The server has 200 threads, far more than the downstream has connections, as is usual: under
 * overload the extra threads do not refuse work, they pile up waiting for a connection, and the
 * requests behind them wait in Jetty's queue. That queue is what a load shedder removes.
 *
 * <p>Start with {@link #start}; {@link #close()} stops the server, interrupting requests still
 * waiting for the downstream.
 */
public final class ExampleServer implements AutoCloseable {
  /** Threads of the server: enough that an unprotected server queues rather than refuses. */
  public static final int THREADS = 200;
  /** The path of the endpoint that calls the downstream. */
  public static final String WORK_PATH = "/work";
  /**
   * The same work as {@link #WORK_PATH} on a second servlet mapping, so a route of its own: for
   * load split over two routes that share the server's threads.
   */
  public static final String SECOND_WORK_PATH = WORK_PATH + "/2";
  /** The path of the endpoint that runs a fixed amount of CPU work. */
  public static final String COMPUTE_PATH = "/compute";
  /** The path of an endpoint that answers at once, to measure per-request overheads. */
  public static final String HELLO_PATH = "/hello";

  private final Server server;
  private final URI workUri;

  private ExampleServer(Server server, URI workUri) {
    this.server = server;
    this.workUri = workUri;
  }

  /**
   * Starts a server on {@code 127.0.0.1} on a free port.
   *
   * @param filter the filter to install on {@code /*}, or {@code null} for an unprotected server
   */
  public static ExampleServer start(Downstream downstream, Filter filter) throws Exception {
    return start("127.0.0.1", 0, downstream, filter);
  }

  /**
   * Starts a server over {@code backends} on {@code 127.0.0.1} on a free port.
   *
   * @param filter the filter to install on {@code /*}, or {@code null} for an unprotected server
   */
  public static ExampleServer start(Backends backends, Filter filter) throws Exception {
    return start("127.0.0.1", 0, backends, filter, UnaryOperator.identity());
  }

  /**
   * Starts a server on {@code host:port} ({@code port} 0 for a free one); {@code host} is a name or
   * an IPv4 address.
   *
   * @param filter the filter to install on {@code /*}, or {@code null} for an unprotected server
   */
  public static ExampleServer start(String host, int port, Downstream downstream, Filter filter)
      throws Exception {
    return start(host, port, Backends.of(downstream), filter, UnaryOperator.identity());
  }

  /**
   * Starts a server on {@code 127.0.0.1} on a free port, with the application's handler wrapped by
   * {@code outer}, such as a {@code QoSHandler} to compare with.
   *
   * @param filter the filter to install on {@code /*}, or {@code null} for none
   * @param outer given the application's handler, returns the server's handler
   */
  public static ExampleServer start(Downstream downstream, Filter filter,
      UnaryOperator<Handler> outer) throws Exception {
    return start("127.0.0.1", 0, Backends.of(downstream), filter, outer);
  }

  /**
   * Starts a server over {@code backends} on {@code 127.0.0.1} on a free port, with the
   * application's handler wrapped by {@code outer}.
   *
   * @param filter the filter to install on {@code /*}, or {@code null} for none
   * @param outer given the application's handler, returns the server's handler
   */
  public static ExampleServer start(Backends backends, Filter filter,
      UnaryOperator<Handler> outer) throws Exception {
    return start("127.0.0.1", 0, backends, filter, outer);
  }

  private static ExampleServer start(String host, int port, Backends backends, Filter filter,
      UnaryOperator<Handler> outer) throws Exception {
    QueuedThreadPool threads = new QueuedThreadPool(THREADS, 8);
    threads.setName("example-server");
    Server server = new Server(threads);
    ServerConnector connector = new ServerConnector(server);
    connector.setHost(host);
    connector.setPort(port);
    // The JDK's default backlog of 50 would drop connection attempts in a burst of new
    // connections, which clients see as timeouts that have nothing to do with the application.
    connector.setAcceptQueueSize(1024);
    server.addConnector(connector);

    ServletContextHandler context = new ServletContextHandler("/");
    ServletHolder work = new ServletHolder("work", new WorkServlet(backends.downstream()));
    work.setAsyncSupported(true);
    context.addServlet(work, WORK_PATH);
    context.addServlet(work, SECOND_WORK_PATH);
    ServletHolder compute = new ServletHolder("compute", new ComputeServlet(backends.compute()));
    compute.setAsyncSupported(true);
    context.addServlet(compute, COMPUTE_PATH);
    ServletHolder hello = new ServletHolder("hello", new HelloServlet());
    hello.setAsyncSupported(true);
    context.addServlet(hello, HELLO_PATH);
    if (filter != null) {
      FilterHolder holder = new FilterHolder(filter);
      holder.setAsyncSupported(true);
      context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
    }
    Observability.install(context, filter); // /weir/status and /metrics
    server.setHandler(outer.apply(context));
    // No graceful stop: connectors close at once, and threads still waiting for the downstream
    // are interrupted within a second, so that a demo's next run starts on a quiet machine.
    server.setStopTimeout(0);
    threads.setStopTimeout(1000);
    try {
      server.start();
    } catch (Exception e) {
      server.stop();
      throw e;
    }
    URI uri = URI.create("http://" + host + ":" + connector.getLocalPort() + WORK_PATH);
    return new ExampleServer(server, uri);
  }

  /** The URI of the endpoint, such as {@code http://127.0.0.1:41234/work}. */
  public URI workUri() {
    return workUri;
  }

  /** The URI of the same work on a route of its own ({@link #SECOND_WORK_PATH}). */
  public URI secondWorkUri() {
    return workUri.resolve(SECOND_WORK_PATH);
  }

  /** The URI of the CPU-bound endpoint, such as {@code http://127.0.0.1:41234/compute}. */
  public URI computeUri() {
    return workUri.resolve(COMPUTE_PATH);
  }

  /** The URI of the endpoint that answers at once, such as {@code http://127.0.0.1:41234/hello}. */
  public URI helloUri() {
    return workUri.resolve(HELLO_PATH);
  }

  /** The port the server listens on. */
  public int port() {
    return workUri.getPort();
  }

  /**
   * Stops the server; requests still running are interrupted after a second.
   *
   * @throws IllegalStateException if Jetty fails to stop
   */
  @Override
  public void close() {
    try {
      server.stop();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      throw new IllegalStateException("could not stop the example server", e);
    }
  }

  static final String USAGE = String.join("\n",
      "Usage: bin/demo server [options]   (runs until Ctrl-C)",
      "  --port N          port on 127.0.0.1 (default 8080; 0 for a free one)",
      "  --unprotected     without the filter",
      "  --connections N   downstream connections (default 8)",
      "  --service-ms N    mean downstream service time (default 20)",
      "  --compute-rounds N  hash rounds of one GET /compute (default " + Compute.DEFAULT_ROUNDS
          + ", about 4 ms of CPU on a 2-core VM)",
      "  --seed N          seed of service times (default 42)",
      "  --help            this text");

  /**
   * Runs an example server on 127.0.0.1 until the process is stopped; see {@link #USAGE}.
   * Protected, it uses the zero-configuration filter, its meters on {@code /metrics} ({@link
   * Observability}).
   */
  public static void main(String[] args) throws Exception {
    Backends backends;
    Filter filter;
    int port;
    try {
      Args a = Args.parse(args, "port", "unprotected", "connections", "service-ms",
          "compute-rounds", "seed", "help");
      if (a.flag("help")) {
        System.out.println(USAGE);
        return;
      }
      port = a.intValue("port", 8080, 0, 65535);
      backends = new Backends(new Downstream(a.intValue("connections", 8, 1, 10_000),
          Duration.ofMillis(a.intValue("service-ms", 20, 1, 60_000)), a.longValue("seed", 42)),
          new Compute(a.intValue("compute-rounds", Compute.DEFAULT_ROUNDS, 1, 1_000_000_000)));
      filter = a.flag("unprotected") ? null : Observability.filter();
    } catch (IllegalArgumentException e) {
      System.err.println("server: " + e.getMessage());
      System.err.println(USAGE);
      System.exit(2);
      return;
    }
    ExampleServer server;
    try {
      server = start("127.0.0.1", port, backends, filter, UnaryOperator.identity());
    } catch (Exception e) {
      System.err.println("server: " + startFailure(e, "127.0.0.1", port));
      System.exit(1);
      return;
    }
    System.out.printf(Locale.ROOT, "Example server on %s (%s), downstream capacity %.0f req/s,"
        + " and %s (%d hash rounds a request); try: curl -H 'X-Weir-Tier: 1' %s%n"
        + "Ctrl-C stops it.%n", server.workUri(),
        filter == null ? "unprotected" : "protected by Weir",
        backends.downstream().capacityPerSecond(), server.computeUri(),
        backends.compute().rounds(), server.workUri());
    System.out.println("Status page: " + server.workUri().resolve(Observability.STATUS_PATH)
        + "?view=html, Prometheus metrics: " + server.workUri().resolve(Observability.METRICS_PATH));
    server.server.join();
  }

  /** Why the server could not start on {@code host:port}, in one line. */
  static String startFailure(Throwable e, String host, int port) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof BindException) {
        // Also "Permission denied", for a low port: only the JDK's message tells them apart.
        return String.valueOf(t.getMessage()).contains("in use")
            ? "port " + port + " on " + host + " is in use (try --port 0)"
            : "cannot listen on port " + port + " on " + host + ": " + t.getMessage();
      }
    }
    return "could not start on " + host + ":" + port + ": " + e.getMessage();
  }

  /** Answers at once. */
  private static final class HelloServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      resp.setContentType("text/plain");
      resp.getWriter().write("hello\n");
    }
  }

  /** The CPU-bound endpoint: a fixed number of hash rounds per request, the hash in the body. */
  private static final class ComputeServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private final transient Compute compute;

    ComputeServlet(Compute compute) {
      this.compute = compute;
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      long hash = compute.run(System.nanoTime());
      resp.setContentType("text/plain");
      resp.getWriter().write("ok " + Long.toHexString(hash) + "\n");
    }
  }

  /** The endpoint: one downstream call per request. */
  private static final class WorkServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private final transient Downstream downstream;

    WorkServlet(Downstream downstream) {
      this.downstream = downstream;
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      try {
        downstream.call();
      } catch (InterruptedException e) {
        // Only a stopping server interrupts its threads.
        Thread.currentThread().interrupt();
        resp.sendError(HttpServletResponse.SC_SERVICE_UNAVAILABLE);
        return;
      }
      resp.setContentType("text/plain");
      resp.getWriter().write("ok\n");
    }
  }
}
