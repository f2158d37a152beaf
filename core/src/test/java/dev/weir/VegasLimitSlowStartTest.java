package dev.weir;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.VegasLimit;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * How slow start grows and ends, against hand-made windows. Where the arrivals need more in flight
 * than a doubling per round trip gives, it grows toward their demand a tick at a time. It stops for
 * lack of demand only when the requests did not use the limit the window ran at, not because
 * inflight had yet to follow a limit that grew during the window. It restarts, once latency rose,
 * at Vegas's estimate of the knee, but not below a quarter of the limit reached, however slow the
 * windows that ended it. Drops while it starts (a service slow for its first seconds) cut the
 * limit but do not end the start.
 */
class VegasLimitSlowStartTest {
  static final long TICK = TimeUnit.MILLISECONDS.toNanos(100);
  static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  private final VegasLimit v = VegasLimit.builder().build();
  private long now;

  /**
   * A tick at {@code limit} whose inflight peaked at {@code peak}: {@code samples} answers took
   * about {@code latency}, with a spread of 8%.
   */
  static ControlWindow window(long now, int limit, int peak, long latency, int samples) {
    ControlWindow w = new ControlWindow();
    w.nowNanos = now;
    w.intervalNanos = TICK;
    w.limit = limit;
    w.inflight = peak;
    w.peakInflight = peak;
    w.successes = samples;
    w.admitted = samples;
    for (int i = 0; i < samples; i++) {
      w.latencies.record(latency + (i % 5) * latency / 50);
    }
    return w;
  }

  /** The next tick: every permit in use, answers of about {@code latency}; the limit after it. */
  private int busy(int limit, long latency, int samples) {
    now += TICK;
    return v.update(window(now, limit, limit, latency, samples));
  }

  /** Slow start on a 100 ms service until the limit reaches 64; returns the limit reached. */
  private int growTo64() {
    int limit = busy(4, 100 * MS, 60);
    for (int i = 0; i < 100 && limit < 64; i++) {
      limit = busy(limit, 100 * MS, Math.max(20, limit));
    }
    assertTrue(limit >= 64, "slow start stopped at " + limit);
    return limit;
  }

  /** Two windows of answers at {@code latency} from {@code limit}; returns the limit after them. */
  private int endSlowStart(int limit, long latency) {
    for (int i = 0; i < 2; i++) {
      limit = busy(limit, latency, 40);
    }
    return limit;
  }

  @Test
  void slowStartGoesOnWhileInflightFollowsTheLimitATickLate() {
    int limit = busy(4, 100 * MS, 60);
    int before = limit;
    // Each tick's inflight reaches the limit of the tick before: the requests admitted under a
    // raised limit take a tick to arrive. Each slow-start window (20 answers) spans two ticks, the
    // limit grows in the first, and the window's peak is the limit it began at.
    for (int i = 0; i < 40 && limit < 64; i++) {
      now += TICK;
      int next = v.update(window(now, limit, before, 100 * MS, 10));
      before = limit;
      limit = next;
    }
    assertTrue(limit >= 64, "slow start stopped at " + limit);
  }

  @Test
  void onASlowServiceSlowStartGrowsTowardTheArrivalsDemandATickAtATime() {
    long latency = 500 * MS;
    int limit = busy(4, latency, 60);
    // 100 arrivals a tick (1,000 a second) at 500 ms hold 500 in flight; the answers that come
    // back in a tick are a fifth of the limit, so doubling per round trip would take about 26
    // ticks to get there. Each tick may at most double the limit, and none overshoots the demand.
    int ticks = 0;
    for (; ticks < 40 && limit < 500; ticks++) {
      now += TICK;
      ControlWindow w = window(now, limit, limit, latency, Math.max(1, limit / 5));
      w.arrivals = 100;
      int next = v.update(w);
      assertTrue(next <= 2 * limit, "more than a doubling in a tick: " + limit + " to " + next);
      assertTrue(next <= 500 + limit / 5, "past the demand: " + next);
      limit = next;
    }
    assertTrue(limit >= 500, "slow start stopped at " + limit);
    assertTrue(ticks <= 8, "took " + ticks + " ticks to reach the demand");
  }

  @Test
  void slowStartStopsWhenDemandIsMetBelowTheLimitTheWindowRanAt() {
    int limit = busy(4, 100 * MS, 60);
    // Demand for 3 in flight under a limit of 4, whatever the limit: slow start stops growing it.
    // The unused limit settles at one and a half times the recent peak (4, while measuring).
    for (int i = 0; i < 40; i++) {
      now += TICK;
      limit = v.update(window(now, limit, 3, 100 * MS, 20));
    }
    assertTrue(limit >= 4 && limit <= 6, "limit " + limit);
    // Once it has stopped, a surge is met by Vegas's additive growth, not by doubling: ten
    // windows of 100 answers with every permit in use.
    for (int i = 0; i < 10; i++) {
      limit = busy(limit, 100 * MS, 100);
    }
    assertTrue(limit < 4 << 5, "still doubling after demand was met: " + limit);
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

  @Test
  void dropsWhileStartingCutTheLimitButTheStartGoesOnOnceAnswersComeBackInTime() {
    // A wide pool slow for its first seconds: at a limit of 4 every window's answers are drops
    // (past their deadline), then the service is fast (100 ms) and 1,000 arrivals a second need
    // 100 in flight.
    int limit = 4;
    for (int i = 0; i < 20; i++) {
      now += TICK;
      ControlWindow w = window(now, limit, limit, 3000 * MS, 0);
      w.drops = 2;
      w.arrivals = 100;
      limit = v.update(w);
    }
    assertTrue(limit < 4, "drops cut the limit: " + limit);
    int ticks = 0;
    for (; ticks < 60 && limit < 100; ticks++) {
      now += TICK;
      ControlWindow w = window(now, limit, limit, 100 * MS, Math.max(1, limit));
      w.arrivals = 100;
      limit = v.update(w);
    }
    // Measured, then slow start toward the demand: seconds, where Vegas's additive growth from 3
    // would take minutes.
    assertTrue(limit >= 100, "the start did not go on: " + limit);
    assertTrue(ticks <= 30, "took " + ticks + " ticks to reach the demand");
  }
}
