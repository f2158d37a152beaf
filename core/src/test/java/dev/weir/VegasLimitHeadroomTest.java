package dev.weir;

import static dev.weir.VegasLimitSlowStartTest.MS;
import static dev.weir.VegasLimitSlowStartTest.TICK;
import static dev.weir.VegasLimitSlowStartTest.window;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.VegasLimit;
import org.junit.jupiter.api.Test;

/**
 * An unused limit settles at one and a half times the recent peak inflight, whether it arrived from
 * below (grown while it bound), from above (left high by a surge) or through a slowdown while it
 * was far from used (cut, and rebased when the cut did not bring latency down): its headroom does
 * not depend on the way it came. Latency cuts a limit toward its target by half the gap between
 * the queue estimate and the target; the estimate is below the limit, so no update cuts half of
 * it, and a deep queue is cut deeply.
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

  @Test
  void aSlowerServiceFarFromItsLimitIsCutRebasedAndSettlesAtOneAndAHalfTimesThePeak() {
    int limit = settledAt30();
    int lowest = limit;
    for (int i = 0; i < 400; i++) {
      // Demand falls to 10 in flight (under a quarter of the limit), the service three times slower.
      limit = tick(limit, 10, 300 * MS);
      lowest = Math.min(lowest, limit);
    }
    assertTrue(lowest >= 14, "cut to " + lowest);
    assertTrue(limit >= 14 && limit <= 16, "settled at " + limit);
  }

  @Test
  void aDeepQueueIsCutByLessThanHalfTheLimitInOneUpdate() {
    int limit = settledAt30();
    // Every permit in use and latency 30 times the baseline: the estimate reads nearly the whole
    // limit queued, and the update cuts toward the target by half the gap.
    int next = tick(limit, limit, 3000 * MS);
    assertTrue(next > limit / 2 && next < 0.7 * limit, "cut from " + limit + " to " + next);
  }
}
