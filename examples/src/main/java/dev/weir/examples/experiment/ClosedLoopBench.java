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
import java.net.URI;
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
import java.util.function.ToDoubleBiFunction;
import java.util.stream.Collectors;

/**
 * What each guard costs the server per request, closed-loop: {@code GET /hello} (answers at once)
 * driven by a fixed number of keep-alive connections that each send their next request as soon as
 * the last one is answered ({@link ClosedLoopClient}, one thread, in this JVM). Each guard runs on
 * a server JVM of its own ({@link OverheadServer}), so that no guard's code shapes another's JIT
 * profile; the bench measures throughput and, from the server JVM itself, its CPU time and the
 * bytes all its threads allocated, per request.
 *
 * <p>Each round starts a fresh JVM per guard and warms each in turn: at least {@code --warmup}
 * seconds, then on until the server's JIT compilers are quiet ({@link JitWarmup}), for at most
 * {@code --settle} seconds more. Then the guards take the load in turn, one slice of {@code
 * --slice} seconds each, the order rotated every cycle, until each has had {@code --seconds}. The
 * machine's speed drifts by tens of percent over minutes on a shared VM, and runs of one guard
 * move together; a slice is compared only with the slices of the same cycle, seconds apart, so
 * the drift cancels from each comparison, and the spread of the comparisons gives their standard
 * error. Fresh JVMs also compile the same code differently, so that rounds differ by more than
 * their cycles say: with two rounds or more, the error is the larger of the cycles' and the
 * rounds'.
 *
 * <p>Two figures of CPU per request are reported against {@code none}: the one derived from
 * throughput alone, {@code cores * (1/throughput - 1/baseline)}, which holds when the machine is
 * saturated by server and client together; and the server JVM's own CPU time per request, minus
 * none's, which does not need that assumption.
 */
public final class ClosedLoopBench {
  static final String USAGE = String.join("\n",
      "Usage: bin/demo closed-loop [options]",
      "  --seconds N       measured seconds per guard and round (default 10)",
      "  --slice N         seconds of load a guard takes at a time, guards alternating",
      "                    (default 1)",
      "  --warmup N        warm-up seconds per server, at least (default 5)",
      "  --settle N        then up to N seconds more, until the server's JIT is quiet",
      "                    (default 60; 0: the warm-up is --warmup exactly)",
      "  --rounds N        rounds, each on fresh server JVMs (default 3)",
      "  --connections N   client connections, each sending back-to-back (default 16)",
      "  --guards a,b,...  guards (default: none, pass-filter, the experiment's others, weir-shed,",
      "                    weir-queued)",
      "  --jvm-args '...'  extra JVM options for the server JVMs, e.g. a JFR recording; one that",
      "                    starts with -- needs the = form: --jvm-args=--enable-preview",
      "  --help            this text",
      "A slice against its neighbour reads +-20% on a shared VM, and fresh JVMs differ: telling a",
      "point takes hundreds of cycles over many rounds, e.g. --guards none,weir --rounds 8.",
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
      int slice = a.intValue("slice", 1, 1, 60);
      int warmup = a.intValue("warmup", 5, 0, 600);
      int settle = a.intValue("settle", 60, 0, 600);
      int rounds = a.intValue("rounds", 3, 1, 20);
      int connections = a.intValue("connections", 16, 1, 1024);
      List<String> guards = guards(a.string("guards", null));
      String jvmArgs = a.string("jvm-args", "");
      run(System.out, System.err, guards, seconds, slice, warmup, settle, rounds, connections,
          jvmArgs);
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
      List.of("seconds", "slice", "warmup", "settle", "rounds", "connections", "guards",
          "jvm-args", "help");

  /** {@code --name value} pairs; {@code --help} alone: {@link Args}, with this bench's names. */
  static Args options(String[] args) {
    return Args.parse(args, OPTIONS.toArray(new String[0]));
  }

  /** One measured stretch of load on one server: a slice, or the sum of several. */
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

    double rate() {
      return requests() / seconds;
    }

    /** The server's CPU time per request, in microseconds. */
    double cpuMicrosPerRequest() {
      return cpuNanos / 1000.0 / Math.max(1, requests());
    }

    void add(Run r) {
      ok += r.ok;
      other += r.other;
      seconds += r.seconds;
      cpuNanos += r.cpuNanos;
      allocBytes += r.allocBytes;
      gcs += r.gcs;
      jitMillis = jitMillis < 0 || r.jitMillis < 0 ? -1 : jitMillis + r.jitMillis;
    }
  }

  /** A mean and its standard error ({@link Goals}'), which is NaN, not 0, for fewer than two. */
  static final class Estimate {
    final double mean;
    final double standardError;

    Estimate(List<Double> values) {
      double[] xs = values.stream().mapToDouble(Double::doubleValue).toArray();
      mean = Goals.mean(xs);
      standardError = xs.length < 2 ? Double.NaN : Goals.standardError(xs);
    }
  }

  static void run(PrintStream out, PrintStream log, List<String> guards, int seconds, int slice,
      int warmup, int settle, int rounds, int connections, String jvmArgs) throws Exception {
    int cores = Runtime.getRuntime().availableProcessors();
    int slices = (seconds + slice - 1) / slice;
    // Each guard's load served in a round, and in a cycle of slices.
    List<Map<String, Run>> byRound = new ArrayList<>();
    List<Map<String, Run>> byCycle = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      Map<String, Run> roundRuns = new LinkedHashMap<>();
      List<Server> servers = new ArrayList<>();
      try {
        for (int i = 0; i < guards.size(); i++) {
          String g = guards.get((i + round) % guards.size());
          log.printf(Locale.ROOT, "  round %d: starting and warming %s ...%n", round + 1, g);
          Server s = Server.start(g, jvmArgs, DEADLINE);
          servers.add(s);
          Run total = new Run();
          total.quiet = s.warm(warmup, settle, connections);
          total.warmupSeconds = s.warmedSeconds;
          roundRuns.put(g, total);
        }
        log.printf(Locale.ROOT, "  round %d: %d cycles of %d s per guard ...%n", round + 1, slices,
            slice);
        for (int k = 0; k < slices; k++) {
          Map<String, Run> cycle = new LinkedHashMap<>();
          int each = Math.min(slice, seconds - k * slice);
          for (int i = 0; i < servers.size(); i++) {
            Server s = servers.get((i + k) % servers.size());
            Run r = s.measure(each, connections);
            cycle.put(s.guard, r);
            roundRuns.get(s.guard).add(r);
          }
          byCycle.add(cycle);
          log.println(cycleLine(round, k, cycle));
        }
      } finally {
        for (Server s : servers) {
          s.close();
        }
      }
      byRound.add(roundRuns);
    }
    report(out, guards, byRound, byCycle, seconds, slice, warmup, settle, connections, cores);
  }

  private static void report(PrintStream out, List<String> guards, List<Map<String, Run>> byRound,
      List<Map<String, Run>> byCycle, int seconds, int slice, int warmup, int settle,
      int connections, int cores) {
    out.printf(Locale.ROOT, "Closed loop: GET %s, %d connections back-to-back, %d s measured per"
        + " guard and round in slices of %d s, guards alternating; each guard on a server JVM of"
        + " its own, warmed %d s%s; %d round(s); %d cores%n%n", ExampleServer.HELLO_PATH,
        connections, seconds, slice, warmup, settle == 0 ? ""
            : String.format(Locale.ROOT, " and up to %d s more until its JIT was quiet", settle),
        byRound.size(), cores);
    out.println(String.format(Locale.ROOT, "%-18s %8s %7s %6s %7s %9s %9s %9s %6s %8s", "guard",
        "req/s", "vs none", "+-", "2xx", "CPU us/r", "+us/r", "+us/r", "+-", "B/req"));
    out.println(String.format(Locale.ROOT, "%-18s %8s %7s %6s %7s %9s %9s %9s %6s %8s", "", "",
        "", "", "", "(server)", "(derived)", "(server)", "", "(server)"));
    boolean paired = guards.contains(Guard.NONE);
    Run base = paired ? total(byRound, Guard.NONE) : null;
    for (String g : guards) {
      Run t = total(byRound, g);
      String vs = "";
      String vsError = "";
      String derived = "";
      String extra = "";
      String extraError = "";
      if (paired) {
        // Each round's servers are fresh JVMs, which compile the same code differently: rounds
        // differ by more than their cycles say. The error is the larger of the two readings.
        Estimate ratio = againstNone(byCycle, g, ClosedLoopBench::ratioToNone);
        Estimate cpu = againstNone(byCycle, g, ClosedLoopBench::cpuAboveNone);
        vs = String.format(Locale.ROOT, "%+.1f%%", 100 * ratio.mean);
        vsError = errorText(100 * larger(ratio, againstNone(byRound, g,
            ClosedLoopBench::ratioToNone)), "%");
        derived = String.format(Locale.ROOT, "%.2f",
            cores * 1e6 * (1 / t.rate() - 1 / base.rate()));
        extra = String.format(Locale.ROOT, "%.2f", cpu.mean);
        extraError = errorText(larger(cpu, againstNone(byRound, g,
            ClosedLoopBench::cpuAboveNone)), "");
      }
      out.println(String.format(Locale.ROOT, "%-18s %8.0f %7s %6s %6.1f%% %9.2f %9s %9s %6s %8.0f",
          g, t.rate(), vs, vsError, 100.0 * t.ok / Math.max(1, t.requests()),
          t.cpuMicrosPerRequest(), derived, extra, extraError,
          (double) t.allocBytes / Math.max(1, t.requests())));
    }
    out.println();
    if (paired) {
      out.printf(Locale.ROOT, "vs none and +us/r (server): means over %d cycles of each guard's"
          + " slice against none's in the same cycle; +- is twice their standard error, or twice"
          + " that of the %d rounds' own comparisons if larger (fresh JVMs compile differently).%n",
          byCycle.size(), byRound.size());
    }
    out.println("Per round: req/s (warm-up s, * if the JIT was still busy; JIT ms while measured):");
    for (String g : guards) {
      out.println(String.format(Locale.ROOT, "%-18s %s", g, byRound.stream().map(m -> m.get(g))
          .map(r -> String.format(Locale.ROOT, "%.0f (%.0f%s; %d)", r.rate(),
              r.warmupSeconds, r.quiet ? "" : "*", r.jitMillis))
          .collect(Collectors.joining("  "))));
    }
    out.flush();
  }

  /** {@code guard}'s comparison with none's run of the same cycle or round, over each of them. */
  private static Estimate againstNone(List<Map<String, Run>> runs, String guard,
      ToDoubleBiFunction<Run, Run> compare) {
    List<Double> values = new ArrayList<>();
    for (Map<String, Run> m : runs) {
      values.add(compare.applyAsDouble(m.get(guard), m.get(Guard.NONE)));
    }
    return new Estimate(values);
  }

  /** {@code r}'s throughput relative to {@code none}'s: -0.01 for 1% fewer requests a second. */
  private static double ratioToNone(Run r, Run none) {
    return r.rate() / none.rate() - 1;
  }

  /** The server's CPU a request above {@code none}'s, in microseconds. */
  private static double cpuAboveNone(Run r, Run none) {
    return r.cpuMicrosPerRequest() - none.cpuMicrosPerRequest();
  }

  /** A cycle's progress line: each guard's req/s, and its ratio to none's if none ran. */
  private static String cycleLine(int round, int k, Map<String, Run> cycle) {
    Run none = cycle.get(Guard.NONE);
    return String.format(Locale.ROOT, "  round %d, cycle %d:", round + 1, k + 1)
        + cycle.entrySet().stream().map(e -> String.format(Locale.ROOT, " %s %.0f%s", e.getKey(),
            e.getValue().rate(), none == null || e.getValue() == none ? ""
                : String.format(Locale.ROOT, " (%+.1f%%)", 100 * ratioToNone(e.getValue(),
                    none)))).collect(Collectors.joining(","));
  }

  /** The larger standard error of the two, or the cycles' alone if there is one round. */
  static double larger(Estimate cycles, Estimate rounds) {
    return Double.isNaN(rounds.standardError) ? cycles.standardError
        : Math.max(cycles.standardError, rounds.standardError);
  }

  /** Twice {@code standardError}, as text, or "-" when there are too few cycles to tell. */
  private static String errorText(double standardError, String unit) {
    return Double.isNaN(standardError) ? "-"
        : String.format(Locale.ROOT, "%.2f%s", 2 * standardError, unit);
  }

  private static Run total(List<Map<String, Run>> byRound, String guard) {
    Run t = new Run();
    for (Map<String, Run> m : byRound) {
      t.add(m.get(guard));
    }
    return t;
  }

  /**
   * Runs one guard on a fresh server JVM: warms it, measures {@code seconds} of load, stops it.
   *
   * @param deadline how long the JVM may take to print its port, or to answer a mark
   * @throws IOException if the JVM exits, or does not answer within {@code deadline}: the JVM is
   *     then stopped
   */
  static Run measure(String guard, int seconds, int warmup, int settle, int connections,
      String jvmArgs, Duration deadline) throws Exception {
    try (Server s = Server.start(guard, jvmArgs, deadline)) {
      boolean quiet = s.warm(warmup, settle, connections);
      Run r = s.measure(seconds, connections);
      r.warmupSeconds = s.warmedSeconds;
      r.quiet = quiet;
      return r;
    }
  }

  /** One guard's server JVM, driven and measured from here. */
  static final class Server implements AutoCloseable {
    final String guard;
    private final Process process;
    private final ServerOutput from;
    private final Writer to;
    private final InetSocketAddress address;
    double warmedSeconds;

    private Server(String guard, Process process, ServerOutput from, InetSocketAddress address) {
      this.guard = guard;
      this.process = process;
      this.from = from;
      this.to = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.US_ASCII);
      this.address = address;
    }

    /**
     * Starts {@code guard}'s server JVM and waits for its port.
     *
     * @throws IOException if the JVM exits, or prints no port within {@code deadline}: the JVM is
     *     then stopped
     */
    static Server start(String guard, String jvmArgs, Duration deadline) throws Exception {
      return start(guard, List.of(), jvmArgs, deadline);
    }

    /**
     * Starts {@code guard}'s server JVM under {@code launcher}, a command that runs the JVM's
     * command line (such as {@code taskset -c 1}; empty: none), and waits for its port.
     *
     * @throws IOException if the JVM exits, or prints no port within {@code deadline}: the JVM is
     *     then stopped
     */
    static Server start(String guard, List<String> launcher, String jvmArgs, Duration deadline)
        throws Exception {
      List<String> cmd = new ArrayList<>(launcher);
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
      try {
        ServerOutput from = new ServerOutput(p, guard, command, deadline);
        String line = from.reply("port ", "printed its port");
        int port;
        try {
          port = Integer.parseInt(line.substring(5).trim());
        } catch (NumberFormatException e) {
          throw new IOException("server JVM for " + guard + " printed a bad port line: " + line);
        }
        return new Server(guard, p, from, new InetSocketAddress("127.0.0.1", port));
      } catch (IOException | RuntimeException e) {
        stop(p);
        throw e;
      }
    }

    /** {@code path} on this server, such as {@code http://127.0.0.1:41234/compute}. */
    URI uri(String path) {
      return URI.create("http://127.0.0.1:" + address.getPort() + path);
    }

    /**
     * Loads the server for {@code warmup} seconds, then in steps until its JIT is quiet, for at
     * most {@code settle} seconds more; returns whether it ended quiet.
     */
    boolean warm(int warmup, int settle, int connections) throws Exception {
      try (ClosedLoopClient client = new ClosedLoopClient(address, ExampleServer.HELLO_PATH,
          connections)) {
        long start = System.nanoTime();
        client.runUntil(start + TimeUnit.SECONDS.toNanos(warmup));
        boolean quiet = JitWarmup.settle(mark()[3], settle, () -> {
          client.runUntil(System.nanoTime() + TimeUnit.SECONDS.toNanos(JitWarmup.STEP_SECONDS));
          return mark()[3];
        });
        warmedSeconds = (System.nanoTime() - start) / 1e9;
        return quiet;
      }
    }

    /**
     * Measures {@code seconds} of load on fresh connections: idle connections between slices
     * could meet the server's idle timeout, and opening them costs every guard alike.
     */
    Run measure(int seconds, int connections) throws Exception {
      try (ClosedLoopClient client = new ClosedLoopClient(address, ExampleServer.HELLO_PATH,
          connections)) {
        long[] before = mark();
        long start = System.nanoTime();
        client.runUntil(start + TimeUnit.SECONDS.toNanos(seconds));
        long end = System.nanoTime();
        long[] after = mark();
        Run r = new Run();
        r.ok = client.ok;
        r.other = client.other;
        r.seconds = (end - start) / 1e9;
        r.cpuNanos = after[0] - before[0];
        r.allocBytes = after[1] - before[1];
        r.gcs = after[2] - before[2];
        r.jitMillis = before[3] < 0 ? -1 : after[3] - before[3];
        return r;
      }
    }

    /** Asks the server JVM for its CPU time, allocated bytes, GC count and JIT milliseconds. */
    private long[] mark() throws IOException, InterruptedException {
      to.write("mark\n");
      to.flush();
      String line = from.reply("cpu ", "answered a mark");
      String[] f = line.split(" ");
      return new long[] {Long.parseLong(f[1]), Long.parseLong(f[3]), Long.parseLong(f[5]),
          Long.parseLong(f[7])};
    }

    /** Ends the JVM's input, on which it stops, and waits for it; stops it if it does not. */
    @Override
    public void close() throws InterruptedException {
      stop(process);
    }

    private static void stop(Process p) throws InterruptedException {
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
}
