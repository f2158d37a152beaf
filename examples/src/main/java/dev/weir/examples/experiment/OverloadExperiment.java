package dev.weir.examples.experiment;

import dev.weir.examples.Downstream;
import dev.weir.examples.ExampleServer;
import dev.weir.examples.LoadGenerator;
import dev.weir.examples.LoadReport;
import dev.weir.examples.Status;
import dev.weir.examples.TierMix;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Uber's Cinnamon experiment, scaled down to one machine: the example server's bounded-capacity
 * endpoint under an open-loop load of 50% tier 1 and 50% tier 5 with a 1 s client timeout, at
 * several multiples of its capacity, behind each {@link Guard} in turn, each run on a fresh server.
 * Prints one table and writes a self-contained HTML report; also measures the unprotected server
 * at a light load, the unloaded latency that the goals compare with.
 *
 * <p>At the goals' loads (1.5x and 3x) every guard runs {@code --runs} times, on the next seed each
 * time, because there a single run cannot tell the best guards apart: they all keep the service at
 * its ceiling, and one 6 s window's noise is larger than what separates them (see {@link Goals}).
 * The table shows the first run.
 *
 * <p>Everything runs in this process on 127.0.0.1 and stops by itself, in about {@code (guards x
 * (loads + 2 x (runs - 1)) + 1) x (warm-up + seconds + 1)} seconds: about eight minutes with the
 * defaults. Run with {@code --help} for the options.
 */
public final class OverloadExperiment {
  static final String USAGE = String.join("\n",
      "Usage: bin/experiment [options]",
      "  --seconds N       measured seconds per point (default 6)",
      "  --warmup N        warm-up seconds per point, not counted (default 2)",
      "  --loads L,L       offered loads as multiples of capacity (default 0.5,1,1.5,2,3,4)",
      "  --guards G,G      guards to run (default all: " + String.join(",", names()) + ")",
      "  --baseline L      load of the unloaded reference run, no guard (default 0.3; 0: none)",
      "  --connections N   downstream connections (default 8)",
      "  --service-ms N    mean downstream service time (default 20): capacity = N / mean",
      "  --timeout-ms N    client timeout (default 1000)",
      "  --seed N          seed of arrivals, tiers, users and service times (default 42)",
      "  --runs N          runs of every guard at the goals' loads, 1.5x and 3x, the i-th with",
      "                    seed + i - 1; the goals compare them in pairs (default 3)",
      "  --html PATH       where to write the HTML report (default"
          + " reports/overload-experiment.html; 'none' for no report)",
      "  --help            this text");
  private static final TierMix MIX = TierMix.parse("1:50,5:50");

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
      System.err.println(USAGE);
      System.exit(2);
      return;
    }
    if (s == null) {
      System.out.println(USAGE);
      return;
    }
    Result r = run(s, System.out, System.err);
    if (s.html != null) {
      write(s.html, r.html);
      System.out.println("HTML report: " + s.html);
    }
  }

  /**
   * The outcome of an experiment.
   *
   * @param points the first run of every guard at every load: the table
   * @param repeats the further runs at the goals' loads, in run order
   * @param baseline the unloaded reference run, or null
   * @param goals the goals, judged on every run
   * @param html the report
   */
  record Result(List<Point> points, List<Point> repeats, Point baseline, List<Goals.Goal> goals,
      String html) {}

  /** Runs every guard at every load; progress goes to {@code log}, the table to {@code out}. */
  static Result run(Settings s, PrintStream out, PrintStream log) throws Exception {
    double capacity = s.capacity();
    List<Double> keyLoads = s.loads.stream().filter(Goals.KEY_LOADS::contains).toList();
    String description = String.format(Locale.ROOT,
        "Jetty 12, %d threads; GET /work holds 1 of %d downstream connections for ~%d ms"
        + " (lognormal), so capacity is %.0f req/s. Open-loop Poisson clients, %s, timeout %d ms."
        + " Each point on a fresh server: %d s warm-up, then %d s measured. Goodput (ok/s)"
        + " counts the successes that ended in the measured window; the status mix and latencies"
        + " are of the requests sent in it.%s Started %s on %d cores.",
        ExampleServer.THREADS, s.connections, s.serviceMillis, capacity, MIX, s.timeoutMillis,
        s.warmupSeconds, s.seconds, keyLoads.isEmpty() || s.runs == 1 ? "" : String.format(
            Locale.ROOT, " At %s every guard ran %d times, the i-th run on seed %d + i - 1; the"
                + " table shows the first.", loads(keyLoads), s.runs, s.seed),
        Instant.now().truncatedTo(ChronoUnit.SECONDS), Runtime.getRuntime().availableProcessors());
    out.println("Weir overload experiment (after Uber's Cinnamon)");
    out.println("  " + description);
    for (Guard g : s.guards) {
      out.printf(Locale.ROOT, "  %-18s %s%n", g.name(), g.settings());
    }
    out.println();
    List<Point> points = new ArrayList<>();
    for (Guard g : s.guards) {
      for (double load : s.loads) {
        points.add(Point.of(g.name(), load, runOnce(s, g, load, s.seed, log, g.name())));
      }
    }
    // Round by round, every guard in turn, so that a drift in the machine's speed over the
    // minutes falls on all guards alike.
    List<Point> repeats = new ArrayList<>();
    for (int run = 2; run <= s.runs; run++) {
      for (double load : keyLoads) {
        for (Guard g : s.guards) {
          repeats.add(Point.of(g.name(), load, runOnce(s, g, load, s.seed + run - 1, log,
              g.name() + ", run " + run + " of " + s.runs)));
        }
      }
    }
    // Last, when the JIT has compiled the server and client: a cold JVM's first seconds would
    // count as the unloaded latency.
    Point baseline = null;
    if (s.baselineLoad > 0) {
      baseline = Point.of(Guard.NONE, s.baselineLoad,
          runOnce(s, Guard.all().get(0), s.baselineLoad, s.seed, log, "baseline, " + Guard.NONE));
    }
    // Grouped by load, guards in their order, so that each load's rows compare at a glance.
    List<Point> table = new ArrayList<>();
    for (double load : s.loads) {
      points.stream().filter(p -> p.load() == load).forEach(table::add);
    }
    out.println(header());
    if (baseline != null) {
      out.println(row(baseline) + "  (baseline)");
    }
    double last = Double.NaN;
    for (Point p : table) {
      if (p.load() != last && !Double.isNaN(last)) {
        out.println();
      }
      last = p.load();
      out.println(row(p));
    }
    List<Point> all = new ArrayList<>(points);
    all.addAll(repeats);
    String runs = repeats.isEmpty() ? "" : runsTable(all, keyLoads, s.guards);
    if (!runs.isEmpty()) {
      out.println();
      out.println(runs);
    }
    List<Goals.Goal> goals = Goals.check(all, baseline);
    if (!goals.isEmpty()) {
      out.println();
      out.println("Goals");
      for (Goals.Goal g : goals) {
        out.printf(Locale.ROOT, "  [%s] %s (%s)%n", g.met() ? "met" : "NOT met", g.goal(),
            g.evidence());
      }
    }
    out.flush();
    double p99Bound = baseline == null ? Double.NaN : Goals.P99_FACTOR * baseline.topP99Millis();
    String html = HtmlReport.render("Weir overload experiment", description, s.guards, table,
        baseline, capacity, p99Bound, goals, runs);
    return new Result(points, repeats, baseline, goals, html);
  }

  /**
   * Every run at the goals' loads, one line per guard and load: the top tier's success and the
   * total goodput of each run, in run order, then their mean.
   */
  static String runsTable(List<Point> all, List<Double> keyLoads, List<Guard> guards) {
    StringBuilder b = new StringBuilder("Every run at " + loads(keyLoads) + " (run 1 is the"
        + " table's):");
    for (double load : keyLoads) {
      for (Guard g : guards) {
        List<Point> runs = Goals.runs(all, g.name(), load);
        StringBuilder top = new StringBuilder();
        StringBuilder total = new StringBuilder();
        for (Point p : runs) {
          top.append(String.format(Locale.ROOT, " %5.1f", 100 * p.topSuccess()));
          total.append(String.format(Locale.ROOT, " %4.0f", p.totalGoodput()));
        }
        b.append(String.format(Locale.ROOT,
            "%n%-5s %-18s t%d ok%%%s (mean %.1f)   total/s%s (mean %.1f)", Goals.fmt(load) + "x",
            g.name(), runs.get(0).topTier(), top, 100 * Goals.mean(runs, Point::topSuccess), total,
            Goals.mean(runs, Point::totalGoodput)));
      }
    }
    return b.toString();
  }

  /** {@code 1.5x}, or {@code 1.5x and 3x}. */
  private static String loads(List<Double> loads) {
    return String.join(" and ", loads.stream().map(l -> Goals.fmt(l) + "x").toList());
  }

  private static LoadReport runOnce(Settings s, Guard guard, double load, long seed,
      PrintStream log, String label) throws Exception {
    double rate = load * s.capacity();
    log.printf(Locale.ROOT, "  running %s at %sx (%.0f req/s) for %d s ...%n", label,
        Goals.fmt(load), rate, s.warmupSeconds + s.seconds);
    Downstream downstream =
        new Downstream(s.connections, Duration.ofMillis(s.serviceMillis), seed);
    try (ExampleServer server = guard.start(downstream)) {
      return LoadGenerator.builder(server.workUri())
          .rate(rate)
          .warmup(Duration.ofSeconds(s.warmupSeconds))
          .duration(Duration.ofSeconds(s.seconds))
          .timeout(Duration.ofMillis(s.timeoutMillis))
          .mix(MIX)
          .seed(seed)
          .build()
          .run();
    }
  }

  static String header() {
    return String.format(Locale.ROOT,
        "%-5s %-18s %9s %8s %8s %8s %7s  %6s %6s %6s %7s %6s  %7s %7s", "load", "guard",
        "offered/s", "t1 ok/s", "t5 ok/s", "total/s", "t1 ok%", "200", "429", "503", "timeout",
        "other", "t1 p50", "t1 p99");
  }

  /** One table row; the status mix is in percent of all requests sent. */
  static String row(Point p) {
    return String.format(Locale.ROOT,
        "%-5s %-18s %9.0f %8.0f %8.0f %8.0f %6.1f%%  %5.1f%% %5.1f%% %5.1f%% %6.1f%% %5.1f%%"
        + "  %7s %7s", Goals.fmt(p.load()) + "x", p.guard(), p.offeredPerSecond(),
        p.topGoodput(), p.otherGoodput(), p.totalGoodput(), 100 * p.topSuccess(),
        100 * p.share(Status.OK), 100 * p.share(Status.TOO_MANY_REQUESTS),
        100 * p.share(Status.UNAVAILABLE), 100 * p.share(Status.TIMEOUT),
        100 * p.share(Status.OTHER), millis(p.topP50Millis()), millis(p.topP99Millis()));
  }

  private static String millis(double ms) {
    return Double.isNaN(ms) ? "-" : String.format(Locale.ROOT, "%.1f", ms);
  }

  private static void write(Path path, String html) throws IOException {
    Path parent = path.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    Files.writeString(path, html, StandardCharsets.UTF_8);
  }

  private static List<String> names() {
    return Guard.all().stream().map(Guard::name).toList();
  }

  /** The experiment's options. */
  static final class Settings {
    int seconds = 6;
    int warmupSeconds = 2;
    List<Double> loads = List.of(0.5, 1.0, 1.5, 2.0, 3.0, 4.0);
    List<Guard> guards = Guard.all();
    double baselineLoad = 0.3;
    int connections = 8;
    int serviceMillis = 20;
    int timeoutMillis = 1000;
    long seed = 42;
    int runs = 3;
    Path html = Path.of("reports", "overload-experiment.html");

    double capacity() {
      return connections * 1000.0 / serviceMillis;
    }

    /**
     * The settings, or null if {@code --help} was asked for.
     *
     * @throws IllegalArgumentException naming the option that is wrong
     */
    static Settings parse(String[] args) {
      Map<String, String> o = options(args);
      if (o.containsKey("help")) {
        return null;
      }
      Settings s = new Settings();
      s.seconds = (int) number(o, "seconds", s.seconds, 1, 600, true);
      s.warmupSeconds = (int) number(o, "warmup", s.warmupSeconds, 0, 600, true);
      if (o.containsKey("loads")) {
        List<Double> loads = new ArrayList<>();
        for (String part : o.get("loads").split(",", -1)) {
          double load = parse("loads", part, 0.01, 100, false);
          if (loads.contains(load)) {
            throw new IllegalArgumentException("--loads lists " + part.trim() + " twice");
          }
          loads.add(load);
        }
        s.loads = List.copyOf(loads);
      }
      if (o.containsKey("guards")) {
        List<Guard> guards = new ArrayList<>();
        for (String name : o.get("guards").split(",", -1)) {
          Guard g = Guard.all().stream().filter(x -> x.name().equals(name.trim())).findFirst()
              .orElseThrow(() -> new IllegalArgumentException("--guards: unknown guard '" + name
                  + "'; guards are " + String.join(",", names())));
          if (guards.contains(g)) {
            throw new IllegalArgumentException("--guards lists " + g.name() + " twice");
          }
          guards.add(g);
        }
        s.guards = List.copyOf(guards);
      }
      s.baselineLoad = number(o, "baseline", s.baselineLoad, 0, 100, false);
      s.connections = (int) number(o, "connections", s.connections, 1, 1000, true);
      s.serviceMillis = (int) number(o, "service-ms", s.serviceMillis, 1, 10_000, true);
      s.timeoutMillis = (int) number(o, "timeout-ms", s.timeoutMillis, 1, 60_000, true);
      s.seed = (long) number(o, "seed", s.seed, Long.MIN_VALUE, Long.MAX_VALUE, true);
      s.runs = (int) number(o, "runs", s.runs, 1, 20, true);
      if (o.containsKey("html")) {
        String html = o.get("html");
        s.html = html.equals("none") ? null : Path.of(html);
      }
      for (double load : s.loads) {
        if (load * s.capacity() > 20_000) {
          throw new IllegalArgumentException(String.format(Locale.ROOT,
              "--loads %s is %.0f req/s, more than this experiment's client sends (20000)",
              Goals.fmt(load), load * s.capacity()));
        }
      }
      return s;
    }

    private static final List<String> KNOWN = List.of("seconds", "warmup", "loads", "guards",
        "baseline", "connections", "service-ms", "timeout-ms", "seed", "runs", "html", "help");

    /** {@code --name value}, {@code --name=value} or, for {@code --help}, {@code --name}. */
    private static Map<String, String> options(String[] args) {
      Map<String, String> o = new LinkedHashMap<>();
      for (int i = 0; i < args.length; i++) {
        String arg = args[i];
        if (!arg.startsWith("--")) {
          throw new IllegalArgumentException("unexpected argument '" + arg + "'");
        }
        String name = arg.substring(2);
        String value = null;
        int eq = name.indexOf('=');
        if (eq >= 0) {
          value = name.substring(eq + 1);
          name = name.substring(0, eq);
        }
        if (!KNOWN.contains(name)) {
          throw new IllegalArgumentException("unknown option --" + name + "; options are --"
              + String.join(", --", KNOWN));
        }
        if (name.equals("help")) {
          if (value != null) {
            throw new IllegalArgumentException("--help takes no value");
          }
          o.put(name, "");
          continue;
        }
        if (value == null) {
          if (i + 1 >= args.length) {
            throw new IllegalArgumentException("--" + name + " needs a value");
          }
          value = args[++i];
        }
        o.put(name, value);
      }
      return o;
    }

    private static double number(Map<String, String> o, String name, double defaultValue,
        double min, double max, boolean integer) {
      return o.containsKey(name) ? parse(name, o.get(name), min, max, integer) : defaultValue;
    }

    private static double parse(String name, String text, double min, double max,
        boolean integer) {
      double v;
      try {
        v = integer ? Long.parseLong(text.trim()) : Double.parseDouble(text.trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("--" + name + " must be " + (integer ? "an integer"
            : "a number") + ", was '" + text + "'");
      }
      if (!(v >= min && v <= max)) {
        throw new IllegalArgumentException("--" + name + " must be in " + Goals.fmt(min) + ".."
            + Goals.fmt(max) + ", was " + text.trim());
      }
      return v;
    }
  }
}
