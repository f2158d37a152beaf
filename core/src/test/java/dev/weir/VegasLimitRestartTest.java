package dev.weir;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.VegasLimit;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Where slow start restarts the limit, against hand-made windows: Vegas's estimate of the knee,
 * but not below a quarter of the limit reached, however slow the windows that ended it.
 */
class VegasLimitRestartTest {
  private static final long TICK = TimeUnit.MILLISECONDS.toNanos(100);
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  private final VegasLimit v = VegasLimit.builder().build();
  private long now;

  /** A tick with every permit in use: {@code samples} answers took about {@code latency}. */
  private static ControlWindow window(long now, int limit, long latency, int samples) {
    ControlWindow w = new ControlWindow();
    w.nowNanos = now;
    w.intervalNanos = TICK;
    w.limit = limit;
    w.inflight = limit;
    w.peakInflight = limit;
    w.successes = samples;
    w.admitted = samples;
    for (int i = 0; i < samples; i++) {
      w.latencies.record(latency + (i % 5) * latency / 50); // a spread of 8%
    }
    return w;
  }

  /** Slow start on a 100 ms service until the limit reaches 64; returns the limit reached. */
  private int growTo64() {
    int limit = v.update(window(now, 4, 100 * MS, 60));
    for (int i = 0; i < 100 && limit < 64; i++) {
      now += TICK;
      limit = v.update(window(now, limit, 100 * MS, Math.max(20, limit)));
    }
    assertTrue(limit >= 64, "slow start stopped at " + limit);
    return limit;
  }

  /** Two windows of answers at {@code latency} from {@code limit}; returns the limit after them. */
  private int endSlowStart(int limit, long latency) {
    for (int i = 0; i < 2; i++) {
      now += TICK;
      limit = v.update(window(now, limit, latency, 40));
    }
    return limit;
  }

  @Test
  void aStallAsSlowStartEndsRestartsTheLimitAtAQuarterOfWhatItReached() {
    int reached = growTo64();
    // A 1 s stall: every answer of the two windows that end slow start ten times slower. Vegas's
    // estimate reads a queue of nine tenths of the limit; slow start cannot have overshot that far.
    int limit = endSlowStart(reached, 1000 * MS);
    assertTrue(limit <= reached / 2, "slow start did not end: " + limit + " of " + reached);
    assertTrue(limit >= reached / 4, "restarted at " + limit + " of " + reached);
  }

  @Test
  void anOvershootRestartsAtVegassEstimate() {
    int reached = growTo64();
    // Latency 2.5 times the start-up's: Vegas reads a knee at 0.4 of the limit, inside the bounds.
    int limit = endSlowStart(reached, 250 * MS);
    assertTrue(Math.abs(limit - 0.4 * reached) <= 0.05 * reached,
        "restarted at " + limit + " of " + reached + ", not at 0.4 of it");
  }
}
