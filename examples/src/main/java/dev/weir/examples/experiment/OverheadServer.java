package dev.weir.examples.experiment;

import dev.weir.ControlWindow;
import dev.weir.LoadShedder;
import dev.weir.Permit;
import dev.weir.Priority;
import dev.weir.Rejector;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import dev.weir.examples.Backends;
import dev.weir.examples.Downstream;
import dev.weir.examples.ExampleServer;
import dev.weir.servlet.WeirFilter;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.HttpURLConnection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One guarded example server in a JVM of its own, for {@link ClosedLoopBench}: a fresh JVM per
 * run, so that no guard's run warms or pollutes the JIT profile of another's (a filter chain that
 * has seen several filters is compiled differently from one that has seen one).
 *
 * <p>Started as {@code OverheadServer <guard>}: prints {@code port N} once listening; then, for
 * each line {@code mark} on standard input, prints {@code cpu <process CPU ns> alloc <bytes
 * allocated by all threads> gc <collections> jit <milliseconds the JIT compilers have spent, or
 * -1 if the JVM does not say>}; stops at the end of input. The guards are those of
 * {@link Guard#all()}, so that a guard added there gets a row, plus {@value #WEIR_SHED}: the
 * Weir filter answering every request 429 from the shed path (its route's one permit held and
 * one request queued behind a cutoff of 0), to measure what that path costs; {@value
 * #WEIR_QUEUED}: the Weir filter with a limit of one and no rejector, so that a request finding
 * the permit taken waits in the queue and is resumed by {@code AsyncContext.dispatch()}, to
 * measure what waiting costs; and {@value #PASS_FILTER}: a filter that only calls the chain, to
 * measure what any filter costs before it does anything.
 */
public final class OverheadServer {
  /** A Weir filter that sheds every request at the door. */
  public static final String WEIR_SHED = "weir-shed";
  /** A Weir filter whose requests mostly wait in its queue: a limit of one, none shed. */
  public static final String WEIR_QUEUED = "weir-queued";
  /** A servlet filter that only passes each request on: the cost of being a filter at all. */
  public static final String PASS_FILTER = "pass-filter";

  private OverheadServer() {}

  /** A Weir filter with one permit and an hour's request timeout, behind {@code rejector}. */
  private static WeirFilter onePermit(Supplier<? extends Rejector> rejector) {
    return WeirFilter.builder()
        .shedder(LoadShedder.builder().limit(() -> Limits.fixed(1))
            .requestTimeout(Duration.ofHours(1)).rejector(rejector))
        .build();
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: OverheadServer <guard>");
      System.exit(2);
    }
    String name = args[0];
    Downstream downstream = new Downstream(8, Duration.ofMillis(20), 42);
    PrintStream out = System.out;
    ShedAll shedAll = null;
    WeirFilter shedFilter = null;
    ExampleServer server;
    if (name.equals(WEIR_SHED)) {
      shedAll = new ShedAll();
      ShedAll r = shedAll;
      shedFilter = onePermit(() -> r);
      server = ExampleServer.start(downstream, shedFilter);
    } else if (name.equals(WEIR_QUEUED)) {
      server = ExampleServer.start(downstream, onePermit(Rejectors::none));
    } else if (name.equals(PASS_FILTER)) {
      server = ExampleServer.start(downstream, (request, response, chain) ->
          chain.doFilter(request, response));
    } else {
      Guard guard = Guard.all().stream().filter(g -> g.name().equals(name)).findFirst()
          .orElseThrow(() -> new IllegalArgumentException("unknown guard " + name));
      server = guard.start(Backends.of(downstream));
    }
    try (ExampleServer s = server) {
      if (shedFilter != null) {
        shedEverything(s, shedFilter, shedAll);
      }
      out.println("port " + s.port());
      out.flush();
      com.sun.management.ThreadMXBean threads =
          (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
      com.sun.management.OperatingSystemMXBean os =
          (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
          StandardCharsets.US_ASCII));
      for (String line; (line = in.readLine()) != null; ) {
        if (line.equals("mark")) {
          long gcs = ManagementFactory.getGarbageCollectorMXBeans().stream()
              .mapToLong(b -> Math.max(0, b.getCollectionCount())).sum();
          out.printf(Locale.ROOT, "cpu %d alloc %d gc %d jit %d%n", os.getProcessCpuTime(),
              threads.getTotalThreadAllocatedBytes(), gcs,
              JitWarmup.compilationMillis());
          out.flush();
        }
      }
    }
    System.exit(0);
  }

  /**
   * Creates the route's shedder with one request, holds its only permit, queues one request and
   * arms the rejector: every later request is shed at the door.
   */
  private static void shedEverything(ExampleServer s, WeirFilter filter, ShedAll rejector)
      throws Exception {
    HttpURLConnection c = (HttpURLConnection) s.helloUri().toURL().openConnection();
    if (c.getResponseCode() != 200) {
      throw new IllegalStateException("first request answered " + c.getResponseCode());
    }
    c.getInputStream().readAllBytes();
    LoadShedder route = filter.shedders().get("GET " + ExampleServer.HELLO_PATH);
    if (route == null) {
      throw new IllegalStateException("no shedder for GET /hello: " + filter.shedders().keySet());
    }
    int p = Priority.of(0, 0);
    Permit held = route.acquire(p);
    route.submit(p, new dev.weir.AdmissionCallback() {
      @Override
      public void onAdmitted(Permit permit) {
        permit.success();
      }

      @Override
      public void onRejected(dev.weir.RejectReason reason) {}
    });
    rejector.armed = true;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (route.cutoff() != 0 && System.nanoTime() - deadline < 0) {
      Thread.sleep(5); // the control tick runs on the shedder's timer thread
    }
    if (route.cutoff() != 0 || route.queued() != 1 || held.isReleased()) {
      throw new IllegalStateException("could not set up shedding: " + route);
    }
  }

  /** Sheds every priority once armed. */
  private static final class ShedAll implements Rejector {
    volatile boolean armed;

    @Override
    public int update(ControlWindow window) {
      return armed ? 0 : Priority.LEVELS;
    }

    @Override
    public double ratio() {
      return armed ? 1 : 0;
    }

    @Override
    public boolean overloaded() {
      return armed;
    }
  }
}
