package dev.weir.jmh;

import dev.weir.LoadShedder;
import dev.weir.VirtualTime;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * One control tick of a shedder that sees no request: what each idle route of a filter or handler
 * costs ten times a second (an idle route keeps its shedder while most route slots are free). The
 * operation moves virtual time by one control interval, which runs exactly one tick.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@State(Scope.Thread)
public class IdleTickBenchmark {
  private static final long INTERVAL_NANOS =
      LoadShedder.Builder.DEFAULT_CONTROL_INTERVAL.toNanos();

  VirtualTime time;
  LoadShedder shedder;

  @Setup
  public void setup() {
    time = new VirtualTime();
    shedder = LoadShedder.builder().name("jmh-idle").timer(time).build();
  }

  @TearDown
  public void tearDown() {
    shedder.close();
  }

  @Benchmark
  public int tick() {
    time.advance(INTERVAL_NANOS);
    return shedder.limit();
  }
}
