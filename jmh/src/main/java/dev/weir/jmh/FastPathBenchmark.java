package dev.weir.jmh;

import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import dev.weir.LoadShedder;
import dev.weir.Permit;
import dev.weir.Priority;
import dev.weir.RejectedException;
import dev.weir.control.PidRejector;
import dev.weir.control.VegasLimit;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Admission cost per request on the fast path, when nothing is overloaded: admit, then release
 * with a latency sample. Every contender is shared by the benchmark's threads, so at two threads
 * they contend on its counters as a server's request threads would.
 *
 * <p>Abstract so that one set of methods runs at 1 and at 2 threads: JMH generates the benchmarks
 * for the subclasses {@link FastPath1Thread} and {@link FastPath2Threads}, which differ only in
 * their {@code @Threads}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public abstract class FastPathBenchmark {
  /** A mid-range priority; any priority takes the same path when nothing is shed. */
  static final int PRIORITY = Priority.of(2, 64);

  /** The floor: a semaphore, plus the two clock reads any latency sample needs. */
  @State(Scope.Benchmark)
  public static class SemaphoreState {
    final Semaphore semaphore = new Semaphore(Integer.MAX_VALUE);
  }

  /** Netflix concurrency-limits {@code SimpleLimiter} over a Vegas limit with its defaults. */
  @State(Scope.Benchmark)
  public static class NetflixVegasState {
    Limiter<Void> limiter;

    @Setup
    public void setup() {
      limiter = SimpleLimiter.newBuilder()
          .named("jmh-vegas")
          .limit(com.netflix.concurrency.limits.limit.VegasLimit.newDefault())
          .build();
    }
  }

  /** Netflix concurrency-limits {@code SimpleLimiter} over a Gradient2 limit with its defaults. */
  @State(Scope.Benchmark)
  public static class NetflixGradient2State {
    Limiter<Void> limiter;

    @Setup
    public void setup() {
      limiter = SimpleLimiter.newBuilder()
          .named("jmh-gradient2")
          .limit(Gradient2Limit.newDefault())
          .build();
    }
  }

  /**
   * A Weir shedder with the default adaptive controllers, a limit far above the thread count so
   * nothing ever queues, and a control interval long enough that no tick runs while measuring.
   */
  @State(Scope.Benchmark)
  public static class WeirState {
    LoadShedder shedder;
    final ReleasingCallback callback = new ReleasingCallback();

    @Setup
    public void setup() {
      shedder = LoadShedder.builder()
          .name("jmh-fast-path")
          .limit(() -> VegasLimit.builder().initialLimit(1000).maxLimit(1000).build())
          .rejector(() -> PidRejector.builder().build())
          // The production default (100 ms): ticks run on the timer thread, as in a server,
          // and set the latency sample rate from the admission rate.
          .build();
    }

    @TearDown
    public void tearDown() {
      shedder.close();
    }
  }

  /** What every contender pays for its latency sample: two clock reads, and nothing else. */
  @Benchmark
  public long nanoTimePair() {
    long start = System.nanoTime();
    return System.nanoTime() - start;
  }

  @Benchmark
  public long semaphore(SemaphoreState s) {
    long start = System.nanoTime();
    if (!s.semaphore.tryAcquire()) {
      return -1;
    }
    s.semaphore.release();
    return System.nanoTime() - start;
  }

  @Benchmark
  public boolean netflixVegas(NetflixVegasState s) {
    return admitAndRelease(s.limiter);
  }

  @Benchmark
  public boolean netflixGradient2(NetflixGradient2State s) {
    return admitAndRelease(s.limiter);
  }

  /** The blocking API: on the fast path {@code acquire} returns at once. */
  @Benchmark
  public boolean weirAcquire(WeirState s) throws RejectedException, InterruptedException {
    Permit permit = s.shedder.acquire(PRIORITY);
    return permit.success();
  }

  /** The callback API, with a reusable callback that releases inside {@code onAdmitted}. */
  @Benchmark
  public void weirSubmit(WeirState s) {
    // The ticket is dropped, as a caller that never cancels would, so it need not escape.
    s.shedder.submit(PRIORITY, s.callback);
  }

  static boolean admitAndRelease(Limiter<Void> limiter) {
    Optional<Limiter.Listener> listener = limiter.acquire(null);
    if (listener.isPresent()) {
      listener.get().onSuccess();
      return true;
    }
    return false;
  }
}
