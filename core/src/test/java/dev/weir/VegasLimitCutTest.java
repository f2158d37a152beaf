package dev.weir;

import static dev.weir.VegasLimitSlowStartTest.MS;
import static dev.weir.VegasLimitSlowStartTest.TICK;
import static dev.weir.VegasLimitSlowStartTest.window;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.VegasLimit;
import org.junit.jupiter.api.Test;

/**
 * How far latency cuts the limit. The Vegas step moves the limit half the way from its queue
 * estimate to the target, and the estimate is below the limit, so no update cuts half of it
 * however slow the service reads, and a deep queue is cut deeply. A latency rise while the limit is far from used is cut like any
 * other: a cut that does not bring latency down rebases, and the unused limit then settles near
 * its recent peak, as it would have without the rise.
 */
class VegasLimitCutTest {
  private final VegasLimit v = VegasLimit.builder().build();
  private long now;

  /** A tick of 200 answers of about {@code latency}, inflight peaking at {@code peak}. */
  private int tick(int limit, int peak, long latency) {
    now += TICK;
    return v.update(window(now, limit, Math.min(limit, peak), latency, 200));
  }

  /** Slow start on a 100 ms service, ended by a rise; then 200 ticks at 30 in flight. */
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
  void aDeepQueueIsCutByLessThanHalfTheLimitInOneUpdate() {
    int limit = settledAt30();
    // Every permit in use and latency 30 times the baseline: the estimate reads nearly the whole
    // limit queued, and the update cuts toward the target by half the gap.
    int next = tick(limit, limit, 3000 * MS);
    assertTrue(next > limit / 2 && next < 0.7 * limit, "cut from " + limit + " to " + next);
  }

  @Test
  void aSlowerServiceFarFromItsLimitRebasesAndTheLimitSettlesNearThePeak() {
    int limit = settledAt30();
    int lowest = limit;
    for (int i = 0; i < 400; i++) {
      // Demand falls to 10 in flight (a third of the limit) and the service is three times slower.
      limit = tick(limit, 10, 300 * MS);
      lowest = Math.min(lowest, limit);
    }
    assertTrue(lowest >= 14, "cut to " + lowest);
    assertTrue(limit >= 14 && limit <= 16, "settled at " + limit);
  }
}
