package dev.weir;

import static dev.weir.VegasLimitSlowStartTest.MS;
import static dev.weir.VegasLimitSlowStartTest.TICK;
import static dev.weir.VegasLimitSlowStartTest.window;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.VegasLimit;
import org.junit.jupiter.api.Test;

/**
 * An unused limit settles at one and a half times the recent peak inflight, whether it arrived from
 * below (grown while it bound) or from above (left high by a surge): its headroom does not depend
 * on the way it came.
 */
class VegasLimitHeadroomTest {
  private final VegasLimit v = VegasLimit.builder().build();
  private long now;

  /** A tick of 200 answers of about {@code latency}, inflight peaking at {@code peak}. */
  private int tick(int limit, int peak, long latency) {
    now += TICK;
    return v.update(window(now, limit, Math.min(limit, peak), latency, 200));
  }

  /** Slow start on a 100 ms service, ended by a rise; then 200 ticks of demand for 30 in flight. */
  private int settledAt30() {
    int limit = tick(4, 4, 100 * MS);
    while (limit < 64) {
      limit = tick(limit, limit, 100 * MS);
    }
    limit = tick(limit, limit, 300 * MS);
    limit = tick(limit, limit, 300 * MS);
    for (int i = 0; i < 200; i++) {
      limit = tick(limit, 30, 100 * MS);
    }
    return limit;
  }

  @Test
  void anUnusedLimitSettlesAtOneAndAHalfTimesThePeakFromBelow() {
    int limit = settledAt30();
    // Slow start restarted below 30 (at a quarter to a half of 64 or more); the limit grew while it
    // bound, and went on growing once unused, to 45.
    assertTrue(limit >= 43 && limit <= 46, "settled at " + limit);
  }

  @Test
  void anUnusedLimitSettlesAtOneAndAHalfTimesThePeakFromAbove() {
    int limit = settledAt30();
    // Demand falls to 10 in flight: the recent peak decays to it, and the limit follows, to 15.
    for (int i = 0; i < 400; i++) {
      limit = tick(limit, 10, 100 * MS);
    }
    assertTrue(limit >= 14 && limit <= 16, "settled at " + limit);
  }
}
