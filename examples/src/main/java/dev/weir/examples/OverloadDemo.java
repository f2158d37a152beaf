package dev.weir.examples;

import dev.weir.Priority;
import dev.weir.Snapshot;
import dev.weir.servlet.WeirFilter;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The overload demo: the same application, first unprotected and then behind {@code new
 * WeirFilter()} (zero configuration), each on a fresh server, under an open-loop load of 1.5x and
 * 3x its capacity; prints what the clients of each tier saw, side by side.
 *
 * <p>Everything runs in this process on 127.0.0.1 and stops by itself, in about {@code 4 x
 * (warm-up + seconds + 1)} seconds: about a minute with the defaults. Run with {@code --help} for
 * the options.
 */
public final class OverloadDemo {
  static final String USAGE = String.join("\n",
      "Usage: bin/demo [options]",
      "  --seconds N       measured seconds per run (default 10)",
      "  --warmup N        warm-up seconds per run, not counted (default 3)",
      "  --loads L,L       offered loads as multiples of capacity (default 1.5,3)",
      "  --mix T:W,T:W     tiers and their weights (default 1:50,5:50; tier 0 is most important)",
      "  --connections N   downstream connections (default 8)",
      "  --service-ms N    mean downstream service time (default 20): capacity = N / mean",
      "  --timeout-ms N    client timeout (default 1000)",
      "  --fixed-rate      equal gaps between requests instead of Poisson arrivals",
      "  --seed N          seed of arrivals, tiers, users and service times (default 42)",
      "  --help            this text");

  private OverloadDemo() {}

  public static void main(String[] args) throws Exception {
    Settings s;
    try {
      s = Settings.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("demo: " + e.getMessage());
      System.err.println(USAGE);
      System.exit(2);
      return;
    }
    if (s == null) {
      System.out.println(USAGE);
      return;
    }
    run(s, System.out, System.err);
  }

  /** Runs every load without and with Weir; progress goes to {@code log}, tables to {@code out}. */
  static void run(Settings s, PrintStream out, PrintStream log) throws Exception {
    double capacity = s.connections * 1000.0 / s.serviceMillis;
    out.printf(Locale.ROOT, "Weir overload demo%n"
        + "  Server: Jetty 12, %d threads; GET /work holds 1 of %d downstream connections for"
        + " ~%d ms (lognormal)%n"
        + "          => capacity %.0f req/s%n"
        + "  Clients: open loop, %s arrivals, %s, timeout %d ms%n"
        + "  Each run: fresh server, %d s warm-up, then %d s measured%n%n",
        ExampleServer.THREADS, s.connections, s.serviceMillis, capacity,
        s.poisson ? "Poisson" : "fixed-rate", s.mix, s.timeoutMillis, s.warmupSeconds,
        s.seconds);
    List<String> summary = new ArrayList<>();
    for (double load : s.loads) {
      LoadReport without = runOnce(s, load * capacity, null, log,
          String.format(Locale.ROOT, "%.1fx without Weir", load));
      LoadReport with = runOnce(s, load * capacity, new WeirFilter(), log,
          String.format(Locale.ROOT, "%.1fx with Weir", load));
      printComparison(out, load, load * capacity, without, with);
      out.flush();
      summary.add(summary(load, s.mix, without, with));
    }
    out.println("Summary: goodput, and the share of the most important tier's requests served");
    summary.forEach(out::println);
  }

  /** One line of the closing summary: goodput and the top tier's success, without and with. */
  static String summary(double load, TierMix mix, LoadReport without, LoadReport with) {
    int top = Arrays.stream(mix.tiers()).min().orElseThrow();
    return String.format(Locale.ROOT,
        "  %.1fx: without Weir %4.0f req/s, tier %d %5.1f%%  |  with Weir %4.0f req/s, tier %d"
        + " %5.1f%%", load, without.total().goodputPerSecond(), top,
        100 * without.tier(top).successRatio(), with.total().goodputPerSecond(), top,
        100 * with.tier(top).successRatio());
  }

  private static LoadReport runOnce(Settings s, double rate, WeirFilter filter, PrintStream log,
      String label) throws Exception {
    log.printf(Locale.ROOT, "  running %s: %.0f req/s for %d s ...%n", label, rate,
        s.warmupSeconds + s.seconds);
    Downstream downstream =
        new Downstream(s.connections, Duration.ofMillis(s.serviceMillis), s.seed);
    ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "demo-sampler");
      t.setDaemon(true);
      return t;
    });
    try (ExampleServer server = ExampleServer.start(downstream, filter)) {
      // What the server looks like just before the measured window ends.
      ScheduledFuture<String> state = sampler.schedule(() -> describe(downstream, filter),
          s.warmupSeconds * 1000L + s.seconds * 1000L - 200, TimeUnit.MILLISECONDS);
      LoadReport report = LoadGenerator.builder(server.workUri())
          .rate(rate)
          .warmup(Duration.ofSeconds(s.warmupSeconds))
          .duration(Duration.ofSeconds(s.seconds))
          .timeout(Duration.ofMillis(s.timeoutMillis))
          .mix(s.mix)
          .poisson(s.poisson)
          .seed(s.seed)
          .build()
          .run();
      log.printf(Locale.ROOT, "    goodput %.0f req/s; the client kept its schedule to %.1f ms%n",
          report.total().goodputPerSecond(), report.maxSendLagMillis());
      log.printf(Locale.ROOT, "    near the end: %s%n", state.get(5, TimeUnit.SECONDS));
      return report;
    } finally {
      sampler.shutdownNow();
    }
  }

  private static String describe(Downstream downstream, WeirFilter filter) {
    StringBuilder sb = new StringBuilder(String.format(Locale.ROOT,
        "%d callers waiting for a downstream connection", downstream.waiting()));
    if (filter != null) {
      for (Snapshot snap : filter.snapshots().values()) {
        sb.append(String.format(Locale.ROOT, "; Weir limit %d, in flight %d, queued %d,"
            + " cutting off %.0f%%%s", snap.limit(), snap.inflight(), snap.queued(),
            100 * snap.rejectionRatio(), Priority.isValid(snap.cutoff())
                ? " from priority " + Priority.toString(snap.cutoff()) : ""));
      }
    }
    return sb.toString();
  }

  /** Prints one load's table: for each tier and in all, the run without Weir above the one with. */
  static void printComparison(PrintStream out, double load, double rate, LoadReport without,
      LoadReport with) {
    out.printf(Locale.ROOT, "Offered load %.1fx capacity (%.0f req/s), %.0f s measured%n", load,
        rate, without.seconds());
    out.println(header());
    List<Integer> tiers = new ArrayList<>(without.byTier().keySet());
    for (int tier : tiers) {
      out.println(row(String.valueOf(tier), "without Weir", without.tier(tier)));
      out.println(row(String.valueOf(tier), "with Weir", with.tier(tier)));
    }
    if (tiers.size() > 1) {
      out.println(row("all", "without Weir", without.total()));
      out.println(row("all", "with Weir", with.total()));
    }
    out.println();
  }

  static String header() {
    return String.format(Locale.ROOT, "%-4s  %-12s %9s %9s  %6s %6s %6s %8s %6s  %7s %7s",
        "tier", "server", "offered/s", "goodput/s", "200", "429", "503", "timeout", "other",
        "p50 ms", "p99 ms");
  }

  /** One table row; the status mix is in percent of the requests sent. */
  static String row(String tier, String server, TierStats t) {
    long sent = t.sent();
    return String.format(Locale.ROOT,
        "%-4s  %-12s %9.1f %9.1f  %5.1f%% %5.1f%% %5.1f%% %7.1f%% %5.1f%%  %7s %7s",
        tier, server, t.offeredPerSecond(), t.goodputPerSecond(),
        percent(t.count(Status.OK), sent), percent(t.count(Status.TOO_MANY_REQUESTS), sent),
        percent(t.count(Status.UNAVAILABLE), sent), percent(t.count(Status.TIMEOUT), sent),
        percent(t.count(Status.OTHER), sent),
        millis(t.latencyMillis(0.50)), millis(t.latencyMillis(0.99)));
  }

  private static double percent(long part, long whole) {
    return whole == 0 ? 0 : 100.0 * part / whole;
  }

  private static String millis(double ms) {
    return TierStats.millisText(ms, 1);
  }

  /** The demo's options. */
  static final class Settings {
    int seconds = 10;
    int warmupSeconds = 3;
    List<Double> loads = List.of(1.5, 3.0);
    TierMix mix = TierMix.parse("1:50,5:50");
    int connections = 8;
    int serviceMillis = 20;
    int timeoutMillis = 1000;
    boolean poisson = true;
    long seed = 42;

    /** The settings, or null if {@code --help} was asked for. */
    static Settings parse(String[] args) {
      Args a = Args.parse(args, "seconds", "warmup", "loads", "mix", "connections", "service-ms",
          "timeout-ms", "fixed-rate", "seed", "help");
      if (a.flag("help")) {
        return null;
      }
      Settings s = new Settings();
      s.seconds = a.intValue("seconds", s.seconds, 1, 600);
      s.warmupSeconds = a.intValue("warmup", s.warmupSeconds, 0, 600);
      s.loads = a.doubles("loads", s.loads, 0.01, 100);
      s.mix = TierMix.parse(a.string("mix", "1:50,5:50"));
      s.connections = a.intValue("connections", s.connections, 1, 1000);
      s.serviceMillis = a.intValue("service-ms", s.serviceMillis, 1, 10_000);
      s.timeoutMillis = a.intValue("timeout-ms", s.timeoutMillis, 1, 60_000);
      s.poisson = !a.flag("fixed-rate");
      s.seed = a.longValue("seed", s.seed);
      double capacity = s.connections * 1000.0 / s.serviceMillis;
      for (double load : s.loads) {
        if (load * capacity > 20_000) {
          throw new IllegalArgumentException(String.format(Locale.ROOT,
              "--loads %.2f is %.0f req/s, more than this demo's client sends (20000)", load,
              load * capacity));
        }
      }
      return s;
    }
  }
}
