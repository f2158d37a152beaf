package dev.weir.examples.experiment;

import dev.weir.examples.Args;
import dev.weir.examples.Compute;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The {@link OverloadExperiment}'s options, parsed from the command line; see {@link #USAGE}.
 * {@code --quick} changes the defaults to a smoke run's, and any option given explicitly still
 * wins.
 */
final class Settings {
  static final String USAGE = String.join("\n",
      "Usage: bin/experiment [options]",
      "  --endpoints E,E   endpoints to overload, each behind every guard (default work,compute)",
      "  --seconds N       measured seconds per point (default 6)",
      "  --warmup N        warm-up seconds per point, not counted (default 2)",
      "  --loads L,L       offered loads as multiples of each endpoint's capacity",
      "                    (default 0.5,1,1.5,2,3,4)",
      "  --guards G,G      guards to run (default all: " + String.join(",", names()) + ")",
      "  --baseline L      load of the unloaded reference run, no guard (default 0.3; 0: none)",
      "  --connections N   downstream connections of /work (default 8)",
      "  --service-ms N    mean downstream service time (default 20): /work's capacity is",
      "                    connections / mean",
      "  --compute-rounds N  hash rounds of one GET /compute (default " + Compute.DEFAULT_ROUNDS
          + ", about 4 ms of CPU",
      "                    on a 2-core VM)",
      "  --compute-capacity N  /compute's capacity in req/s (default: measured closed-loop, no",
      "                    guard, for 3 s after a 2 s warm-up)",
      "  --timeout-ms N    client timeout (default 1000)",
      "  --seed N          seed of arrivals, tiers, users and service times (default 42)",
      "  --runs N          runs of every guard at the goals' loads, 1.5x and 3x, the i-th with",
      "                    seed + i - 1; the goals compare them in pairs (default 3)",
      "  --html PATH       where to write the HTML report (default"
          + " reports/overload-experiment.html; 'none' for no report)",
      "  --quick           a smoke run of about a minute: --loads 1.5,3 --seconds 1 --warmup 0",
      "                    --runs 1, a 1 s capacity probe after 1 s of warm-up",
      "  --help            this text");
  /** The most requests per second the experiment's client is asked to send. */
  static final double MAX_RATE = 20_000;

  List<Endpoint> endpoints = List.of(Endpoint.values());
  int seconds = 6;
  int warmupSeconds = 2;
  List<Double> loads = List.of(0.5, 1.0, 1.5, 2.0, 3.0, 4.0);
  List<String> guards = names();
  double baselineLoad = 0.3;
  int connections = 8;
  int serviceMillis = 20;
  int computeRounds = Compute.DEFAULT_ROUNDS;
  /** /compute's capacity in requests per second; 0: measure it. */
  double computeCapacity = 0;
  int probeWarmupSeconds = 2;
  int probeSeconds = 3;
  int timeoutMillis = 1000;
  long seed = 42;
  int runs = 3;
  Path html = Path.of("reports", "overload-experiment.html");

  /** /work's capacity: the downstream's connections over its mean service time. */
  double workCapacity() {
    return connections * 1000.0 / serviceMillis;
  }

  /**
   * The settings, or null if {@code --help} was asked for.
   *
   * @throws IllegalArgumentException naming the option that is wrong
   */
  static Settings parse(String[] args) {
    Args o = Args.parse(args, KNOWN);
    if (o.flag("help")) {
      return null;
    }
    Settings s = new Settings();
    if (o.flag("quick")) {
      s.loads = List.of(1.5, 3.0);
      s.seconds = 1;
      s.warmupSeconds = 0;
      s.runs = 1;
      s.probeWarmupSeconds = 1;
      s.probeSeconds = 1;
    }
    String endpointList = o.string("endpoints", null);
    if (endpointList != null) {
      List<Endpoint> endpoints = new ArrayList<>();
      for (String key : endpointList.split(",", -1)) {
        Endpoint e = Endpoint.of(key);
        if (endpoints.contains(e)) {
          throw new IllegalArgumentException("--endpoints lists " + e.key + " twice");
        }
        endpoints.add(e);
      }
      s.endpoints = List.copyOf(endpoints);
    }
    s.seconds = o.intValue("seconds", s.seconds, 1, 600);
    s.warmupSeconds = o.intValue("warmup", s.warmupSeconds, 0, 600);
    s.loads = o.doubles("loads", s.loads, 0.01, 100);
    for (int i = 0; i < s.loads.size(); i++) {
      if (s.loads.indexOf(s.loads.get(i)) != i) {
        throw new IllegalArgumentException("--loads lists " + Goals.fmt(s.loads.get(i))
            + " twice");
      }
    }
    String guardList = o.string("guards", null);
    if (guardList != null) {
      List<String> guards = new ArrayList<>();
      for (String name : guardList.split(",", -1)) {
        String g = name.trim();
        if (!names().contains(g)) {
          throw new IllegalArgumentException("--guards: unknown guard '" + name
              + "'; guards are " + String.join(",", names()));
        }
        if (guards.contains(g)) {
          throw new IllegalArgumentException("--guards lists " + g + " twice");
        }
        guards.add(g);
      }
      s.guards = List.copyOf(guards);
    }
    s.baselineLoad = o.doubleValue("baseline", s.baselineLoad, 0, 100);
    s.connections = o.intValue("connections", s.connections, 1, 1000);
    s.serviceMillis = o.intValue("service-ms", s.serviceMillis, 1, 10_000);
    s.computeRounds = o.intValue("compute-rounds", s.computeRounds, 1, 1_000_000_000);
    s.computeCapacity = o.doubleValue("compute-capacity", s.computeCapacity, 1, MAX_RATE);
    s.timeoutMillis = o.intValue("timeout-ms", s.timeoutMillis, 1, 60_000);
    s.seed = o.longValue("seed", s.seed);
    s.runs = o.intValue("runs", s.runs, 1, 20);
    String html = o.string("html", null);
    if (html != null) {
      s.html = html.equals("none") ? null : Path.of(html);
    }
    if (s.endpoints.contains(Endpoint.WORK)) {
      checkRates("", s.workCapacity(), s.loads);
    }
    if (s.endpoints.contains(Endpoint.COMPUTE) && s.computeCapacity > 0) {
      checkRates("", s.computeCapacity, s.loads);
    }
    return s;
  }

  /**
   * Checks that no load asks the client for more than it sends.
   *
   * @param what what set the capacity, to name in the message, such as " (capacity measured)"
   * @throws IllegalArgumentException naming the load that is too high
   */
  static void checkRates(String what, double capacity, List<Double> loads) {
    for (double load : loads) {
      if (load * capacity > MAX_RATE) {
        throw new IllegalArgumentException(String.format(Locale.ROOT,
            "--loads %s is %.0f req/s%s, more than this experiment's client sends (%.0f)",
            Goals.fmt(load), load * capacity, what, MAX_RATE));
      }
    }
  }

  /** Every guard's name, in order. */
  static List<String> names() {
    return Guard.all().stream().map(Guard::name).toList();
  }

  private static final String[] KNOWN = {"endpoints", "seconds", "warmup", "loads", "guards",
      "baseline", "connections", "service-ms", "compute-rounds", "compute-capacity", "timeout-ms",
      "seed", "runs", "html", "quick", "help"};
}
