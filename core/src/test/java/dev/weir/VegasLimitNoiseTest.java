package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.VegasLimit;
import org.junit.jupiter.api.Test;

/**
 * What the limit reads as noise, and what as a queue or a slower service, against hand-made
 * windows. The noise floor never hides a queue of half the limit: past a processor-shared
 * service's knee the spread it reads is the queue's own. A cut is evidence of a slower service only
 * beyond the window median's noise, as many windows read it, not the last one alone. Slow start
 * that ends because the demand is met keeps a start-up baseline, as one that ends on a rise does,
 * counting the requests still running as slower than every answer.
 */
class VegasLimitNoiseTest {
  static final long TICK = VegasLimitSlowStartTest.TICK;
  static final long MS = VegasLimitSlowStartTest.MS;
  static final long BASE = 20 * MS;

  private final VegasLimit v = VegasLimit.builder().build();
  private long now;

  /**
   * A tick at {@code limit}, {@code peak} in flight at its peak and its end, with 100 answers: 30
   * at {@code median / spread}, 40 at {@code median}, 30 at {@code median * spread}.
   */
  private int tick(int limit, int peak, long median, double spread) {
    now += TICK;
    ControlWindow w = VegasLimitSlowStartTest.window(now, limit, peak, median, 0);
    w.successes = 100;
    w.admitted = 100;
    for (int i = 0; i < 100; i++) {
      double f = i < 30 ? 1 / spread : i < 70 ? 1 : spread;
      w.latencies.record((long) (median * f));
    }
    return v.update(w);
  }

  /**
   * Measures a 20-ms service at the initial limit, doubles the limit a tick in slow start to 64,
   * and ends slow start for lack of demand, {@code inflight} in flight under 64; returns 64.
   */
  private int startWithoutDemand(int inflight) {
    int limit = tick(4, 4, BASE, 1.05);
    while (limit < 64) {
      limit = tick(limit, limit, BASE, 1.05);
    }
    limit = tick(limit, inflight, BASE, 1.05);
    assertEquals(64, limit);
    return limit;
  }

  /** The limit after {@code n} ticks with every permit in use. */
  private int busy(int limit, int n, long median, double spread) {
    for (int i = 0; i < n; i++) {
      limit = tick(limit, limit, median, spread);
    }
    return limit;
  }

  @Test
  void slowStartEndingForLackOfDemandKeepsTheStartUpBaseline() {
    int limit = startWithoutDemand(40);
    assertEquals(BASE, v.baselineNanos(), 0.07 * BASE);
    // Demand arrives and the service, now queueing, answers in five times as long: a queue to
    // shrink, not a new baseline.
    busy(limit, 1, 5 * BASE, 1.05);
    assertEquals(BASE, v.baselineNanos(), 0.07 * BASE,
        "the baseline rose without evidence of a slower service");
  }

  @Test
  void withMoreStillRunningThanAnsweredTheStartUpAnswersSetNoBaseline() {
    // A 500-ms service and 2,000 arrivals a second: slow start grows toward the demand, a
    // doubling a tick, on 20 answers a tick, and ends for lack of demand at 1,000 with 700 still
    // running and 240 answered. Those answers may be only the fastest of the requests started, so
    // they set no baseline: the first full window, at twice their latency, does.
    long slow = 500 * MS;
    int limit = 4;
    for (int i = 0; i < 20 && limit < 1000; i++) {
      limit = slowTick(limit, limit, slow, i == 0 ? 60 : 20);
    }
    assertEquals(1000, limit);
    slowTick(limit, 700, slow, 20);
    busy(limit, 1, 2 * slow, 1.05);
    assertTrue(v.baselineNanos() > 1.3 * slow,
        "a baseline from the fastest answers alone: " + v.baselineNanos() / MS + " ms");
  }

  /** A tick of {@code answers} answers of about {@code latency} and 200 arrivals. */
  private int slowTick(int limit, int peak, long latency, int answers) {
    now += TICK;
    ControlWindow w = VegasLimitSlowStartTest.window(now, limit, peak, latency, answers);
    w.arrivals = 200;
    return v.update(w);
  }

  @Test
  void theNoiseFloorDoesNotHideAQueueOfHalfTheLimit() {
    // Latencies spread sixteenfold between the quartiles: three standard errors of a window's
    // median read about 0.7 of the limit.
    int limit = busy(startWithoutDemand(40), 3, BASE, 4);
    int before = limit;
    // The median rises to three times the baseline: the queue estimate reaches two thirds of the
    // limit, within that noise. Past a processor-shared service's knee such a spread is the queue
    // itself, and a queue of half the limit doubles the latency.
    limit = busy(limit, 3, 3 * BASE, 4);
    assertTrue(limit < before, "the limit went from " + before + " to " + limit
        + " over a queue of two thirds of it");
  }

  @Test
  void aCutWithinTheMediansNoiseIsNoEvidenceOfASlowerService() {
    cutWithinTheNoiseJudgedAt(1.8);
    assertEquals(BASE, v.baselineNanos(), 0.07 * BASE,
        "rebased on a cut within the median's noise");
  }

  @Test
  void oneQuietWindowDoesNotOpenTheRebaseToACutWithinTheNoise() {
    // The window that judges the cut spreads its latencies by a tenth: the service's noise is
    // what many windows showed, not what the last one did. On the one-core server the rebases
    // that ratcheted the limit came on such dips of the noise estimate.
    cutWithinTheNoiseJudgedAt(1.05);
    assertEquals(BASE, v.baselineNanos(), 0.07 * BASE,
        "rebased on a cut within the noise after one quiet window");
  }

  /**
   * A service whose latencies spread about threefold between the quartiles doubles its latency,
   * and Vegas cuts the limit by more than a fifth but less than three standard errors of the
   * median; the window that judges the cut spreads its latencies by {@code judgingSpread}.
   */
  private void cutWithinTheNoiseJudgedAt(double judgingSpread) {
    // 40 in flight; the noise estimate takes some ten windows to follow a service's spread.
    int limit = startWithoutDemand(40);
    for (int i = 0; i < 30; i++) {
      limit = tick(limit, 40, BASE, 1.8);
    }
    int before = limit;
    // Twice the baseline, the same spread: three standard errors of the median are about a third
    // of the limit. Vegas cuts by a tenth or so a window, and latency does not fall with it.
    for (int i = 0; i < 10 && limit > 0.8 * before; i++) {
      limit = tick(limit, limit, 2 * BASE, 1.8);
    }
    assertTrue(limit <= 0.8 * before && limit > 0.7 * before,
        "the test needs a cut between a fifth and 0.3: " + before + " to " + limit);
    tick(limit, limit, 2 * BASE, judgingSpread);
  }
}
