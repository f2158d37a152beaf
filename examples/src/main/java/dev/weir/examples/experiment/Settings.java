package dev.weir.examples.experiment;

import dev.weir.examples.Args;
import dev.weir.examples.Compute;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
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
      "  --settle N        before its first point at an endpoint, each guard's server runs at",
      "                    1.5x (or the highest load, without 1.5) in 2 s steps until the JIT",
      "                    is quiet, at most N s (default 30; 0: not at all)",
      "  --loads L,L       offered loads as multiples of each endpoint's capacity",
      "                    (default 0.5,1,1.5,2,3,4)",
      "  --guards G,G      guards to run (default all: " + String.join(",", names()) + ")",
      "  --baseline L      load of the unloaded reference run, no guard: above 0, at most "
          + Goals.fmt(Settings.MAX_BASELINE) + " (default 0.3; 0: none)",
      "  --connections N   downstream connections of /work (default 8)",
      "  --two-routes      /work's requests alternate between /work and /work/2, the same",
      "                    work on two servlet mappings: two routes that share the threads",
      "  --service-ms N    mean downstream service time (default 20): /work's capacity is",
      "                    connections / mean",
      "  --compute-rounds N  hash rounds of one GET /compute (default " + Compute.DEFAULT_ROUNDS
          + ", about 4 ms of CPU",
      "                    on a 2-core VM)",
      "  --compute-capacity N  /compute's capacity in req/s (default: measured closed-loop, no",
      "                    guard, for 40 s: the best 5 s; given, the same loop still runs",
      "                    10 s, unmeasured, to compile the work)",
      "  --timeout-ms N    client timeout (default 1000)",
      "  --seed N          seed of arrivals, tiers, users and service times (default 42)",
      "  --runs N          runs of every guard at the goals' loads, 1.5x and 3x, the i-th with",
      "                    seed + i - 1; the goals compare them in pairs (default 3)",
      "  --html PATH       where to write the HTML report (default"
          + " reports/overload-experiment.html; 'none' for no report); checked, and its",
      "                    directory created, before the run",
      "  --quick           a smoke run of about a minute and a half: --loads 1.5,3 --seconds 1",
      "                    --warmup 1 --settle 0 --runs 1, a 2 s capacity probe",
      "  --help            this text");
  /** The most requests per second the experiment's client is asked to send. */
  static final double MAX_RATE = 20_000;
  /**
   * The highest load of the unloaded reference run: at capacity or above, a queue builds and the
   * goal of staying within twice the unloaded P99 would be against an overloaded P99.
   */
  static final double MAX_BASELINE = 0.9;

  List<Endpoint> endpoints = List.of(Endpoint.values());
  int seconds = 6;
  int warmupSeconds = 2;
  /** The most a guard's warm-up before its first point may take; 0: none. */
  int settleSeconds = 30;
  List<Double> loads = List.of(0.5, 1.0, 1.5, 2.0, 3.0, 4.0);
  List<String> guards = names();
  double baselineLoad = 0.3;
  int connections = 8;
  /** /work's requests alternate between two routes to the same work. */
  boolean twoRoutes;
  int serviceMillis = 20;
  int computeRounds = Compute.DEFAULT_ROUNDS;
  /** /compute's capacity in requests per second; 0: measure it. */
  double computeCapacity = 0;
  /** The capacity probe's length: a cold JVM's rate rises for 15 to 40 s (CapacityProbe). */
  int probeSeconds = 40;
  int timeoutMillis = 1000;
  long seed = 42;
  int runs = 3;
  Path html = Path.of("reports", "overload-experiment.html");

  /** The load of each guard's warm-up: 1.5x, or the highest load if 1.5x is not run. */
  double settleLoad() {
    return loads.contains(1.5) ? 1.5 : loads.stream().mapToDouble(Double::doubleValue).max()
        .orElseThrow();
  }

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
      // Not 0: the first point of the run would measure a cold JVM (0 ok/s in one run).
      s.warmupSeconds = 1;
      s.settleSeconds = 0;
      s.runs = 1;
      s.probeSeconds = 2;
    }
    String endpointList = o.string("endpoints", null);
    if (endpointList != null) {
      List<String> keys = Arrays.stream(Endpoint.values()).map(e -> e.key).toList();
      s.endpoints = Args.parseNames("--endpoints", endpointList, keys).stream()
          .map(Endpoint::of).toList();
    }
    s.seconds = o.intValue("seconds", s.seconds, 1, 600);
    s.warmupSeconds = o.intValue("warmup", s.warmupSeconds, 0, 600);
    s.settleSeconds = o.intValue("settle", s.settleSeconds, 0, 600);
    s.loads = o.doubles("loads", s.loads, 0.01, 100);
    for (int i = 0; i < s.loads.size(); i++) {
      if (s.loads.indexOf(s.loads.get(i)) != i) {
        throw new IllegalArgumentException("--loads lists " + Goals.fmt(s.loads.get(i))
            + " twice");
      }
    }
    String guardList = o.string("guards", null);
    if (guardList != null) {
      s.guards = Args.parseNames("--guards", guardList, names());
    }
    s.baselineLoad = o.doubleValue("baseline", s.baselineLoad, 0, MAX_BASELINE);
    s.connections = o.intValue("connections", s.connections, 1, 1000);
    s.twoRoutes = o.flag("two-routes");
    s.serviceMillis = o.intValue("service-ms", s.serviceMillis, 1, 10_000);
    s.computeRounds = o.intValue("compute-rounds", s.computeRounds, 1, 1_000_000_000);
    s.computeCapacity = o.doubleValue("compute-capacity", s.computeCapacity, 1, MAX_RATE);
    s.timeoutMillis = o.intValue("timeout-ms", s.timeoutMillis, 1, 60_000);
    s.seed = o.longValue("seed", s.seed);
    s.runs = o.intValue("runs", s.runs, 1, 20);
    String html = o.string("html", null);
    if (html != null) {
      try {
        s.html = html.equals("none") ? null : Path.of(html);
      } catch (InvalidPathException e) {
        throw new IllegalArgumentException("--html " + html + " is not a path: "
            + e.getMessage());
      }
    }
    if (s.endpoints.contains(Endpoint.WORK)) {
      s.checkRates("", s.workCapacity());
    }
    if (s.endpoints.contains(Endpoint.COMPUTE) && s.computeCapacity > 0) {
      s.checkRates("", s.computeCapacity);
    }
    if (s.html != null) {
      checkWritable(s.html);
    }
    return s;
  }

  /**
   * Checks that no load, and not the baseline's, asks the client for more than it sends.
   *
   * @param what what set the capacity, to name in the message, such as " (capacity measured)"
   * @throws IllegalArgumentException naming the load that is too high
   */
  void checkRates(String what, double capacity) {
    checkRates("--loads", what, capacity, loads);
    if (baselineLoad > 0) {
      checkRates("--baseline", what, capacity, List.of(baselineLoad));
    }
  }

  private static void checkRates(String option, String what, double capacity,
      List<Double> loads) {
    for (double load : loads) {
      if (load * capacity > MAX_RATE) {
        throw new IllegalArgumentException(String.format(Locale.ROOT,
            "%s %s is %.0f req/s%s, more than this experiment's client sends (%.0f)",
            option, Goals.fmt(load), load * capacity, what, MAX_RATE));
      }
    }
  }

  /**
   * Creates the report's directory if missing and checks that the report can be written there,
   * so that a bad path fails now, not after the run. A report already there is left as it is.
   *
   * @throws IllegalArgumentException naming {@code --html} and the reason
   */
  static void checkWritable(Path html) {
    Path file = html.toAbsolutePath();
    try {
      if (file.getParent() != null) {
        Files.createDirectories(file.getParent());
      }
      if (Files.isDirectory(file)) {
        throw new IllegalArgumentException("--html " + html + " is a directory");
      }
      if (Files.exists(file)) {
        // Opened for appending, written nothing: the old report stays until the new one.
        Files.newOutputStream(file, StandardOpenOption.APPEND).close();
      } else {
        Files.newOutputStream(file, StandardOpenOption.CREATE_NEW).close();
        Files.delete(file);
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("--html " + html + " cannot be written: " + reason(e));
    } catch (SecurityException e) {
      throw new IllegalArgumentException("--html " + html + " cannot be written: "
          + e.getMessage());
    }
  }

  /** Why a file operation failed, in a few words and without the exception's class. */
  static String reason(IOException e) {
    if (e instanceof AccessDeniedException a) {
      return "permission denied (" + a.getFile() + ")";
    }
    if (e instanceof FileAlreadyExistsException a) {
      return a.getFile() + " exists and is not a directory";
    }
    if (e instanceof NoSuchFileException a) {
      return "cannot create " + a.getFile();
    }
    if (e instanceof FileSystemException f && f.getReason() != null) {
      return f.getFile() + ": " + f.getReason();
    }
    return String.valueOf(e.getMessage());
  }

  /** Every guard's name, in order. */
  static List<String> names() {
    return Guard.all().stream().map(Guard::name).toList();
  }

  private static final String[] KNOWN = {"endpoints", "seconds", "warmup", "loads", "guards",
      "baseline", "connections", "service-ms", "compute-rounds", "compute-capacity", "timeout-ms",
      "seed", "runs", "html", "quick", "settle", "help", "two-routes"};
}
