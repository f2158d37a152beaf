package dev.weir.examples.experiment;

import dev.weir.examples.Args;
import dev.weir.examples.ExampleServer;
import dev.weir.examples.LoadGenerator;
import dev.weir.examples.LoadReport;
import dev.weir.examples.Observability;
import dev.weir.examples.TierStats;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A cold server on one core, overloaded from its first second: the example server in a fresh JVM
 * pinned to one core ({@code taskset}), this JVM (the load generator) pinned to the others, open-
 * loop load on {@code GET /compute} at a multiple of one core's capacity (50% tier 1, 50% tier 5,
 * 1 s client timeout), measured after a warm-up, one fresh JVM per run. The overload experiment
 * warms every server until its JIT is quiet before it measures; this bench does the opposite, so
 * that a guard whose limit runs away while the JIT changes the service's speed under it shows it.
 *
 * <p>One core, because that is where the start is hardest: the JIT's compiler threads, the
 * server and the work share it, and the service's speed changes most while the limit learns.
 * Runs alternate between the guards, so that the machine's drift over minutes falls on each
 * alike. A run serving under {@value #COLLAPSED} of what it could serve (the capacity, or the
 * offered rate if lower) is counted as collapsed. For Weir's guards the run also reads the
 * route's limit from {@code /weir/status} at its end.
 */
public final class ColdStartBench {
  /** A run serving under this share of what it could serve is collapsed: healthy ones serve more. */
  static final double COLLAPSED = 0.6;
  /** Seconds of the capacity probe: long enough for the JIT to finish on one core. */
  static final int PROBE_SECONDS = 40;

  static final String USAGE = String.join("\n",
      "Usage: bin/demo cold-start [options]",
      "  --runs N          cold starts per guard (default 5)",
      "  --guards a,b,...  guards (default weir,netflix-gradient2)",
      "  --load X          load, a multiple of one core's capacity (default 1.5)",
      "  --capacity N      one core's capacity of GET /compute, requests a second (default:",
      "                    measured first, " + PROBE_SECONDS
          + " s closed-loop on a server with no guard)",
      "  --warmup N        seconds of load before the measured ones (default 15)",
      "  --seconds N       measured seconds (default 10)",
      "  --seed N          the first run's load seed; run k uses seed + k (default 1)",
      "  --trace N         every N seconds of a run, the route's limit, in flight, queued and",
      "                    cutoff, and its answers and sheds a second since the last line, from",
      "                    /weir/status, on stderr (Weir's guards; default 0: none)",
      "  --jvm-args '...'  extra JVM options for the server JVMs; one that starts with -- needs",
      "                    the = form: --jvm-args=--enable-preview",
      "  --help            this text",
      "Needs Linux's taskset and at least two cores: the server gets the last core, this JVM",
      "the others.",
      "Guards: " + String.join(", ", Settings.names()));

  private static final List<String> OPTIONS = List.of("runs", "guards", "load", "capacity",
      "warmup", "seconds", "seed", "jvm-args", "trace", "help");

  private ColdStartBench() {}

  public static void main(String[] args) throws Exception {
    try {
      Args a = Args.parse(args, OPTIONS.toArray(new String[0]));
      if (a.flag("help")) {
        System.out.println(USAGE);
        return;
      }
      int runs = a.intValue("runs", 5, 1, 200);
      List<String> guards = Args.parseNames("--guards", a.string("guards",
          Guard.WEIR + "," + "netflix-gradient2"), Settings.names());
      double load = a.doubleValue("load", 1.5, 0.1, 20);
      double capacity = a.doubleValue("capacity", 0, 0, 1_000_000);
      int warmup = a.intValue("warmup", 15, 0, 600);
      int seconds = a.intValue("seconds", 10, 1, 600);
      long seed = a.longValue("seed", 1);
      String jvmArgs = a.string("jvm-args", "");
      int trace = a.intValue("trace", 0, 0, 600);
      int cores = Runtime.getRuntime().availableProcessors();
      if (cores < 2) {
        throw new IOException("needs at least two cores, has " + cores);
      }
      // The server JVMs get the last core (run's launcher); this JVM, the client, the others.
      // Read before pinning: a pinned JVM counts only the cores it may use.
      pin(ProcessHandle.current().pid(), cores == 2 ? "0" : "0-" + (cores - 2));
      run(System.out, System.err, cores - 1, guards, runs, load, capacity, warmup, seconds, seed,
          jvmArgs, trace);
    } catch (IllegalArgumentException e) {
      System.err.println("cold-start: " + e.getMessage());
      System.err.println(USAGE);
      System.exit(2);
    } catch (IOException e) {
      System.err.println("cold-start: " + e.getMessage());
      System.exit(1);
    }
  }

  /** One cold start: what the clients saw, and the limit at the end (-1 if not Weir's). */
  record Result(long seed, double goodput, double tier1Ok, double tier1P99, double tier5Ok,
      long limit) {}

  /**
   * Runs {@code runs} cold starts of each guard, alternating, each server JVM pinned to core
   * {@code serverCore}; {@code capacity} 0 measures it first. Prints each run, then a summary per
   * guard; with {@code trace} over 0, a line on {@code log} every {@code trace} seconds of a run.
   */
  static void run(PrintStream out, PrintStream log, int serverCore, List<String> guards, int runs,
      double load, double capacity, int warmup, int seconds, long seed, String jvmArgs, int trace)
      throws Exception {
    List<String> launcher = List.of("taskset", "-c", Integer.toString(serverCore));
    if (capacity == 0) {
      log.printf(Locale.ROOT, "measuring one core's capacity of GET /compute (%d s) ...%n",
          PROBE_SECONDS);
      try (ClosedLoopBench.Server s = ClosedLoopBench.Server.start(Guard.NONE, launcher, jvmArgs,
          ClosedLoopBench.DEADLINE)) {
        capacity = CapacityProbe.measure(s.uri(ExampleServer.COMPUTE_PATH),
            CapacityProbe.CLIENTS_PER_CORE, PROBE_SECONDS);
      }
    }
    double rate = load * capacity;
    // What a run could serve: the capacity, or all of the load below it.
    double servable = Math.min(capacity, rate);
    out.printf(Locale.ROOT, "Cold starts on one core (the server's JVM on core %d):"
        + " GET /compute at %.2fx of %.1f req/s = %.1f req/s, 50%% tier 1, 50%% tier 5,"
        + " 1 s client timeout, %d s warm-up then %d s measured, a fresh JVM a run%n",
        serverCore, load, capacity, rate, warmup, seconds);
    out.println("| guard | seed | goodput req/s | tier 1 ok | tier-1 P99 ms | tier 5 ok"
        + " | limit at end |");
    out.println("|---|---|---|---|---|---|---|");
    Map<String, List<Result>> byGuard = new LinkedHashMap<>();
    for (String g : guards) {
      byGuard.put(g, new ArrayList<>());
    }
    for (int k = 0; k < runs; k++) {
      for (int i = 0; i < guards.size(); i++) {
        String g = guards.get((i + k) % guards.size());
        Result r = once(g, launcher, jvmArgs, rate, warmup, seconds, seed + k, trace, log);
        byGuard.get(g).add(r);
        out.printf(Locale.ROOT, "| %s | %d | %.1f | %.1f%% | %s | %.1f%% | %s |%n", g, r.seed(),
            r.goodput(), 100 * r.tier1Ok(), Double.isNaN(r.tier1P99()) ? "-"
                : String.format(Locale.ROOT, "%.1f", r.tier1P99()), 100 * r.tier5Ok(),
            r.limit() < 0 ? "-" : Long.toString(r.limit()));
        out.flush();
      }
    }
    out.println();
    out.printf(Locale.ROOT, "| guard | runs | collapsed (under %.1f req/s) | goodput min"
        + " / median / max | tier 1 ok, min |%n", COLLAPSED * servable);
    out.println("|---|---|---|---|---|");
    for (Map.Entry<String, List<Result>> e : byGuard.entrySet()) {
      double[] goodput = e.getValue().stream().mapToDouble(Result::goodput).sorted().toArray();
      long collapsed = Arrays.stream(goodput).filter(x -> x < COLLAPSED * servable).count();
      double tier1 = e.getValue().stream().mapToDouble(Result::tier1Ok).min().orElse(0);
      out.printf(Locale.ROOT, "| %s | %d | %d | %.1f / %.1f / %.1f | %.1f%% |%n", e.getKey(),
          goodput.length, collapsed, goodput[0], median(goodput), goodput[goodput.length - 1],
          100 * tier1);
    }
  }

  /** One fresh server JVM for {@code guard}, loaded cold, then its limit read. */
  private static Result once(String guard, List<String> launcher, String jvmArgs, double rate,
      int warmup, int seconds, long seed, int trace, PrintStream log) throws Exception {
    try (ClosedLoopBench.Server s = ClosedLoopBench.Server.start(guard, launcher, jvmArgs,
        ClosedLoopBench.DEADLINE)) {
      URI status = s.uri(Observability.STATUS_PATH);
      ScheduledExecutorService tracer = null;
      if (trace > 0) {
        tracer = Executors.newSingleThreadScheduledExecutor(r -> {
          Thread t = new Thread(r, "cold-start-trace");
          t.setDaemon(true);
          return t;
        });
        Tracer t = new Tracer(guard, seed, status, trace, log);
        tracer.scheduleAtFixedRate(t::line, trace, trace, TimeUnit.SECONDS);
      }
      LoadReport report;
      try {
        report = LoadGenerator.builder(s.uri(ExampleServer.COMPUTE_PATH)).rate(rate)
            .warmup(Duration.ofSeconds(warmup)).duration(Duration.ofSeconds(seconds)).seed(seed)
            .build().run();
      } finally {
        if (tracer != null) {
          tracer.shutdownNow();
        }
      }
      TierStats tier1 = report.tier(1);
      return new Result(seed, report.total().goodputPerSecond(), tier1.successRatio(),
          tier1.endedOk() == 0 ? Double.NaN : tier1.latencyMillis(0.99),
          report.tier(5).successRatio(), limit(status));
    }
  }

  /**
   * Prints a line every period of a run: the route's limit, requests in flight and queued, its
   * priority cutoff, and its answers and sheds a second since the line before, from the status
   * JSON. A reading that fails is skipped.
   */
  private static final class Tracer {
    private final String guard;
    private final long seed;
    private final URI status;
    private final int period;
    private final PrintStream log;
    private final HttpClient client = HttpClient.newHttpClient();
    private int ticks;
    private long succeeded;
    private long shed;

    Tracer(String guard, long seed, URI status, int period, PrintStream log) {
      this.guard = guard;
      this.seed = seed;
      this.status = status;
      this.period = period;
      this.log = log;
    }

    void line() {
      ticks++;
      try {
        HttpResponse<String> response = client.send(HttpRequest.newBuilder(status)
            .timeout(Duration.ofSeconds(period)).build(), HttpResponse.BodyHandlers.ofString());
        Matcher m = COMPUTE_LIMIT.matcher(response.body());
        if (response.statusCode() != 200 || !m.find()) {
          return;
        }
        String route = response.body().substring(m.start());
        route = route.substring(0, route.indexOf('}'));
        long ok = sum(route, "succeeded");
        long rejected = sum(route, "shed") + sum(route, "queue_full") + sum(route, "queue_timeout");
        log.printf(Locale.ROOT, "trace %s seed %d at %4d s: limit %s, in flight %d, queued %d,"
            + " cutoff %d, succeeded %.1f/s, shed %.1f/s%n", guard, seed, ticks * period,
            m.group(1), field(route, "inflight"), field(route, "queued"), field(route, "cutoff"),
            (double) (ok - succeeded) / period, (double) (rejected - shed) / period);
        succeeded = ok;
        shed = rejected;
      } catch (IOException e) {
        log.println("trace " + guard + ": " + e.getMessage());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    /** The number {@code name} in one shedder's JSON, or -1 if it has none. */
    private static long field(String route, String name) {
      Matcher m = Pattern.compile("\"" + name + "\":(-?[0-9]+)").matcher(route);
      return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    /** The sum of the counter array {@code name} in one shedder's JSON. */
    private static long sum(String route, String name) {
      Matcher m = Pattern.compile("\"" + name + "\":\\[([0-9,]*)\\]").matcher(route);
      if (!m.find() || m.group(1).isEmpty()) {
        return 0;
      }
      return Arrays.stream(m.group(1).split(",")).mapToLong(Long::parseLong).sum();
    }
  }

  private static final Pattern COMPUTE_LIMIT =
      Pattern.compile("\"GET " + ExampleServer.COMPUTE_PATH + "\":\\{\"limit\":(\\d+)");

  /** The limit of {@code GET /compute}'s shedder in the status JSON, or -1 if there is none. */
  private static long limit(URI status) throws IOException, InterruptedException {
    HttpClient client = HttpClient.newHttpClient();
    HttpResponse<String> response = client.send(HttpRequest.newBuilder(status)
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      return -1; // not one of Weir's guards
    }
    Matcher m = COMPUTE_LIMIT.matcher(response.body());
    return m.find() ? Long.parseLong(m.group(1)) : -1;
  }

  /** Pins every thread of process {@code pid} to {@code cpus}, a {@code taskset} list. */
  private static void pin(long pid, String cpus) throws IOException, InterruptedException {
    Process p;
    try {
      p = new ProcessBuilder("taskset", "-a", "-p", "-c", cpus, Long.toString(pid))
          .redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new IOException("needs Linux's taskset (util-linux) to pin the JVMs: "
          + e.getMessage());
    }
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      throw new IOException("taskset could not pin this JVM to cores " + cpus + ": "
          + output.trim());
    }
  }

  private static double median(double[] sorted) {
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }
}
