package dev.weir.jmh;

import dev.weir.LoadShedder;
import dev.weir.Permit;
import dev.weir.RejectedException;
import dev.weir.control.Limits;
import dev.weir.control.VegasLimit;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Admission cost per request at the operating point a server sits at when it is not overloaded:
 * the limit a little above what is in flight, so that every take and return goes through the
 * shared pool, not a thread's cache of credits. {@link FastPathBenchmark}'s limit of 1000 never
 * leaves the caches; it is kept here as {@code point=limit1000}, labelled, for comparison.
 *
 * <p>The points ({@code @Param point}):
 * <ul>
 *   <li>{@code zero-config}: {@code LoadShedder.builder().build()}, the adaptive limit and
 *       rejector as shipped, on the real clock and timer; the limit is wherever the controller
 *       takes it during the run (printed at the end of each trial).
 *   <li>{@code twice-inflight}: the default rejector, the limit fixed at twice the benchmark's
 *       thread count, where the adaptive limit settles when nothing is overloaded (its
 *       headroom over the peak in flight).
 *   <li>{@code limit1000}: the default rejector, an adaptive limit starting and capped at 1000,
 *       as in {@link FastPathBenchmark}: the per-thread caches serve everything.
 * </ul>
 * Netflix concurrency-limits {@code SimpleLimiter} over {@code VegasLimit.newDefault()} runs in
 * the same trial for comparison. Run at 1 and 2 threads through {@link OperatingPoint1Thread}
 * and {@link OperatingPoint2Threads}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public abstract class OperatingPointBenchmark {

  /** A Weir shedder at one of the operating points; see the class comment. */
  @State(Scope.Benchmark)
  public static class WeirState {
    @Param({"zero-config", "twice-inflight", "limit1000"})
    public String point = "zero-config";

    LoadShedder shedder;
    final ReleasingCallback callback = new ReleasingCallback();

    @Setup
    public void setup(BenchmarkParams params) {
      setup(params.getThreads());
    }

    void setup(int threads) {
      LoadShedder.Builder b = LoadShedder.builder().name("jmh-" + point);
      switch (point) {
        case "zero-config":
          break;
        case "twice-inflight":
          b.limit(() -> Limits.fixed(2 * threads));
          break;
        case "limit1000":
          b.limit(() -> VegasLimit.builder().initialLimit(1000).maxLimit(1000).build());
          break;
        default:
          throw new IllegalArgumentException("unknown point " + point);
      }
      shedder = b.build();
    }

    @TearDown
    public void tearDown() {
      System.err.println("# " + shedder);
      shedder.close();
    }
  }

  /** Netflix's {@code SimpleLimiter} over {@code VegasLimit.newDefault()}, as in FastPath. */
  @Benchmark
  public boolean netflixVegas(FastPathBenchmark.NetflixVegasState s) {
    return FastPathBenchmark.admitAndRelease(s.limiter);
  }

  /** The blocking API: admitted at once, released with a success. */
  @Benchmark
  public boolean weirAcquire(WeirState s) throws RejectedException, InterruptedException {
    Permit permit = s.shedder.acquire(FastPathBenchmark.PRIORITY);
    return permit.success();
  }

  /** The callback API, with a reusable callback that releases inside {@code onAdmitted}. */
  @Benchmark
  public void weirSubmit(WeirState s) {
    s.shedder.submit(FastPathBenchmark.PRIORITY, s.callback);
  }
}
