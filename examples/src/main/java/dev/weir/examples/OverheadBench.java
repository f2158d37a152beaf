package dev.weir.examples;

import dev.weir.servlet.WeirFilter;
import jakarta.servlet.Filter;
import java.io.PrintStream;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * Measures what {@code new WeirFilter()} costs when there is no overload: the demo's endpoint at
 * half its capacity, and an endpoint that answers at once (where the filter's own per-request
 * cost is not hidden by the downstream's 20 ms). Runs alternate between no filter and the filter,
 * each on a fresh server, and the one that goes first alternates too, so that drift in a shared
 * machine's load and the order of runs hit both alike.
 */
public final class OverheadBench {
  static final String USAGE = String.join("\n",
      "Usage: bin/demo overhead [options]",
      "  --seconds N      measured seconds per run (default 10)",
      "  --warmup N       warm-up seconds per run (default 3)",
      "  --rounds N       runs of each kind per endpoint, alternating (default 2)",
      "  --load X         load on GET /work as a multiple of its capacity (default 0.5)",
      "  --hello-rate N   req/s on GET /hello, which answers at once; 0 skips it (default 1000)",
      "  --seed N         seed (default 42)",
      "  --help           this text");

  private OverheadBench() {}

  public static void main(String[] args) throws Exception {
    Args a;
    try {
      a = Args.parse(args, "seconds", "warmup", "rounds", "load", "hello-rate", "seed", "help");
      if (a.flag("help")) {
        System.out.println(USAGE);
        return;
      }
      int seconds = a.intValue("seconds", 10, 1, 600);
      int warmup = a.intValue("warmup", 3, 0, 600);
      int rounds = a.intValue("rounds", 2, 1, 20);
      double load = a.doubleValue("load", 0.5, 0.01, 0.95);
      int helloRate = a.intValue("hello-rate", 1000, 0, 20_000);
      long seed = a.longValue("seed", 42);
      run(System.out, System.err, seconds, warmup, rounds, load, helloRate, seed);
    } catch (IllegalArgumentException e) {
      System.err.println("overhead: " + e.getMessage());
      System.err.println(USAGE);
      System.exit(2);
    }
  }

  static void run(PrintStream out, PrintStream log, int seconds, int warmup, int rounds,
      double load, int helloRate, long seed) throws Exception {
    Duration service = Duration.ofMillis(20);
    int connections = 8;
    double rate = load * connections * 1000.0 / service.toMillis();
    out.printf(Locale.ROOT, "Weir filter overhead, no overload: %d round(s) of %d s measured per"
        + " server, alternating, Poisson arrivals%n%n", rounds, seconds);
    bench(out, log, String.format(Locale.ROOT, "GET /work at %.2fx capacity (%.0f req/s)", load,
        rate), ExampleServer::workUri, rate, seconds, warmup, rounds, seed, connections, service);
    if (helloRate > 0) {
      bench(out, log, "GET /hello (no downstream) at " + helloRate + " req/s",
          ExampleServer::helloUri, helloRate, seconds, warmup, rounds, seed, connections, service);
    }
  }

  private static void bench(PrintStream out, PrintStream log, String title,
      Function<ExampleServer, URI> endpoint, double rate, int seconds, int warmup, int rounds,
      long seed, int connections, Duration service) throws Exception {
    List<TierStats> without = new ArrayList<>();
    List<TierStats> with = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      boolean[] order = round % 2 == 0 ? new boolean[] {false, true} : new boolean[] {true, false};
      for (boolean protect : order) {
        log.printf(Locale.ROOT, "  running %s, %s, round %d ...%n", title,
            protect ? "with Weir" : "no filter", round + 1);
        Filter filter = protect ? new WeirFilter() : null;
        try (ExampleServer server =
            ExampleServer.start(new Downstream(connections, service, seed + round), filter)) {
          LoadReport report = LoadGenerator.builder(endpoint.apply(server))
              .rate(rate)
              .warmup(Duration.ofSeconds(warmup))
              .duration(Duration.ofSeconds(seconds))
              .seed(seed + round)
              .build()
              .run();
          (protect ? with : without).add(report.total());
        }
      }
    }
    out.println(title);
    out.println(String.format(Locale.ROOT, "%-10s %-6s %9s %9s %7s %7s %8s %8s %8s", "server",
        "round", "offered/s", "goodput/s", "200", "429/503", "p50 ms", "p90 ms", "p99 ms"));
    for (int round = 0; round < rounds; round++) {
      out.println(row("no filter", String.valueOf(round + 1), without.get(round)));
      out.println(row("Weir", String.valueOf(round + 1), with.get(round)));
    }
    if (rounds > 1) {
      out.println(row("no filter", "all", TierStats.merge(without, (double) seconds * rounds)));
      out.println(row("Weir", "all", TierStats.merge(with, (double) seconds * rounds)));
    }
    out.println();
    out.flush();
  }

  private static String row(String server, String round, TierStats t) {
    long shed = t.count(Status.TOO_MANY_REQUESTS) + t.count(Status.UNAVAILABLE);
    return String.format(Locale.ROOT, "%-10s %-6s %9.1f %9.1f %6.2f%% %6.2f%% %8.2f %8.2f %8.2f",
        server, round, t.offeredPerSecond(), t.goodputPerSecond(), 100 * t.successRatio(),
        t.sent() == 0 ? 0 : 100.0 * shed / t.sent(), t.latencyMillis(0.5), t.latencyMillis(0.9),
        t.latencyMillis(0.99));
  }
}
