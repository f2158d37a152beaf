package dev.weir.jmh;

import dev.weir.LoadShedder;
import dev.weir.servlet.WeirFilter;
import jakarta.servlet.Filter;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The servlet filter's own cost on the request object Jetty 12 (ee10) hands a filter, where
 * {@link FilterPathBenchmark}'s stub takes the Servlet API's {@code getHeader} path instead of the
 * one-pass read of Jetty's header fields. A real server ({@link HeldRequests}, no network) takes
 * one {@code GET /hello} per header set and holds it open inside its servlet; each operation then
 * runs {@code doFilter} on that live request and response, admitted at once and released when the
 * chain returns. The request is reused, so its attributes and headers stay in cache: this is the
 * filter's cost with the request's own cost left out, to compare contenders, not a request's
 * whole cost. {@code none} calls the chain directly.
 *
 * <p><b>Cold caches.</b> A real server runs its own code between two requests on a thread (the
 * kernel's network stack, Jetty's parsing, other threads on the core), which evicts the filter's
 * lines from the nearest caches; in this loop they stay hot. With {@code -p evictKb=N}, each
 * operation first writes one long in every 64-byte line of an N KB array ({@link Evict}): 48
 * evicts the L1 data cache of the machine this was written on (32 KB), 512 half its L2 (1 MB).
 * The writes cost the same in every benchmark, so compare each with {@code none} at the same N;
 * what remains is the filter's own cost plus the misses its footprint takes.
 *
 * <p><b>The sampling rate.</b> Weir reads the clock for one immediate admission in 2^k, k set by
 * each control tick from the last interval's admissions (about 256 samples an interval): in this
 * loop, at millions of operations a second, {@code weir} reads it for about one request in 2,048
 * (one in 512 at {@code evictKb=48}), where Netflix's filter reads it twice on every request. A
 * route below 5,120 admissions a second, like the overload demo's, samples every request: that is
 * {@code weirEverySampled}, whose shedder never ticks, so its sampling stays at every admission.
 * Compare the two before calling the clock reads Netflix's cost alone.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Threads(1)
public class FilterPathOnJetty {
  /** A live request and response, held open by the server's servlet until tear-down. */
  public static final class Held {
    final HttpServletRequest request;
    final HttpServletResponse response;

    Held(HttpServletRequest request, HttpServletResponse response) {
      this.request = request;
      this.response = response;
    }
  }

  /** The server and the two requests it holds: one plain, one with a tier and cohort. */
  @State(Scope.Benchmark)
  public static class Live {
    private final HeldRequests<Held> held = new HeldRequests<>();
    Held plain;
    Held tiered;

    @Setup(Level.Trial)
    public void setup() throws Exception {
      ServletContextHandler context = new ServletContextHandler();
      context.addServlet(new ServletHolder(new HttpServlet() {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) {
          try {
            held.handOver(new Held(req, resp));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }), "/hello");
      held.start(context);
      plain = held.hold(HeldRequests.PLAIN);
      tiered = held.hold(HeldRequests.TIERED);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
      held.stop();
    }
  }

  /** Each thread's array that evicts the caches before an operation; see "Cold caches". */
  @State(Scope.Thread)
  public static class Evict {
    /** The array's size in KB; 0 evicts nothing. */
    @Param({"0"})
    public int evictKb;
    private long[] lines;

    @Setup(Level.Trial)
    public void setup() {
      if (evictKb < 0) {
        throw new IllegalArgumentException("evictKb must not be negative, was " + evictKb);
      }
      lines = new long[evictKb * 1024 / Long.BYTES];
    }

    /** Writes one long in every 64-byte line of the array: stores to the heap, never elided. */
    void evict() {
      long[] a = lines;
      for (int i = 0; i < a.length; i += 8) {
        a[i]++;
      }
    }
  }

  @Benchmark
  public int none(Evict e, Live live) throws IOException, ServletException {
    e.evict();
    FilterPathBenchmark.OK.doFilter(live.plain.request, live.plain.response);
    return live.plain.response.getStatus();
  }

  @Benchmark
  public int netflixVegas(Evict e, FilterPathBenchmark.NetflixState s, Live live)
      throws IOException, ServletException {
    e.evict();
    return filter(s.filter, live.plain);
  }

  @Benchmark
  public int weir(Evict e, FilterPathBenchmark.WeirState s, Live live)
      throws IOException, ServletException {
    e.evict();
    return filter(s.filter, live.plain);
  }

  /**
   * {@code new WeirFilter()}'s settings, but a control interval longer than any run: no tick sets
   * the sampling rate from this loop's admissions, so every request is timed, as on a route below
   * 5,120 admissions a second. See "The sampling rate".
   */
  @State(Scope.Benchmark)
  public static class WeirEverySampledState {
    WeirFilter filter;

    @Setup
    public void setup() {
      filter = WeirFilter.builder()
          .shedder(LoadShedder.builder().controlInterval(Duration.ofDays(1))).build();
    }

    @TearDown
    public void tearDown() {
      filter.destroy();
    }
  }

  /** {@code weir} with every admission's latency sampled: two clock reads a request. */
  @Benchmark
  public int weirEverySampled(Evict e, WeirEverySampledState s, Live live)
      throws IOException, ServletException {
    e.evict();
    return filter(s.filter, live.plain);
  }

  /** The same, for a request that carries its tier and cohort. */
  @Benchmark
  public int weirTierHeader(Evict e, FilterPathBenchmark.WeirState s, Live live)
      throws IOException, ServletException {
    e.evict();
    return filter(s.filter, live.tiered);
  }

  private static int filter(Filter filter, Held held) throws IOException, ServletException {
    filter.doFilter(held.request, held.response, FilterPathBenchmark.OK);
    return held.response.getStatus();
  }
}
