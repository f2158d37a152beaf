package dev.weir.examples;

import dev.weir.LoadShedder;
import dev.weir.Snapshot;
import dev.weir.control.Limits;
import dev.weir.servlet.WeirFilter;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.client.AsyncRequestContent;
import org.eclipse.jetty.util.Callback;

/**
 * The chaos soak: a real servlet container (Jetty 12 by default; Tomcat 10.1 or Undertow 2.3 on
 * request, {@link SoakServer}) with Weir's filter in bounded-response-time mode (or its default
 * mode, on request), under a mix of ordinary traffic and abuse for a bounded time, on 127.0.0.1.
 * {@code GET /work} is offered about as much as its fixed limit of 4 serves, so that requests
 * queue, time out there and are shed throughout. The abuse: clients that reset while the
 * application works, requests aborted while queued, asynchronous requests the application never
 * completes, bodies sent a byte at a time, junk methods and paths, and responses larger than the
 * buffer cap. It then stops the load, waits for the routes to drain and prints, per route,
 * admitted and released permits, the requests turned away, inflight and queued (all must end 0),
 * and the heap after GC and live threads sampled through the run.
 *
 * <pre>bin/soak [--duration 3m] [--container jetty|tomcat|undertow] [--mode bounded|default]</pre>
 *
 * <p>A run that admitted nothing is not clean: it tested nothing.
 */
public final class Soak {
  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(1);

  /**
   * One route's end state: its permits, the requests it turned away (shed at the door, evicted
   * from a full queue or timed out in it), and what it still holds and queues.
   */
  public record Route(long admitted, long released, long turnedAway, int inflight, int queued) {}

  /** A run's options: how long, on which container, in bounded-response-time mode or not. */
  record Options(Duration duration, SoakServer.Container container, boolean bounded) {}

  /** What a run left behind: routes by key, and the samples taken through it. */
  public record Summary(Map<String, Route> routes, List<long[]> samples, long sent,
      Map<Integer, Long> statuses) {
    /**
     * Whether every route ended with nothing held or queued and every permit released, and some
     * request was admitted at all: a soak that admitted nothing tested nothing.
     */
    public boolean clean() {
      return admitted() > 0 && routes.values().stream().allMatch(r -> r.inflight == 0
          && r.queued == 0 && r.admitted == r.released);
    }

    /** The requests admitted on every route. */
    public long admitted() {
      return routes.values().stream().mapToLong(Route::admitted).sum();
    }
  }

  private Soak() {}

  static final String USAGE = String.join("\n",
      "Usage: bin/soak [options]",
      "  --duration D      how long the load runs, at least 1 s, at most 24 h: such as 90s, 3m,",
      "                    1m30s, 1h, 1500ms or PT3M (default 3m)",
      "  --container C     jetty, tomcat or undertow (default jetty)",
      "  --mode M          the filter's mode: bounded (bounded response time) or default",
      "                    (default bounded)",
      "  --help            this text");

  public static void main(String[] args) throws Exception {
    Options options;
    try {
      options = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("soak: " + e.getMessage());
      System.err.println(USAGE);
      System.exit(2);
      return;
    }
    if (options == null) {
      System.out.println(USAGE);
      return;
    }
    Summary s = run(options.duration(), options.container(), options.bounded(), true);
    System.exit(s.clean() ? 0 : 1);
  }

  /**
   * The soak's options from the command line, or null if {@code --help} was asked for.
   *
   * @throws IllegalArgumentException naming the option that is wrong
   */
  static Options parse(String[] args) {
    Args a = Args.parse(args, "duration", "container", "mode", "help");
    if (a.flag("help")) {
      return null;
    }
    String text = a.string("duration", null);
    String mode = a.string("mode", "bounded");
    if (!mode.equals("bounded") && !mode.equals("default")) {
      throw new IllegalArgumentException("--mode must be bounded or default, was '" + mode + "'");
    }
    return new Options(text == null ? Duration.ofMinutes(3) : duration(text),
        SoakServer.Container.parse(a.string("container", "jetty")), mode.equals("bounded"));
  }

  /**
   * A duration such as {@code 90s}, {@code 3m}, {@code 1m30s}, {@code 1h}, {@code 1500ms} or
   * {@code PT3M}, at least a second and at most a day.
   *
   * @throws IllegalArgumentException naming {@code --duration}
   */
  static Duration duration(String text) {
    String t = text.trim().toUpperCase(Locale.ROOT);
    Duration d = null;
    try {
      if (t.matches("\\d+MS")) {
        d = Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
      } else if (t.startsWith("P")) {
        d = Duration.parse(t);
      } else if (t.matches("-?(\\d+H)?(\\d+M)?(\\d+(\\.\\d+)?S)?") && !t.matches("-?")) {
        d = Duration.parse("PT" + t);
      }
    } catch (DateTimeParseException | ArithmeticException | NumberFormatException e) {
      d = null;
    }
    if (d == null) {
      throw new IllegalArgumentException("--duration must be a duration with a unit, such as"
          + " 90s, 3m, 1m30s, 1h, 1500ms or PT3M; was '" + text + "'");
    }
    if (d.compareTo(Duration.ofSeconds(1)) < 0 || d.compareTo(Duration.ofHours(24)) > 0) {
      throw new IllegalArgumentException("--duration must be from 1s to 24h, was '" + text
          + "'");
    }
    return d;
  }

  /**
   * Runs the soak on {@code container} for {@code duration}, the filter in bounded-response-time
   * mode if {@code bounded}; prints the summary if {@code print}.
   */
  static Summary run(Duration duration, SoakServer.Container container, boolean bounded,
      boolean print) throws Exception {
    WeirFilter filter = WeirFilter.builder().boundedResponseTime(bounded)
        .maxBufferedBytes(64 << 10).bodyReadTimeout(Duration.ofMillis(500))
        .routeIdleTimeout(Duration.ofMinutes(10))
        .shedder(LoadShedder.builder().requestTimeout(REQUEST_TIMEOUT)
            .queueTimeout(Duration.ofMillis(300)).limit(() -> Limits.fixed(4)))
        .build();
    SoakServer server = SoakServer.start(container, filter, servlets());
    URI base = server.base();
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(2)).build();
    org.eclipse.jetty.client.HttpClient jetty = new org.eclipse.jetty.client.HttpClient();
    jetty.setMaxConnectionsPerDestination(512);
    jetty.start();
    ScheduledExecutorService load = Executors.newScheduledThreadPool(2);
    Map<Integer, Long> statuses = new java.util.concurrent.ConcurrentSkipListMap<>();
    AtomicLong sent = new AtomicLong();
    List<long[]> samples = new ArrayList<>();
    try {
      URI u = base;
      Runnable[] mix = {
          () -> ordinary(http, u, "/work", statuses, sent),
          () -> ordinary(http, u, "/hello", statuses, sent),
          () -> ordinary(http, u, "/big", statuses, sent),
          () -> reset(jetty, u, "/work", sent),
          () -> reset(jetty, u, "/big", sent),
          () -> junk(http, u, statuses, sent),
          () -> slowBody(jetty, u, load, sent),
          () -> never(jetty, u, sent),
      };
      // per-second rates of each kind, on two scheduler threads
      int[] perSecond = {300, 100, 20, 20, 10, 40, 2, 2};
      for (int k = 0; k < mix.length; k++) {
        Runnable task = mix[k];
        load.scheduleAtFixedRate(() -> {
          try {
            task.run();
          } catch (RuntimeException e) {
            // a client-side failure is part of the chaos
          }
        }, 0, 1_000_000 / perSecond[k], TimeUnit.MICROSECONDS);
      }
      long end = System.nanoTime() + duration.toNanos();
      long every = Math.max(500, duration.toMillis() / 12);
      long start = System.nanoTime();
      while (System.nanoTime() < end) {
        samples.add(sample(start));
        TimeUnit.MILLISECONDS.sleep(Math.min(every,
            Math.max(1, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()))));
      }
      load.shutdownNow();
      load.awaitTermination(5, TimeUnit.SECONDS);
      jetty.stop(); // aborts the slow bodies and anything else still open
      // Drain: every permit comes back within the request timeout plus the watchdog's grace. The
      // routes are read once a pass and the pass that finds them drained is the one reported:
      // inflight() is a moment's estimate, and a second read could catch a tick mid-rebalance.
      long drainBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      Map<String, Route> routes = routes(filter);
      while (System.nanoTime() < drainBy && !routes.values().stream()
          .allMatch(r -> r.inflight() == 0 && r.queued() == 0)) {
        TimeUnit.MILLISECONDS.sleep(50); // polling for the end state, bounded
        routes = routes(filter);
      }
      samples.add(sample(start));
      Summary summary = new Summary(routes, samples, sent.get(), statuses);
      if (print) {
        print(duration, container, bounded, summary);
      }
      return summary;
    } finally {
      load.shutdownNow();
      if (jetty.isRunning()) {
        jetty.stop();
      }
      server.close();
      filter.destroy();
    }
  }

  private static long[] sample(long start) {
    System.gc();
    long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    int threads = ManagementFactory.getThreadMXBean().getThreadCount();
    return new long[] {TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start), heap, threads};
  }

  private static void print(Duration duration, SoakServer.Container container, boolean bounded,
      Summary s) {
    System.out.printf(Locale.ROOT, "soak: %s on %s, %s mode, %d requests sent; answers %s%n",
        duration, container, bounded ? "bounded" : "default", s.sent(), s.statuses());
    System.out.printf(Locale.ROOT, "%-18s %10s %10s %12s %9s %7s%n", "route", "admitted",
        "released", "turned away", "inflight", "queued");
    s.routes().forEach((k, r) -> System.out.printf(Locale.ROOT, "%-18s %10d %10d %12d %9d %7d%n",
        k, r.admitted(), r.released(), r.turnedAway(), r.inflight(), r.queued()));
    System.out.printf(Locale.ROOT, "%-8s %16s %8s%n", "t (s)", "heap after GC MB", "threads");
    for (long[] x : s.samples()) {
      System.out.printf(Locale.ROOT, "%-8d %16.1f %8d%n", x[0], x[1] / 1048576.0, x[2]);
    }
    System.out.println(s.clean() ? "soak: CLEAN (admitted = released, inflight 0, queued 0)"
        : s.admitted() == 0 ? "soak: NOT CLEAN (nothing was admitted: nothing was tested)"
        : "soak: NOT CLEAN");
  }

  // ----------------------------------------------------------------------------- the mix

  private static void ordinary(HttpClient http, URI base, String path,
      Map<Integer, Long> statuses, AtomicLong sent) {
    sent.incrementAndGet();
    String tier = Integer.toString(ThreadLocalRandom.current().nextInt(6));
    http.sendAsync(HttpRequest.newBuilder(base.resolve(path)).header("X-Weir-Tier", tier)
        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding())
        .whenComplete((r, e) -> statuses.merge(r == null ? -1 : r.statusCode(), 1L, Long::sum));
  }

  /** A request the client aborts after 0-30 ms: while queued, working or being answered. */
  private static void reset(org.eclipse.jetty.client.HttpClient jetty, URI base, String path,
      AtomicLong sent) {
    sent.incrementAndGet();
    org.eclipse.jetty.client.Request r = jetty.newRequest(base.resolve(path));
    r.send(result -> { });
    jetty.getScheduler().schedule(() -> r.abort(new Exception("reset")),
        ThreadLocalRandom.current().nextInt(30), TimeUnit.MILLISECONDS);
  }

  private static void junk(HttpClient http, URI base, Map<Integer, Long> statuses,
      AtomicLong sent) {
    sent.incrementAndGet();
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    String method = rnd.nextBoolean() ? "X" + rnd.nextInt(1_000_000) : "GET";
    String path = "/junk/" + rnd.nextInt(1_000_000);
    http.sendAsync(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(5))
        .method(method, HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.discarding())
        .whenComplete((r, e) -> statuses.merge(r == null ? -1 : r.statusCode(), 1L, Long::sum));
  }

  /** A 100-byte body declared, sent a byte every 200 ms for at most 4 s, then abandoned. */
  private static void slowBody(org.eclipse.jetty.client.HttpClient jetty, URI base,
      ScheduledExecutorService load, AtomicLong sent) {
    sent.incrementAndGet();
    AsyncRequestContent body = new AsyncRequestContent();
    jetty.newRequest(base.resolve("/upload")).method("POST")
        .headers(h -> h.put("Content-Length", "100")).body(body).send(result -> { });
    for (int i = 1; i <= 20; i++) {
      jetty.getScheduler().schedule(() -> body.write(ByteBuffer.wrap(new byte[] {'x'}),
          Callback.NOOP), 200L * i, TimeUnit.MILLISECONDS);
    }
    jetty.getScheduler().schedule(() -> body.fail(new Exception("abandoned")), 4_200,
        TimeUnit.MILLISECONDS);
  }

  /** An asynchronous request the application never completes; the client gives up after 2 s. */
  private static void never(org.eclipse.jetty.client.HttpClient jetty, URI base,
      AtomicLong sent) {
    sent.incrementAndGet();
    jetty.newRequest(base.resolve("/never")).timeout(2, TimeUnit.SECONDS).send(result -> { });
  }

  // ---------------------------------------------------------------------------- the server

  /** The application: each path's servlet, the same on every container. */
  private static Map<String, HttpServlet> servlets() {
    Map<String, HttpServlet> servlets = new LinkedHashMap<>();
    servlets.put("/work", servlet((req, res) -> {
      work(5 + ThreadLocalRandom.current().nextInt(15));
      res.getWriter().print("ok");
    }));
    servlets.put("/hello", servlet((req, res) -> res.getWriter().print("hello")));
    servlets.put("/big", servlet((req, res) -> {
      byte[] chunk = new byte[16 << 10];
      for (int i = 0; i < 16; i++) { // 256 KB, past the 64 KB cap: streamed
        res.getOutputStream().write(chunk);
      }
    }));
    servlets.put("/upload", servlet((req, res) -> res.getWriter().print(
        req.getInputStream().readAllBytes().length)));
    servlets.put("/never", servlet((req, res) -> {
      AsyncContext ac = req.startAsync();
      ac.setTimeout(0); // and never completed
    }));
    servlets.put("/", servlet((req, res) -> res.sendError(404)));
    return servlets;
  }

  private interface Handler {
    void handle(HttpServletRequest req, HttpServletResponse res) throws IOException;
  }

  private static HttpServlet servlet(Handler h) {
    return new HttpServlet() {
      private static final long serialVersionUID = 1L;

      @Override
      protected void service(HttpServletRequest req, HttpServletResponse res)
          throws IOException {
        h.handle(req, res);
      }
    };
  }

  private static void work(int millis) {
    try {
      Thread.sleep(millis); // the application's work
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Each route's admitted and released permits, inflight and queued, read in one pass. */
  private static Map<String, Route> routes(WeirFilter filter) {
    Map<String, Route> routes = new LinkedHashMap<>();
    // One map read: a route that retires between two reads of the filter's maps is not half seen.
    filter.shedders().forEach((key, s) -> {
      Snapshot snap = s.snapshot();
      long released = snap.total(Snapshot.Counter.SUCCEEDED)
          + snap.total(Snapshot.Counter.FAILED) + snap.total(Snapshot.Counter.DROPPED);
      long turnedAway = snap.total(Snapshot.Counter.SHED)
          + snap.total(Snapshot.Counter.QUEUE_FULL) + snap.total(Snapshot.Counter.QUEUE_TIMEOUT);
      routes.put(key, new Route(snap.total(Snapshot.Counter.ADMITTED), released, turnedAway,
          s.inflight(), s.queued()));
    });
    return routes;
  }
}
