package dev.weir.jmh;

import dev.weir.LoadShedder;
import dev.weir.Permit;
import dev.weir.Priority;
import dev.weir.VirtualTime;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One control tick with the default controllers ({@code VegasLimit} and {@code PidRejector}): the
 * shedder reads its striped counters into the window, and both controllers update from it.
 *
 * <p>Before each tick, outside the measurement, a batch of {@value #BATCH} requests of random
 * priorities runs one after another in virtual time, each held 0.3 to 0.7 ms, so every window has
 * enough latency samples for the limit to update ({@code minSamples} is 100). The measured
 * operation only moves virtual time onto the tick. A per-invocation setup costs a few tens of
 * nanoseconds of timestamping, small next to a tick's microseconds.
 *
 * <p>{@code -prof gc} counts the whole iteration, setup included: its B/op holds the batch's
 * {@value #BATCH} requests as well as the tick's own allocation.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Threads(1)
@State(Scope.Thread)
public class ControlTickBenchmark {
  static final int BATCH = 128;
  private static final long INTERVAL_NANOS =
      LoadShedder.Builder.DEFAULT_CONTROL_INTERVAL.toNanos();

  VirtualTime time;
  LoadShedder shedder;
  final HoldingCallback holder = new HoldingCallback();
  final int[] priorities = new int[BATCH];
  final long[] holdNanos = new long[BATCH];
  long nextTick;

  @Setup(Level.Trial)
  public void setup() {
    SplittableRandom random = new SplittableRandom(7);
    for (int i = 0; i < BATCH; i++) {
      priorities[i] = random.nextInt(Priority.LEVELS);
      holdNanos[i] = 300_000 + random.nextLong(400_000);
    }
    time = new VirtualTime();
    shedder = LoadShedder.builder().name("jmh-tick").timer(time).build();
    nextTick = INTERVAL_NANOS;
  }

  @Setup(Level.Invocation)
  public void runBatch() {
    for (int i = 0; i < BATCH; i++) {
      shedder.submit(priorities[i], holder);
      Permit p = holder.take();
      if (p != null) {
        time.advance(holdNanos[i]);
        p.success();
      }
    }
    time.advanceTo(nextTick - 1);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    shedder.close();
  }

  /** @return the limit the tick set */
  @Benchmark
  public int tick() {
    time.advanceTo(nextTick);
    nextTick += INTERVAL_NANOS;
    return shedder.limit();
  }
}
