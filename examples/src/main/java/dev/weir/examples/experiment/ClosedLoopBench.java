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
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
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
 * <p>The warm-up lasts at least {@code --warmup} seconds, then goes on until the server's JIT
 * compilers are quiet ({@link JitWarmup}), for at most {@code --settle} seconds more.
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
      "  --warmup N        warm-up seconds per run, at least (default 5)",
      "  --settle N        then up to N seconds more, until the server's JIT is quiet",
      "                    (default 60; 0: the warm-up is --warmup exactly)",
      "  --rounds N        rounds; each runs every guard once, rotated (default 3)",
      "  --connections N   client connections, each sending back-to-back (default 16)",
      "  --guards a,b,...  guards (default: none, pass-filter, the experiment's others, weir-shed,",
      "                    weir-queued)",
      "  --jvm-args '...'  extra JVM options for the server JVMs, e.g. a JFR recording; one that",
      "                    starts with -- needs the = form: --jvm-args=--enable-preview",
      "  --help            this text",
      "Guards: " + String.join(", ", guardNames()));

  private ClosedLoopBench() {}

  static List<String> guardNames() {
    List<String> names = Guard.all().stream().map(Guard::name).collect(Collectors.toList());
    names.add(1, OverheadServer.PASS_FILTER);
    names.add(OverheadServer.WEIR_SHED);
    names.add(OverheadServer.WEIR_QUEUED);
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
      int settle = a.intValue("settle", 60, 0, 600);
      int rounds = a.intValue("rounds", 3, 1, 20);
      int connections = a.intValue("connections", 16, 1, 1024);
      List<String> guards = guards(a.string("guards", null));
      String jvmArgs = a.string("jvm-args", "");
      run(System.out, System.err, guards, seconds, warmup, settle, rounds, connections, jvmArgs);
    } catch (IllegalArgumentException e) {
      System.err.println("closed-loop: " + e.getMessage());
      System.err.println(USAGE);
      System.exit(2);
    } catch (IOException e) {
      System.err.println("closed-loop: " + e.getMessage());
      System.exit(1);
    }
  }

  /**
   * The guards of {@code --guards}, trimmed, each once; every guard if {@code given} is null.
   *
   * @throws IllegalArgumentException naming the guard that is unknown or listed twice
   */
  static List<String> guards(String given) {
    return given == null ? guardNames() : Args.parseNames("--guards", given, guardNames());
  }

  /** How long a server JVM may take to print its port, or to answer a mark. */
  static final Duration DEADLINE = Duration.ofSeconds(60);

  private static final List<String> OPTIONS =
      List.of("seconds", "warmup", "settle", "rounds", "connections", "guards", "jvm-args",
          "help");

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
    /** The warm-up's length, and whether it ended with the JIT quiet. */
    double warmupSeconds;
    boolean quiet;
    /** Milliseconds the server's JIT spent compiling while measured; -1 if it does not say. */
    long jitMillis;

    long requests() {
      return ok + other;
    }
  }

  static void run(PrintStream out, PrintStream log, List<String> guards, int seconds, int warmup,
      int settle, int rounds, int connections, String jvmArgs) throws Exception {
    int cores = Runtime.getRuntime().availableProcessors();
    Map<String, List<Run>> runs = new LinkedHashMap<>();
    guards.forEach(g -> runs.put(g, new ArrayList<>()));
    for (int round = 0; round < rounds; round++) {
      for (int i = 0; i < guards.size(); i++) {
        String g = guards.get((i + round) % guards.size());
        log.printf(Locale.ROOT, "  round %d: %s ...%n", round + 1, g);
        runs.get(g).add(measure(g, seconds, warmup, settle, connections, jvmArgs, DEADLINE));
      }
    }
    out.printf(Locale.ROOT, "Closed loop: GET %s, %d connections back-to-back, %d s measured after"
        + " %d s warm-up%s, each guard on a fresh server JVM, %d round(s) rotated, %d cores%n%n",
        ExampleServer.HELLO_PATH, connections, seconds, warmup, settle == 0 ? ""
            : String.format(Locale.ROOT, " and up to %d s more until the server's JIT was quiet",
                settle), rounds, cores);
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
    out.println("Per round: req/s (warm-up s, * if the JIT was still busy; JIT ms while measured):");
    for (Map.Entry<String, List<Run>> e : runs.entrySet()) {
      out.println(String.format(Locale.ROOT, "%-18s %s", e.getKey(), e.getValue().stream()
          .map(r -> String.format(Locale.ROOT, "%.0f (%.0f%s; %d)", r.requests() / r.seconds,
              r.warmupSeconds, r.quiet ? "" : "*", r.jitMillis))
          .collect(Collectors.joining("  "))));
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

  /**
   * Runs one guard on a fresh server JVM.
   *
   * @param deadline how long the JVM may take to print its port, or to answer a mark
   * @throws IOException if the JVM exits, or does not answer within {@code deadline}: the JVM is
   *     then stopped
   */
  static Run measure(String guard, int seconds, int warmup, int settle, int connections,
      String jvmArgs, Duration deadline) throws Exception {
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
    String command = String.join(" ", cmd.subList(0, cmd.indexOf("-cp"))) + " ... "
        + OverheadServer.class.getSimpleName() + " " + guard;
    ServerOutput from = new ServerOutput(p, guard, command, deadline);
    try (Writer to = new OutputStreamWriter(p.getOutputStream(), StandardCharsets.US_ASCII)) {
      String line = from.reply("port ", "printed its port");
      int port;
      try {
        port = Integer.parseInt(line.substring(5).trim());
      } catch (NumberFormatException e) {
        throw new IOException("server JVM for " + guard + " printed a bad port line: " + line);
      }
      try (ClosedLoopClient client = new ClosedLoopClient(
          new InetSocketAddress("127.0.0.1", port), ExampleServer.HELLO_PATH, connections)) {
        long warmupStart = System.nanoTime();
        client.runUntil(warmupStart + TimeUnit.SECONDS.toNanos(warmup));
        long[][] last = {mark(to, from)}; // the mark the measured window starts from
        boolean quiet = JitWarmup.settle(last[0][3], settle, () -> {
          client.runUntil(System.nanoTime() + TimeUnit.SECONDS.toNanos(JitWarmup.STEP_SECONDS));
          last[0] = mark(to, from);
          return last[0][3];
        });
        long[] before = last[0];
        double warmed = (System.nanoTime() - warmupStart) / 1e9;
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
        r.warmupSeconds = warmed;
        r.quiet = quiet;
        r.jitMillis = before[3] < 0 ? -1 : after[3] - before[3];
        return r;
      }
    } catch (IOException e) {
      p.destroyForcibly();
      throw e;
    } finally {
      try {
        p.getOutputStream().close();
      } catch (IOException e) {
        // the JVM has gone already
      }
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
  }

  /**
   * A server JVM's standard output, read by a thread of its own so that every wait for a line
   * has a deadline: a hung JVM cannot hang the bench.
   */
  private static final class ServerOutput {
    private static final String END = new String("end of output");
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> echoed = new ArrayList<>();
    private final Process process;
    private final String guard;
    private final String command;
    private final Duration deadline;

    ServerOutput(Process process, String guard, String command, Duration deadline) {
      this.process = process;
      this.guard = guard;
      this.command = command;
      this.deadline = deadline;
      Thread reader = new Thread(() -> {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
            process.getInputStream(), StandardCharsets.US_ASCII))) {
          for (String line; (line = in.readLine()) != null; ) {
            lines.add(line);
          }
        } catch (IOException e) {
          // the stream closed with the process
        } finally {
          lines.add(END);
        }
      }, "server-output-" + guard);
      reader.setDaemon(true);
      reader.start();
    }

    /**
     * The next line that starts with {@code prefix}; others (JVM logs) are echoed.
     *
     * @param what what the JVM should have done, for the message: "printed its port"
     * @throws IOException if the JVM exits first or stays silent past the deadline
     */
    String reply(String prefix, String what) throws IOException, InterruptedException {
      long until = System.nanoTime() + deadline.toNanos();
      while (true) {
        String line = lines.poll(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (line == null) {
          process.destroyForcibly();
          throw new IOException(String.format(Locale.ROOT, "server JVM for %s %s within %d s;"
              + " stopped it (%s)%s", guard, what.equals("printed its port") ? "printed no port"
              : "did not answer", deadline.toSeconds(), command, output()));
        }
        if (line == END) { // the reader's marker, not a line: compared by identity
          String exit = process.waitFor(5, TimeUnit.SECONDS)
              ? "exited with status " + process.exitValue() : "closed its output";
          throw new IOException(String.format(Locale.ROOT, "server JVM for %s %s before it %s"
              + " (%s)%s", guard, exit, what, command, output()));
        }
        if (line.startsWith(prefix)) {
          return line;
        }
        echoed.add(line);
        System.err.println("  server: " + line);
      }
    }

    /** What the JVM printed besides its replies, the last lines; its errors went to stderr. */
    private String output() {
      List<String> last = echoed.subList(Math.max(0, echoed.size() - 5), echoed.size());
      return last.isEmpty() ? "; its error output, if any, is above"
          : "; it printed: " + String.join(" | ", last) + "; its error output, if any, is above";
    }
  }

  /** Asks the server JVM for its CPU time, allocated bytes, GC count and JIT milliseconds. */
  private static long[] mark(Writer to, ServerOutput from)
      throws IOException, InterruptedException {
    to.write("mark\n");
    to.flush();
    String line = from.reply("cpu ", "answered a mark");
    String[] f = line.split(" ");
    return new long[] {Long.parseLong(f[1]), Long.parseLong(f[3]), Long.parseLong(f[5]),
        Long.parseLong(f[7])};
  }
}
