package dev.weir.jmh;

import dev.weir.LoadShedder;
import dev.weir.Outcome;
import dev.weir.control.Limits;
import dev.weir.sim.VirtualTime;
import java.time.Duration;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of a shed decision when overloaded: {@code submit} of a request whose priority is at or
 * above the cutoff, rejected at the door with {@code SHED} before it touches the queue. The cutoff
 * sheds only what would wait, so the setup holds the only permit: as under overload, every permit
 * is in use.
 *
 * <p>With {@code clock=virtual} the shedder runs on {@link VirtualTime}, advanced once past the
 * control interval so that the tick applies {@link ShedEverything}'s cutoff of 0; no timer thread
 * runs, and reading the clock is reading a field. With {@code clock=system} it runs on the real
 * clock and timer, as in production: each decision pays one {@code System.nanoTime()} (the
 * arrival time), and a 1 ms control tick keeps running on the {@code weir-timer} thread.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Threads(1)
@State(Scope.Thread)
public class ShedBenchmark {
  @Param({"virtual", "system"})
  String clock = "virtual";

  LoadShedder shedder;
  long held;
  final ReleasingCallback callback = new ReleasingCallback();

  @Setup
  public void setup() throws InterruptedException {
    LoadShedder.Builder builder = LoadShedder.builder()
        .name("jmh-shed")
        .limit(Limits.fixed(1))
        .rejector(new ShedEverything());
    switch (clock) {
      case "virtual":
        VirtualTime time = new VirtualTime();
        shedder = builder.timer(time).build();
        time.advance(LoadShedder.Builder.DEFAULT_CONTROL_INTERVAL.toNanos());
        break;
      case "system":
        shedder = builder.controlInterval(Duration.ofMillis(1)).build();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (shedder.cutoff() != 0 && System.nanoTime() - deadline < 0) {
          Thread.sleep(1); // waiting on a real timer thread; no latch to wait on
        }
        break;
      default:
        throw new IllegalArgumentException("clock must be virtual or system, was " + clock);
    }
    if (shedder.cutoff() != 0) {
      throw new IllegalStateException("the tick did not apply the cutoff: " + shedder);
    }
    held = shedder.tryEnter(FastPathBenchmark.PRIORITY);
    if (held == LoadShedder.NOT_ADMITTED) {
      throw new IllegalStateException("could not take the only permit: " + shedder);
    }
  }

  @TearDown
  public void tearDown() {
    shedder.exit(held, Outcome.SUCCESS);
    shedder.close();
  }

  @Benchmark
  public void shed() {
    shedder.submit(FastPathBenchmark.PRIORITY, callback);
  }
}
