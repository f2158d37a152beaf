package dev.weir.jmh;

import dev.weir.LoadShedder;
import dev.weir.Permit;
import dev.weir.control.Limits;
import dev.weir.VirtualTime;
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
 * above the cutoff while others wait, rejected at the door with {@code SHED}. The cutoff sheds
 * only what would wait, so the setup holds the only permit and queues one request, as under
 * overload, when every permit is in use and the queue is seldom empty. That request's timeout is
 * an hour, longer than any run.
 *
 * <p>With {@code clock=virtual} the shedder runs on {@link VirtualTime}, advanced once past the
 * control interval so that the tick applies {@link ShedEverything}'s cutoff of 0; no timer thread
 * runs, and reading the clock is reading a field. With {@code clock=system} it runs on the real
 * clock and timer, as in production: a 1 ms control tick keeps running on the {@code weir-timer}
 * thread.
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
  Permit held;
  final ReleasingCallback callback = new ReleasingCallback();
  final ReleasingCallback waiting = new ReleasingCallback();

  @Setup
  public void setup() throws Exception {
    ShedEverything rejector = new ShedEverything();
    LoadShedder.Builder builder = LoadShedder.builder()
        .name("jmh-shed")
        .limit(() -> Limits.fixed(1))
        .requestTimeout(Duration.ofHours(1))
        .rejector(() -> rejector);
    VirtualTime time = null;
    switch (clock) {
      case "virtual":
        time = new VirtualTime();
        shedder = builder.timer(time).build();
        break;
      case "system":
        shedder = builder.controlInterval(Duration.ofMillis(1)).build();
        break;
      default:
        throw new IllegalArgumentException("clock must be virtual or system, was " + clock);
    }
    held = shedder.acquire(FastPathBenchmark.PRIORITY); // the only permit, free: returns at once
    shedder.submit(FastPathBenchmark.PRIORITY, waiting);
    rejector.arm();
    if (time != null) {
      time.advance(LoadShedder.Builder.DEFAULT_CONTROL_INTERVAL.toNanos());
    } else {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (shedder.cutoff() != 0 && System.nanoTime() - deadline < 0) {
        Thread.sleep(1); // waiting on a real timer thread; no latch to wait on
      }
    }
    if (shedder.cutoff() != 0 || shedder.queued() != 1) {
      throw new IllegalStateException("not one request queued behind a cutoff of 0: " + shedder);
    }
  }

  @TearDown
  public void tearDown() {
    held.success(); // admits the queued request, whose callback releases it
    shedder.close();
  }

  @Benchmark
  public void shed() {
    shedder.submit(FastPathBenchmark.PRIORITY, callback);
  }
}
