package dev.weir.examples.experiment;

import dev.weir.examples.Args;
import dev.weir.examples.Backends;
import dev.weir.examples.Compute;
import dev.weir.examples.Downstream;
import dev.weir.examples.ExampleServer;
import dev.weir.examples.LoadGenerator;
import dev.weir.examples.LoadReport;
import dev.weir.examples.Status;
import dev.weir.examples.TierStats;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.DoubleConsumer;

/**
 * An overload that comes and goes, second by second: {@code GET /work} (a pool of 8 downstream
 * connections, 20 ms each: 400 req/s), or {@code GET /compute} (CPU work on the server's cores),
 * at half its capacity, then for a while either a burst of three times its capacity or work three
 * times slower (the same load, now 1.5 times what it can serve), then half its capacity again;
 * 50% tier 1, 50% tier 5, 1 s client timeout, open loop, a fresh server a guard. Each second of
 * the measured window shows what each guard served, and the summary how long after the overload
 * ended the service was whole again: every tier served (at least {@value #WHOLE} of its requests
 * succeed) and tier 1's median latency within twice its median before the overload, in that second
 * and every later one. The median, not the P99: a second holds about a hundred of tier 1's
 * answers, whose P99 is nearly their maximum and jumps with one slow call.
 *
 * <p>The overload experiment measures steady overload; this bench measures the mission's other
 * half, meeting an overload as it starts and recovering the moment it ends. Runs alternate between
 * the guards, so that the machine's drift falls on each alike.
 */
public final class RecoveryBench {
  /** The share of a second's requests that must succeed for the service to count as whole. */
  static final double WHOLE = 0.99;
  /** The slice of the measured window each row shows. */
  static final Duration SLICE = Duration.ofSeconds(1);
  /** /work's downstream: the overload experiment's. */
  static final int CONNECTIONS = 8;
  static final Duration SERVICE_TIME = Duration.ofMillis(20);
  /** /work's capacity in req/s: its downstream's. */
  static final double WORK_CAPACITY =
      new Downstream(CONNECTIONS, SERVICE_TIME, 0).capacityPerSecond();
  /** Seconds of /compute's capacity probe: the overload experiment's. */
  static final int PROBE_SECONDS = 40;

  static final String USAGE = String.join("\n",
      "Usage: bin/demo recovery [options]",
      "  --guards a,b,...  guards (default none,jetty-qos,netflix-gradient2,weir)",
      "  --endpoint E      work (a downstream pool) or compute (CPU-bound; default work)",
      "  --compute-capacity N  /compute's capacity in req/s (default: measured closed-loop, no",
      "                    guard, for " + PROBE_SECONDS + " s)",
      "  --events e,e      burst: the load rises to --burst; slowdown: the downstream (or the",
      "                    CPU work) gets --slowdown times slower (default burst,slowdown)",
      "  --load X          the load before and after, a multiple of /work's capacity (default 0.5)",
      "  --burst X         the load during a burst (default 3)",
      "  --slowdown X      how many times slower the downstream gets (default 3)",
      "  --warmup N        seconds at the load before the measured window (default 10)",
      "  --before N        measured seconds before the overload (default 5)",
      "  --during N        seconds of overload (default 10)",
      "  --after N         measured seconds after it (default 15)",
      "  --runs N          runs of every guard and event, the i-th with seed + i - 1 (default 1)",
      "  --seed N          seed of arrivals, tiers, users and service times (default 42)",
      "  --help            this text",
      "Guards: " + String.join(", ", Settings.names()));

  private static final List<String> OPTIONS = List.of("endpoint", "compute-capacity", "guards",
      "events", "load", "burst", "slowdown", "warmup", "before", "during", "after", "runs", "seed",
      "help");

  private RecoveryBench() {}

  /** What changes during the overload. */
  enum Event {
    BURST, SLOWDOWN;

    static Event parse(String text) {
      for (Event e : values()) {
        if (e.name().equalsIgnoreCase(text)) {
          return e;
        }
      }
      throw new IllegalArgumentException("--events: unknown event '" + text
          + "'; events are burst, slowdown");
    }
  }

  /**
   * The bench's settings; see {@link #USAGE}. {@code capacity} is the endpoint's in req/s, 0 for
   * /compute's to be measured.
   */
  record Plan(Endpoint endpoint, double capacity, List<String> guards, List<Event> events,
      double load, double burst, double slowdown, int warmup, int before, int during, int after,
      int runs, long seed) {
    /** A plan for {@code GET /work}, whose capacity is its downstream's. */
    static Plan work(List<String> guards, List<Event> events, double load, double burst,
        double slowdown, int warmup, int before, int during, int after, int runs, long seed) {
      return new Plan(Endpoint.WORK, WORK_CAPACITY, guards, events, load, burst, slowdown, warmup,
          before, during, after, runs, seed);
    }

    Plan withCapacity(double c) {
      return new Plan(endpoint, c, guards, events, load, burst, slowdown, warmup, before, during,
          after, runs, seed);
    }

    int seconds() {
      return before + during + after;
    }
  }

  public static void main(String[] args) throws Exception {
    Plan plan;
    try {
      plan = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("recovery: " + e.getMessage());
      System.err.println(USAGE);
      System.exit(2);
      return;
    }
    if (plan == null) {
      System.out.println(USAGE);
      return;
    }
    run(plan, System.out);
  }

  /**
   * The plan the options ask for, or null for {@code --help}.
   *
   * @throws IllegalArgumentException naming the option, if one is unknown or out of range
   */
  static Plan parse(String[] args) {
    Args a = Args.parse(args, OPTIONS.toArray(new String[0]));
    if (a.flag("help")) {
      return null;
    }
    List<Event> events = new ArrayList<>();
    for (String e : a.string("events", "burst,slowdown").split(",", -1)) {
      Event event = Event.parse(e.trim());
      if (!events.contains(event)) {
        events.add(event);
      }
    }
    String endpoint = a.string("endpoint", "work");
    if (!endpoint.equals("work") && !endpoint.equals("compute")) {
      throw new IllegalArgumentException("--endpoint: unknown endpoint '" + endpoint
          + "'; endpoints are work, compute");
    }
    boolean compute = endpoint.equals("compute");
    double capacity = a.doubleValue("compute-capacity", 0, 0, 1_000_000);
    if (capacity > 0 && !compute) {
      throw new IllegalArgumentException("--compute-capacity: only with --endpoint compute");
    }
    return new Plan(compute ? Endpoint.COMPUTE : Endpoint.WORK,
        compute ? capacity : WORK_CAPACITY,
        Args.parseNames("--guards", a.string("guards", "none,jetty-qos,netflix-gradient2,weir"),
            Settings.names()),
        events,
        a.doubleValue("load", 0.5, 0.05, 0.9),
        a.doubleValue("burst", 3, 1, 20),
        a.doubleValue("slowdown", 3, 1, 20),
        a.intValue("warmup", 10, 0, 600),
        a.intValue("before", 5, 1, 600),
        a.intValue("during", 10, 1, 600),
        a.intValue("after", 15, 1, 600),
        a.intValue("runs", 1, 1, 100),
        a.longValue("seed", 42));
  }

  /** One guard's run of one event: each second's report, and the summary over them. */
  record Run(String guard, Event event, long seed, List<LoadReport> seconds, Summary summary) {}

  /**
   * One run's summary. Latencies are tier 1's, in milliseconds; {@code recoveredAfter} is the
   * seconds from the overload's end to the first second from which every second is whole, or -1
   * if the window ended first.
   */
  record Summary(double medianBefore, double p99Before, double goodputDuring, double tier1During,
      double p99During, double goodputAfter, int recoveredAfter, long failedAfterRecovery) {}

  static void run(Plan plan, PrintStream out) throws Exception {
    if (plan.capacity <= 0) {
      int clients = CapacityProbe.CLIENTS_PER_CORE * Runtime.getRuntime().availableProcessors();
      out.printf(Locale.ROOT, "measuring the capacity of GET /compute closed-loop, %d clients, no"
          + " guard, for %d s ...%n", clients, PROBE_SECONDS);
      try (ExampleServer server = ExampleServer.start(backends(0), null)) {
        plan = plan.withCapacity(
            CapacityProbe.measure(server.computeUri(), clients, PROBE_SECONDS));
      }
    }
    String endpoint = plan.endpoint == Endpoint.COMPUTE
        ? String.format(Locale.ROOT, "GET /compute: %d rounds of CPU work, %.0f req/s",
            Compute.DEFAULT_ROUNDS, plan.capacity)
        : String.format(Locale.ROOT, "GET /work: %d connections x %d ms = %.0f req/s",
            CONNECTIONS, SERVICE_TIME.toMillis(), plan.capacity);
    out.printf(Locale.ROOT, "%s; load %.2fx, a burst of %.1fx or work %.1f times slower for %d s;"
        + " 1-s rows; %s%n", endpoint, plan.load, plan.burst, plan.slowdown, plan.during,
        "50% tier 1, 50% tier 5, 1 s client timeout");
    Map<String, Guard> byName = new LinkedHashMap<>();
    int cores = Runtime.getRuntime().availableProcessors();
    for (Guard g : Guard.all(plan.endpoint.handPickedLimit(CONNECTIONS, cores),
        plan.endpoint.handPickedRule)) {
      byName.put(g.name(), g);
    }
    List<Run> runs = new ArrayList<>();
    for (Event event : plan.events) {
      for (int i = 0; i < plan.runs; i++) {
        long seed = plan.seed + i;
        List<Run> round = new ArrayList<>();
        for (String name : plan.guards) {
          Run r = runOnce(plan, byName.get(name), event, seed);
          round.add(r);
          runs.add(r);
        }
        printSeconds(out, plan, event, seed, round);
      }
    }
    printSummary(out, plan, runs);
  }

  static Backends backends(long seed) {
    return new Backends(new Downstream(CONNECTIONS, SERVICE_TIME, seed),
        new Compute(Compute.DEFAULT_ROUNDS));
  }

  static Run runOnce(Plan plan, Guard guard, Event event, long seed) throws Exception {
    Backends backends = backends(seed);
    DoubleConsumer slowDown = plan.endpoint == Endpoint.COMPUTE
        ? backends.compute()::slowDown : backends.downstream()::slowDown;
    try (ExampleServer server = guard.start(backends)) {
      double base = plan.load * plan.capacity();
      Duration start = Duration.ofSeconds(plan.before);
      Duration end = Duration.ofSeconds(plan.before + plan.during);
      LoadGenerator.Builder b = LoadGenerator.builder(plan.endpoint.uri(server))
          .rate(base)
          .warmup(Duration.ofSeconds(plan.warmup))
          .duration(Duration.ofSeconds(plan.seconds()))
          .timeout(Duration.ofSeconds(1))
          .slices(SLICE)
          .seed(seed);
      if (event == Event.BURST) {
        b.rateFrom(start, plan.burst * plan.capacity()).rateFrom(end, base);
      } else {
        b.at(start, () -> slowDown.accept(plan.slowdown)).at(end, () -> slowDown.accept(1));
      }
      LoadReport report = b.build().run();
      return new Run(guard.label(), event, seed, report.slices(), summarize(plan, report.slices()));
    }
  }

  /** The summary of one run's seconds. */
  static Summary summarize(Plan plan, List<LoadReport> seconds) {
    int end = plan.before + plan.during;
    TierStats before = merged(seconds, 0, plan.before, 1);
    double medianBefore = before.latencyMillis(0.5);
    TierStats during = merged(seconds, plan.before, end, TierStats.ALL);
    TierStats tier1During = merged(seconds, plan.before, end, 1);
    TierStats after = merged(seconds, end, seconds.size(), TierStats.ALL);
    int recovered = -1;
    for (int s = seconds.size() - 1; s >= end && whole(seconds.get(s), medianBefore); s--) {
      recovered = s - end;
    }
    long failedAfter = 0;
    if (recovered >= 0) {
      TierStats rest = merged(seconds, end + recovered, seconds.size(), TierStats.ALL);
      failedAfter = rest.sent() - rest.count(Status.OK);
    }
    return new Summary(medianBefore, before.latencyMillis(0.99), during.goodputPerSecond(),
        tier1During.successRatio(), tier1During.latencyMillis(0.99), after.goodputPerSecond(),
        recovered, failedAfter);
  }

  /**
   * Whether a second is whole: at least {@link #WHOLE} of every tier's requests succeeded, and tier
   * 1's median latency is within twice {@code medianBefore}.
   */
  static boolean whole(LoadReport second, double medianBefore) {
    for (TierStats t : second.byTier().values()) {
      if (t.sent() > 0 && t.successRatio() < WHOLE) {
        return false;
      }
    }
    return !(second.tier(1).latencyMillis(0.5) > 2 * medianBefore);
  }

  /** Seconds {@code from} (inclusive) to {@code to} as one report's stats of {@code tier}. */
  static TierStats merged(List<LoadReport> seconds, int from, int to, int tier) {
    List<TierStats> parts = new ArrayList<>();
    for (int s = from; s < to; s++) {
      LoadReport r = seconds.get(s);
      if (tier == TierStats.ALL) {
        parts.addAll(r.byTier().values());
      } else {
        parts.add(r.tier(tier));
      }
    }
    return TierStats.merge(parts, Math.max(1, to - from) * SLICE.toNanos() / 1e9);
  }

  private static void printSeconds(PrintStream out, Plan plan, Event event, long seed,
      List<Run> round) {
    out.printf(Locale.ROOT, "%n%s, seed %d: each second, goodput req/s / tier 1 ok %% / tier 5"
        + " ok %% / tier 1 P99 ms%n", event == Event.BURST ? "a burst"
        : plan.endpoint == Endpoint.COMPUTE ? "slower CPU work" : "a slower downstream",
        seed);
    StringBuilder head = new StringBuilder(String.format(Locale.ROOT, "%4s %7s", "s", "offered"));
    for (Run r : round) {
      head.append(String.format(Locale.ROOT, " | %-27s", abbreviate(r.guard, 27)));
    }
    out.println(head);
    for (int s = 0; s < plan.seconds(); s++) {
      String phase = s < plan.before ? " " : s < plan.before + plan.during ? "*" : " ";
      StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "%3d%s %7.0f", s, phase,
          round.get(0).seconds.get(s).total().offeredPerSecond()));
      for (Run r : round) {
        LoadReport second = r.seconds.get(s);
        row.append(String.format(Locale.ROOT, " | %5.0f %5.1f %5.1f %7s",
            second.total().goodputPerSecond(), 100 * second.tier(1).successRatio(),
            100 * second.tier(5).successRatio(), millis(second.tier(1).latencyMillis(0.99))));
      }
      out.println(row);
    }
  }

  private static void printSummary(PrintStream out, Plan plan, List<Run> runs) {
    out.printf(Locale.ROOT, "%nSummary (tier 1's latency in ms; whole: every tier at least %.0f%%"
        + " served, tier 1's median within twice its median before)%n", 100 * WHOLE);
    out.printf(Locale.ROOT, "%-9s %-28s %4s | %9s | %8s %8s %8s | %8s %13s %8s%n", "event",
        "guard", "seed", "P99 before", "goodput", "tier 1", "P99", "goodput", "whole after",
        "failed");
    for (Run r : runs) {
      Summary s = r.summary;
      out.printf(Locale.ROOT, "%-9s %-28s %4d | %10s | %8.1f %7.1f%% %8s | %8.1f %13s %8d%n",
          r.event.name().toLowerCase(Locale.ROOT), abbreviate(r.guard, 28), r.seed,
          millis(s.p99Before()), s.goodputDuring, 100 * s.tier1During, millis(s.p99During),
          s.goodputAfter, s.recoveredAfter < 0 ? "not in " + plan.after + " s"
              : s.recoveredAfter + " s", s.failedAfterRecovery);
    }
    out.println("(goodput and tier 1 columns: during the overload, then after it; failed: requests"
        + " not served from the recovery on)");
  }

  private static String millis(double ms) {
    return TierStats.millisText(ms, 0);
  }

  private static String abbreviate(String s, int width) {
    return s.length() <= width ? s : s.substring(0, width - 1) + "~";
  }
}
