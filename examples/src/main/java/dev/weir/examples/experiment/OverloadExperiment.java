package dev.weir.examples.experiment;

import dev.weir.examples.Backends;
import dev.weir.examples.Compute;
import dev.weir.examples.Downstream;
import dev.weir.examples.ExampleServer;
import dev.weir.examples.LoadGenerator;
import dev.weir.examples.LoadReport;
import dev.weir.examples.Status;
import dev.weir.examples.TierMix;
import dev.weir.examples.TierStats;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Uber's Cinnamon experiment, scaled down to one machine: each endpoint of the example server
 * under an open-loop load of 50% tier 1 and 50% tier 5 with a 1 s client timeout, at several
 * multiples of that endpoint's capacity, behind each {@link Guard} in turn, each run on a fresh
 * server. {@code GET /work} is bounded by a downstream pool, so its capacity is derived from the
 * pool; {@code GET /compute} is bounded by the cores, so its capacity is measured first ({@link
 * CapacityProbe}). Prints a table and the goals per endpoint and writes a self-contained HTML
 * report; also measures the unprotected server at a light load, the unloaded latency that the
 * goals compare with.
 *
 * <p>At the goals' loads (1.5x and 3x) every guard runs {@code --runs} times, on the next seed each
 * time, because there a single run cannot tell the best guards apart: they all keep the service at
 * its ceiling, and one 6 s window's noise is larger than what separates them (see {@link Goals}).
 * The table shows the first run.
 *
 * <p>Before its first point at an endpoint, each guard's server runs at 1.5x until the JIT
 * compilers are quiet ({@link JitWarmup}), so that every guard is measured compiled, as a server
 * that has been running a while is, whatever the length of its path.
 *
 * <p>Everything runs in this process on 127.0.0.1 and stops by itself, in about {@link
 * #expectedSeconds} seconds: {@code endpoints x (guards x (loads + 2 x (runs - 1)) + 1) x (warm-up
 * + seconds + 1)}, plus each guard's warm-up and the capacity probe; about 25 minutes with the
 * defaults. Run with {@code --help} for the options.
 */
public final class OverloadExperiment {
  private static final TierMix MIX = TierMix.parse("1:50,5:50");
  private static final String TITLE = "Weir overload experiment (after Uber's Cinnamon)";
  /**
   * With {@code /compute}'s capacity given, the closed loop that would have measured it still runs
   * this long, at most {@code probeSeconds}, unmeasured: long enough to compile the work.
   */
  static final int GIVEN_CAPACITY_WARMUP_SECONDS = 10;

  private OverloadExperiment() {}

  public static void main(String[] args) throws Exception {
    // Stopping a QoSHandler server with requests still suspended makes Jetty warn, with a stack
    // trace, for each one it can no longer resume; the stop answers them anyway. Other Jetty
    // warnings still show.
    System.setProperty("org.eclipse.jetty.server.Request.LEVEL", "ERROR");
    Settings s;
    try {
      s = Settings.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("experiment: " + e.getMessage());
      System.err.println(Settings.USAGE);
      System.exit(2);
      return;
    }
    if (s == null) {
      System.out.println(Settings.USAGE);
      return;
    }
    Result r;
    try {
      r = run(s, System.out, System.err);
    } catch (IllegalArgumentException e) {
      // A load too high for the capacity measured, found before any endpoint ran.
      System.err.println("experiment: " + e.getMessage());
      System.exit(2);
      return;
    } catch (IllegalStateException | IOException e) {
      System.err.println("experiment: " + e.getMessage());
      System.exit(1);
      return;
    }
    if (s.html != null) {
      try {
        write(s.html, r.html);
      } catch (IOException e) {
        System.err.println("experiment: could not write the HTML report to " + s.html + ": "
            + Settings.reason(e) + "; the tables and goals are in the standard output above");
        System.exit(1);
        return;
      }
      System.out.println("HTML report: " + s.html);
    }
  }

  /**
   * The outcome of an experiment.
   *
   * @param endpoints each endpoint's outcome, in the order run
   * @param html the report
   */
  record Result(List<EndpointResult> endpoints, String html) {}

  /**
   * What the guards did at one endpoint.
   *
   * @param endpoint the endpoint overloaded
   * @param capacity its capacity in requests per second, the unit of the loads
   * @param description the set-up at this endpoint, one paragraph
   * @param guards the guards, with this endpoint's hand-picked QoSHandler limit
   * @param points the first run of every guard at every load: the table
   * @param repeats the further runs at the goals' loads, in run order
   * @param baseline the unloaded reference run, or null
   * @param goals the goals, judged on every run at this endpoint
   */
  record EndpointResult(Endpoint endpoint, double capacity, String description, List<Guard> guards,
      List<Point> points, List<Point> repeats, Point baseline, List<Goals.Goal> goals) {

    /** The result of these runs, the goals judged on them alone. */
    static EndpointResult of(Endpoint endpoint, double capacity, String description,
        List<Guard> guards, List<Point> points, List<Point> repeats, Point baseline) {
      List<Point> all = new ArrayList<>(points);
      all.addAll(repeats);
      return new EndpointResult(endpoint, capacity, description, guards, List.copyOf(points),
          List.copyOf(repeats), baseline, Goals.check(all, baseline));
    }

    /** The goals' loads that were run. */
    List<Double> keyLoads() {
      return points.stream().map(Point::load).distinct().filter(Goals.KEY_LOADS::contains)
          .toList();
    }
  }

  /** Runs every endpoint, guard and load; progress goes to {@code log}, the tables to {@code out}. */
  static Result run(Settings s, PrintStream out, PrintStream log) throws Exception {
    int cores = Runtime.getRuntime().availableProcessors();
    List<Double> keyLoads = s.loads.stream().filter(Goals.KEY_LOADS::contains).toList();
    String common = String.format(Locale.ROOT,
        "Jetty 12, %d threads. Open-loop Poisson clients, %s, timeout %d ms, at multiples of each"
        + " endpoint's capacity.%s Each point on a fresh server: %d s warm-up, then %d s measured."
        + " Goodput (ok/s) counts the successes that ended in the measured window; the status mix"
        + " and latencies are of the requests sent in it.%s%s Started %s on %d cores; expected to"
        + " take about %s.", ExampleServer.THREADS, MIX, s.timeoutMillis, s.settleSeconds == 0 ? ""
            : String.format(Locale.ROOT, " Before its first point at an endpoint, each guard's"
                + " server ran at %sx until the JIT compilers were quiet, at most %d s.",
                Goals.fmt(s.settleLoad()), s.settleSeconds), s.warmupSeconds,
        s.seconds, keyLoads.isEmpty() || s.runs == 1 ? "" : String.format(Locale.ROOT,
            " At %s every guard ran %d times, the i-th run on seed %d + i - 1; the table shows"
                + " the first.", loads(keyLoads), s.runs, s.seed),
        s.twoRoutes ? " GET /work's requests alternate between two routes to the same work, "
            + ExampleServer.WORK_PATH + " and " + ExampleServer.SECOND_WORK_PATH + "." : "",
        Instant.now().truncatedTo(ChronoUnit.SECONDS), cores, duration(expectedSeconds(s)));
    // Every capacity first, so that a load too high for one fails before minutes of work.
    List<Capacity> capacities = new ArrayList<>();
    for (Endpoint e : s.endpoints) {
      capacities.add(capacity(s, e, cores, log));
    }
    out.println(TITLE);
    out.println("  " + common);
    List<EndpointResult> results = new ArrayList<>();
    List<String> sections = new ArrayList<>();
    for (int i = 0; i < s.endpoints.size(); i++) {
      Endpoint e = s.endpoints.get(i);
      EndpointResult r = runEndpoint(s, e, capacities.get(i), cores, log);
      results.add(r);
      out.println();
      out.print(report(r));
      out.flush();
      double p99Bound = r.baseline() == null ? Double.NaN
          : Goals.P99_FACTOR * r.baseline().topP99Millis();
      sections.add(HtmlReport.section(e.title(), r.description(), r.guards(), table(r),
          r.baseline(), r.capacity(), p99Bound, r.goals(), runsTable(r)));
    }
    if (results.size() > 1) {
      out.println();
      out.println("Goals met: " + String.join(", ", results.stream().map(r -> String.format(
          Locale.ROOT, "%s %d of %d", r.endpoint().title(),
          r.goals().stream().filter(Goals.Goal::met).count(), r.goals().size())).toList()));
    }
    out.flush();
    return new Result(results, HtmlReport.page(TITLE, common, sections));
  }

  /**
   * An endpoint's capacity.
   *
   * @param value in requests per second, the unit of the loads
   * @param description how it was found, one paragraph
   */
  private record Capacity(double value, String description) {}

  /**
   * Measures or derives the endpoint's capacity and checks the loads' rates against it.
   *
   * @throws IllegalArgumentException if a load asks for more than the client sends
   * @throws IllegalStateException if the probe served nothing
   */
  private static Capacity capacity(Settings s, Endpoint e, int cores, PrintStream log)
      throws Exception {
    double capacity;
    String description;
    if (e == Endpoint.WORK) {
      capacity = s.workCapacity();
      description = String.format(Locale.ROOT, "GET /work holds 1 of %d downstream connections"
          + " for ~%d ms (lognormal), so its capacity is %.0f req/s, derived.", s.connections,
          s.serviceMillis, capacity);
    } else if (s.computeCapacity > 0) {
      capacity = s.computeCapacity;
      // The probe also compiled the work. Without it, the first guard's overload would meet the
      // work interpreted, many times slower, with the JIT's threads starved by the requests in
      // service: every guard then served nothing in three of four such runs.
      int clients = CapacityProbe.CLIENTS_PER_CORE * cores;
      int seconds = givenCapacityWarmupSeconds(s);
      log.printf(Locale.ROOT, "  warming GET /compute closed-loop, %d clients, no guard, for %d s"
          + " (its capacity was given) ...%n", clients, seconds);
      closedLoop(s, clients, seconds);
      description = String.format(Locale.ROOT, "GET /compute runs %d hash rounds of CPU work"
          + " per request; its capacity, %.0f req/s, was given (--compute-capacity).",
          s.computeRounds, capacity);
    } else {
      int clients = CapacityProbe.CLIENTS_PER_CORE * cores;
      log.printf(Locale.ROOT, "  measuring the capacity of GET /compute closed-loop, %d clients,"
          + " no guard, for %d s ...%n", clients, s.probeSeconds);
      capacity = closedLoop(s, clients, s.probeSeconds);
      if (!(capacity >= 1)) {
        throw new IllegalStateException("GET /compute served nothing in the capacity probe");
      }
      s.checkRates(" (capacity measured)", capacity);
      description = String.format(Locale.ROOT, "GET /compute runs %d hash rounds of CPU work"
          + " per request (no sleep, no pool); its capacity, %.0f req/s, was measured closed-loop"
          + " with %d clients (%d a core) and no guard: the best %d s of %d s.",
          s.computeRounds, capacity, clients, CapacityProbe.CLIENTS_PER_CORE,
          Math.min(CapacityProbe.WINDOW_SECONDS, s.probeSeconds), s.probeSeconds);
    }
    return new Capacity(capacity, description);
  }

  /** {@link CapacityProbe}'s closed loop on an unguarded server's {@code /compute}: its rate. */
  private static double closedLoop(Settings s, int clients, int seconds) throws Exception {
    try (ExampleServer server = Guard.all().get(0).start(backends(s, s.seed))) {
      return CapacityProbe.measure(server.computeUri(), clients, seconds);
    }
  }

  /** How long the closed loop runs, unmeasured, when {@code /compute}'s capacity is given. */
  private static int givenCapacityWarmupSeconds(Settings s) {
    return Math.min(s.probeSeconds, GIVEN_CAPACITY_WARMUP_SECONDS);
  }

  /** Runs every guard at every load of the endpoint. */
  private static EndpointResult runEndpoint(Settings s, Endpoint e, Capacity c, int cores,
      PrintStream log) throws Exception {
    double capacity = c.value();
    String description = c.description();
    int handPicked = e.handPickedLimit(s.connections, cores);
    List<Guard> guards = Guard.all(handPicked, e.handPickedRule).stream()
        .filter(g -> s.guards.contains(g.name())).toList();
    List<Double> keyLoads = s.loads.stream().filter(Goals.KEY_LOADS::contains).toList();
    List<Point> points = new ArrayList<>();
    for (Guard g : guards) {
      settle(s, e, capacity, g, log);
      for (double load : s.loads) {
        points.add(Point.of(g.label(), load,
            runOnce(s, e, capacity, g, load, s.seed, log, g.label())));
      }
    }
    // Round by round, every guard in turn, so that a drift in the machine's speed over the
    // minutes falls on all guards alike.
    List<Point> repeats = new ArrayList<>();
    for (int run = 2; run <= s.runs; run++) {
      for (double load : keyLoads) {
        for (Guard g : guards) {
          repeats.add(Point.of(g.label(), load, runOnce(s, e, capacity, g, load,
              s.seed + run - 1, log, g.label() + ", run " + run + " of " + s.runs)));
        }
      }
    }
    // Last, when the JIT has compiled the server and client: a cold JVM's first seconds would
    // count as the unloaded latency.
    Point baseline = null;
    if (s.baselineLoad > 0) {
      baseline = Point.of(Guard.NONE, s.baselineLoad, runOnce(s, e, capacity, Guard.all().get(0),
          s.baselineLoad, s.seed, log, "baseline, " + Guard.NONE));
    }
    return EndpointResult.of(e, capacity, description, guards, points, repeats, baseline);
  }

  /**
   * One endpoint's report: its set-up and guards, its table (grouped by load, guards in their
   * order, so that each load's rows compare at a glance), every run at the goals' loads, and its
   * goals.
   */
  static String report(EndpointResult r) {
    StringBuilder b = new StringBuilder();
    b.append(r.endpoint().title()).append(String.format(Locale.ROOT, " (capacity %.0f req/s)%n",
        r.capacity()));
    b.append("  ").append(r.description()).append(System.lineSeparator());
    for (Guard g : r.guards()) {
      b.append(String.format(Locale.ROOT, "  %-26s %s%n", g.label(), g.settings()));
    }
    b.append(System.lineSeparator()).append(header()).append(System.lineSeparator());
    if (r.baseline() != null) {
      b.append(row(r.baseline())).append("  (baseline)").append(System.lineSeparator());
    }
    double last = Double.NaN;
    for (Point p : table(r)) {
      if (p.load() != last && !Double.isNaN(last)) {
        b.append(System.lineSeparator());
      }
      last = p.load();
      b.append(row(p)).append(System.lineSeparator());
    }
    String runs = runsTable(r);
    if (!runs.isEmpty()) {
      b.append(System.lineSeparator()).append(runs).append(System.lineSeparator());
    }
    if (!r.goals().isEmpty()) {
      b.append(System.lineSeparator()).append("Goals at ").append(r.endpoint().title())
          .append(System.lineSeparator());
      for (Goals.Goal g : r.goals()) {
        b.append(String.format(Locale.ROOT, "  [%s] %s (%s)%n", g.met() ? "met" : "NOT met",
            g.goal(), g.evidence()));
      }
    }
    return b.toString();
  }

  /** The first runs, grouped by load in the order of the loads. */
  private static List<Point> table(EndpointResult r) {
    List<Point> table = new ArrayList<>();
    r.points().stream().map(Point::load).distinct()
        .forEach(load -> r.points().stream().filter(p -> p.load() == load).forEach(table::add));
    return table;
  }

  /**
   * Every run at the goals' loads, one line per guard and load: the top tier's success and the
   * total goodput of each run, in run order, then their mean; empty if each ran once.
   */
  static String runsTable(EndpointResult r) {
    if (r.repeats().isEmpty()) {
      return "";
    }
    List<Point> all = new ArrayList<>(r.points());
    all.addAll(r.repeats());
    List<Double> keyLoads = r.keyLoads();
    StringBuilder b = new StringBuilder("Every run at " + loads(keyLoads) + " (run 1 is the"
        + " table's):");
    for (double load : keyLoads) {
      for (Guard g : r.guards()) {
        List<Point> runs = Goals.runs(all, g.label(), load);
        StringBuilder top = new StringBuilder();
        StringBuilder total = new StringBuilder();
        for (Point p : runs) {
          top.append(String.format(Locale.ROOT, " %5.1f", 100 * p.topSuccess()));
          total.append(String.format(Locale.ROOT, " %4.0f", p.totalGoodput()));
        }
        b.append(String.format(Locale.ROOT,
            "%n%-5s %-26s t%d ok%%%s (mean %.1f)   total/s%s (mean %.1f)", Goals.fmt(load) + "x",
            g.label(), runs.get(0).topTier(), top, 100 * Goals.mean(runs, Point::topSuccess),
            total, Goals.mean(runs, Point::totalGoodput)));
      }
    }
    return b.toString();
  }

  /**
   * About how long {@link #run} takes: every point costs its warm-up and measured window, plus
   * about a second to drain and to start and stop its server; the capacity probe its own time.
   */
  static long expectedSeconds(Settings s) {
    long keyLoads = s.loads.stream().filter(Goals.KEY_LOADS::contains).count();
    long points = s.guards.size() * (s.loads.size() + keyLoads * (s.runs - 1))
        + (s.baselineLoad > 0 ? 1 : 0);
    long seconds = s.endpoints.size() * points * (s.warmupSeconds + s.seconds + 1);
    // A guard's warm-up: 2-32 s on the 2-core machine, 10 on average; counted as 15, as each
    // step also waits for its last answers.
    seconds += s.endpoints.size() * s.guards.size() * Math.min(s.settleSeconds, 15);
    if (s.endpoints.contains(Endpoint.COMPUTE)) {
      seconds += (s.computeCapacity == 0 ? s.probeSeconds : givenCapacityWarmupSeconds(s)) + 1;
    }
    return seconds;
  }

  /** {@code 55 s} under two minutes, else {@code 18 minutes}. */
  static String duration(long seconds) {
    return seconds < 120 ? seconds + " s" : Math.round(seconds / 60.0) + " minutes";
  }

  /** {@code 1.5x}, or {@code 1.5x and 3x}. */
  private static String loads(List<Double> loads) {
    return String.join(" and ", loads.stream().map(l -> Goals.fmt(l) + "x").toList());
  }

  /** Fresh backends: a new downstream (seeded) and the configured CPU work. */
  private static Backends backends(Settings s, long seed) {
    return new Backends(new Downstream(s.connections, Duration.ofMillis(s.serviceMillis), seed),
        new Compute(s.computeRounds));
  }

  /**
   * Runs {@code guard}'s server at {@link Settings#settleLoad} until this JVM's JIT is quiet
   * ({@link JitWarmup}), at most {@link Settings#settleSeconds}: the guard's first point then
   * measures its compiled path, as on a server that has run a while, not its compilation. The
   * server and client share this JVM, so the client's compilation counts too.
   */
  private static void settle(Settings s, Endpoint e, double capacity, Guard guard,
      PrintStream log) throws Exception {
    long jit = JitWarmup.compilationMillis();
    if (s.settleSeconds == 0 || jit < 0) {
      return;
    }
    double load = s.settleLoad();
    long start = System.nanoTime();
    boolean quiet;
    try (ExampleServer server = guard.start(backends(s, s.seed))) {
      quiet = JitWarmup.settle(jit, s.settleSeconds, () -> {
        client(s, e, server, load * capacity, s.seed)
            .warmup(Duration.ZERO)
            .duration(Duration.ofSeconds(JitWarmup.STEP_SECONDS))
            .build()
            .run();
        return JitWarmup.compilationMillis();
      });
    }
    log.printf(Locale.ROOT, "  warmed %s, %s at %sx for %.0f s: %s%n", e.title(), guard.label(),
        Goals.fmt(load), (System.nanoTime() - start) / 1e9,
        quiet ? "the JIT is quiet" : "the JIT still compiles");
  }

  private static LoadReport runOnce(Settings s, Endpoint e, double capacity, Guard guard,
      double load, long seed, PrintStream log, String label) throws Exception {
    double rate = load * capacity;
    log.printf(Locale.ROOT, "  running %s, %s at %sx (%.0f req/s) for %d s ...%n", e.title(),
        label, Goals.fmt(load), rate, s.warmupSeconds + s.seconds);
    try (ExampleServer server = guard.start(backends(s, seed))) {
      return client(s, e, server, rate, seed)
          .warmup(Duration.ofSeconds(s.warmupSeconds))
          .duration(Duration.ofSeconds(s.seconds))
          .build()
          .run();
    }
  }

  /**
   * The experiment's open-loop client of {@code e} at {@code rate}: its timeout, tier mix and
   * seed; with {@code --two-routes}, /work's requests alternate between its two routes.
   */
  private static LoadGenerator.Builder client(Settings s, Endpoint e, ExampleServer server,
      double rate, long seed) {
    LoadGenerator.Builder b = LoadGenerator.builder(e.uri(server))
        .rate(rate)
        .timeout(Duration.ofMillis(s.timeoutMillis))
        .mix(MIX)
        .seed(seed);
    if (s.twoRoutes && e == Endpoint.WORK) {
      b.alternateWith(server.secondWorkUri());
    }
    return b;
  }

  static String header() {
    return String.format(Locale.ROOT,
        "%-5s %-26s %9s %8s %8s %8s %7s  %6s %6s %6s %7s %6s  %7s %7s", "load", "guard",
        "offered/s", "t1 ok/s", "t5 ok/s", "total/s", "t1 ok%", "200", "429", "503", "timeout",
        "other", "t1 p50", "t1 p99");
  }

  /** One table row; the status mix is in percent of all requests sent. */
  static String row(Point p) {
    return String.format(Locale.ROOT,
        "%-5s %-26s %9.0f %8.0f %8.0f %8.0f %6.1f%%  %5.1f%% %5.1f%% %5.1f%% %6.1f%% %5.1f%%"
        + "  %7s %7s", Goals.fmt(p.load()) + "x", p.guard(), p.offeredPerSecond(),
        p.topGoodput(), p.otherGoodput(), p.totalGoodput(), 100 * p.topSuccess(),
        100 * p.share(Status.OK), 100 * p.share(Status.TOO_MANY_REQUESTS),
        100 * p.share(Status.UNAVAILABLE), 100 * p.share(Status.TIMEOUT),
        100 * p.share(Status.OTHER), millis(p.topP50Millis()), millis(p.topP99Millis()));
  }

  private static String millis(double ms) {
    return TierStats.millisText(ms, 1);
  }

  private static void write(Path path, String html) throws IOException {
    Path parent = path.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    Files.writeString(path, html, StandardCharsets.UTF_8);
  }
}
