package dev.weir.jmh;

import dev.weir.LoadShedder;
import dev.weir.Permit;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import dev.weir.VirtualTime;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
 * The queued path in steady state: a limit of 1, always held. Each operation submits a request,
 * which must queue (arming its queue timeout), then releases the held permit, which dispatches the
 * queued request on the releasing thread (disarming the timeout); that request's permit is the one
 * held for the next operation.
 *
 * <p>Virtual time keeps the timer thread out. Its cancelled tasks stay in its heap until time
 * passes their deadline, so the queue timeout is 1 µs and every operation advances time by as
 * much: the heap stays at one or two tasks instead of growing for the whole run.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Threads(1)
@State(Scope.Thread)
public class QueuedPathBenchmark {
  private static final long STEP_NANOS = 1_000;

  VirtualTime time;
  LoadShedder shedder;
  final HoldingCallback holder = new HoldingCallback();

  @Setup
  public void setup() {
    time = new VirtualTime();
    shedder = LoadShedder.builder()
        .name("jmh-queued")
        .timer(time)
        .limit(() -> Limits.fixed(1))
        .rejector(Rejectors::none)
        .queueTimeout(Duration.ofNanos(STEP_NANOS))
        .controlInterval(Duration.ofHours(1))
        .build();
    shedder.submit(FastPathBenchmark.PRIORITY, holder);
    if (holder.held == null) {
      throw new IllegalStateException("the first request was not admitted: " + shedder);
    }
  }

  @TearDown
  public void tearDown() {
    shedder.close();
  }

  /** @return whether the queued request was dispatched (always, unless something broke) */
  @Benchmark
  public boolean enqueueAndDispatch() {
    Permit before = holder.held;
    shedder.submit(FastPathBenchmark.PRIORITY, holder);
    before.success();
    time.advance(STEP_NANOS);
    return holder.held != before;
  }
}
