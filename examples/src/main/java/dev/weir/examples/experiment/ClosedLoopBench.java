package dev.weir.examples.experiment;

import dev.weir.examples.Args;
import dev.weir.examples.ExampleServer;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * What each guard costs the server per request, closed-loop: {@code GET /hello} (answers at once)
 * driven by a fixed number of keep-alive connections that each send their next request as soon as
 * the last one is answered ({@link ClosedLoopClient}, one thread, in this JVM). Each run starts a
 * fresh server JVM ({@link OverheadServer}), warms it up, then measures throughput, and, from the
 * server JVM itself, its CPU time and the bytes all its threads allocated, per request. Guards
 * rotate over rounds (round r starts at guard r), so that drift in a shared machine's load hits
 * them alike.
 *
 * <p>Two figures of CPU per request are reported against {@code none}: the one derived from
 * throughput alone, {@code cores * (1/throughput - 1/baseline)}, which holds when the machine is
 * saturated by server and client together; and the server JVM's own CPU time per request, minus
 * none's, which does not need that assumption.
 */
public final class ClosedLoopBench {
  static final String USAGE = String.join("\n",
      "Usage: bin/demo closed-loop [options]",
      "  --seconds N       measured seconds per run (default 10)",
      "  --warmup N        warm-up seconds per run (default 5)",
      "  --rounds N        rounds; each runs every guard once, rotated (default 3)",
      "  --connections N   client connections, each sending back-to-back (default 16)",
      "  --guards a,b,...  guards (default: none, pass-filter, the experiment's others, weir-shed)",
      "  --jvm-args '...'  extra JVM options for the server JVMs, e.g. a JFR recording",
      "  --help            this text",
      "Guards: " + String.join(", ", guardNames()));

  private ClosedLoopBench() {}

  static List<String> guardNames() {
    List<String> names = Guard.all().stream().map(Guard::name).collect(Collectors.toList());
    names.add(1, OverheadServer.PASS_FILTER);
    names.add(OverheadServer.WEIR_SHED);
    return names;
  }

  public static void main(String[] args) throws Exception {
    try {
      Args a = options(args);
      if (a.flag("help")) {
        System.out.println(USAGE);
        return;
      }
      int seconds = a.intValue("seconds", 10, 1, 600);
      int warmup = a.intValue("warmup", 5, 0, 600);
      int rounds = a.intValue("rounds", 3, 1, 20);
      int connections = a.intValue("connections", 16, 1, 1024);
      List<String> guards = guardNames();
      String given = a.string("guards", null);
      if (given != null) {
        guards = Arrays.asList(given.split(","));
        for (String g : guards) {
          if (!guardNames().contains(g)) {
            throw new IllegalArgumentException("unknown guard '" + g + "'; guards: " + guardNames());
          }
        }
      }
      String jvmArgs = a.string("jvm-args", "");
      run(System.out, System.err, guards, seconds, warmup, rounds, connections, jvmArgs);
    } catch (IllegalArgumentException e) {
      System.err.println("closed-loop: " + e.getMessage());
      System.err.println(USAGE);
      System.exit(2);
    }
  }

  private static final List<String> OPTIONS =
      List.of("seconds", "warmup", "rounds", "connections", "guards", "jvm-args", "help");

  /** {@code --name value} pairs; {@code --help} alone: {@link Args}, with this bench's names. */
  static Args options(String[] args) {
    return Args.parse(args, OPTIONS.toArray(new String[0]));
  }

  /** One run's measurements. */
  static final class Run {
    long ok;
    long other;
    double seconds;
    long cpuNanos;
    long allocBytes;
    long gcs;

    long requests() {
      return ok + other;
    }
  }

  static void run(PrintStream out, PrintStream log, List<String> guards, int seconds, int warmup,
      int rounds, int connections, String jvmArgs) throws Exception {
    int cores = Runtime.getRuntime().availableProcessors();
    Map<String, List<Run>> runs = new LinkedHashMap<>();
    guards.forEach(g -> runs.put(g, new ArrayList<>()));
    for (int round = 0; round < rounds; round++) {
      for (int i = 0; i < guards.size(); i++) {
        String g = guards.get((i + round) % guards.size());
        log.printf(Locale.ROOT, "  round %d: %s ...%n", round + 1, g);
        runs.get(g).add(measure(g, seconds, warmup, connections, jvmArgs));
      }
    }
    out.printf(Locale.ROOT, "Closed loop: GET %s, %d connections back-to-back, %d s measured after"
        + " %d s warm-up, each guard on a fresh server JVM, %d round(s) rotated, %d cores%n%n",
        ExampleServer.HELLO_PATH, connections, seconds, warmup, rounds, cores);
    out.println(String.format(Locale.ROOT, "%-18s %10s %7s %8s %9s %9s %9s %8s", "guard", "req/s",
        "vs none", "2xx", "CPU us/r", "+us/r", "+us/r", "B/req"));
    out.println(String.format(Locale.ROOT, "%-18s %10s %7s %8s %9s %9s %9s %8s", "", "", "", "",
        "(server)", "(derived)", "(server)", "(server)"));
    Run base = runs.containsKey(Guard.NONE) ? total(runs.get(Guard.NONE)) : null;
    for (Map.Entry<String, List<Run>> e : runs.entrySet()) {
      Run t = total(e.getValue());
      double rate = t.requests() / t.seconds;
      double cpu = t.cpuNanos / 1000.0 / t.requests();
      String vs = "";
      String derived = "";
      String extra = "";
      if (base != null) {
        double baseRate = base.requests() / base.seconds;
        vs = String.format(Locale.ROOT, "%+.1f%%", 100 * (rate / baseRate - 1));
        derived = String.format(Locale.ROOT, "%.2f", cores * 1e6 * (1 / rate - 1 / baseRate));
        extra = String.format(Locale.ROOT, "%.2f", cpu - base.cpuNanos / 1000.0 / base.requests());
      }
      out.println(String.format(Locale.ROOT, "%-18s %10.0f %7s %7.1f%% %9.2f %9s %9s %8.0f",
          e.getKey(), rate, vs, 100.0 * t.ok / Math.max(1, t.requests()), cpu, derived, extra,
          (double) t.allocBytes / t.requests()));
    }
    out.println();
    out.println("Per round (req/s):");
    for (Map.Entry<String, List<Run>> e : runs.entrySet()) {
      out.println(String.format(Locale.ROOT, "%-18s %s", e.getKey(), e.getValue().stream()
          .map(r -> String.format(Locale.ROOT, "%.0f", r.requests() / r.seconds))
          .collect(Collectors.joining(" "))));
    }
    out.flush();
  }

  private static Run total(List<Run> rs) {
    Run t = new Run();
    for (Run r : rs) {
      t.ok += r.ok;
      t.other += r.other;
      t.seconds += r.seconds;
      t.cpuNanos += r.cpuNanos;
      t.allocBytes += r.allocBytes;
      t.gcs += r.gcs;
    }
    return t;
  }

  private static Run measure(String guard, int seconds, int warmup, int connections,
      String jvmArgs) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
    for (String arg : jvmArgs.trim().split("\\s+")) {
      if (!arg.isEmpty()) {
        cmd.add(arg.replace("{guard}", guard));
      }
    }
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"),
        OverheadServer.class.getName(), guard));
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    try (BufferedReader from = new BufferedReader(new InputStreamReader(p.getInputStream(),
            StandardCharsets.US_ASCII));
        Writer to = new OutputStreamWriter(p.getOutputStream(), StandardCharsets.US_ASCII)) {
      String line = reply(from, "port ");
      if (line == null) {
        throw new IOException("server JVM for " + guard + " did not start: " + line);
      }
      int port = Integer.parseInt(line.substring(5).trim());
      try (ClosedLoopClient client = new ClosedLoopClient(
          new InetSocketAddress("127.0.0.1", port), ExampleServer.HELLO_PATH, connections)) {
        client.runUntil(System.nanoTime() + TimeUnit.SECONDS.toNanos(warmup));
        long[] before = mark(to, from);
        client.reset();
        long start = System.nanoTime();
        client.runUntil(start + TimeUnit.SECONDS.toNanos(seconds));
        long end = System.nanoTime();
        long[] after = mark(to, from);
        Run r = new Run();
        r.ok = client.ok;
        r.other = client.other;
        r.seconds = (end - start) / 1e9;
        r.cpuNanos = after[0] - before[0];
        r.allocBytes = after[1] - before[1];
        r.gcs = after[2] - before[2];
        return r;
      }
    } finally {
      p.getOutputStream().close();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
  }

  /** The server JVM's next line that starts with {@code prefix}; others (JVM logs) are echoed. */
  private static String reply(BufferedReader from, String prefix) throws IOException {
    for (String line; (line = from.readLine()) != null; ) {
      if (line.startsWith(prefix)) {
        return line;
      }
      System.err.println("  server: " + line);
    }
    return null;
  }

  /** Asks the server JVM for its CPU time, allocated bytes and GC count. */
  private static long[] mark(Writer to, BufferedReader from) throws IOException {
    to.write("mark\n");
    to.flush();
    String line = reply(from, "cpu ");
    if (line == null) {
      throw new IOException("the server JVM exited");
    }
    String[] f = line.split(" ");
    return new long[] {Long.parseLong(f[1]), Long.parseLong(f[3]), Long.parseLong(f[5])};
  }
}
