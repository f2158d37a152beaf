package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.VegasLimit;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * When slow start stops for lack of demand, against hand-made windows: only when the requests did
 * not use the limit the window ran at, not because inflight had yet to follow a limit that grew
 * during the window.
 */
class VegasLimitSlowStartTest {
  private static final long TICK = TimeUnit.MILLISECONDS.toNanos(100);
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  private final VegasLimit v = VegasLimit.builder().build();
  private long now;

  /** A tick at {@code limit} whose inflight peaked at {@code peak}: answers of about 100 ms. */
  private static ControlWindow window(long now, int limit, int peak, int samples) {
    ControlWindow w = new ControlWindow();
    w.nowNanos = now;
    w.intervalNanos = TICK;
    w.limit = limit;
    w.inflight = peak;
    w.peakInflight = peak;
    w.successes = samples;
    w.admitted = samples;
    for (int i = 0; i < samples; i++) {
      w.latencies.record(100 * MS + (i % 5) * 2 * MS);
    }
    return w;
  }

  /** The first window, at the initial limit, fully used; returns the limit after it. */
  private int measure() {
    now += TICK;
    return v.update(window(now, 4, 4, 60));
  }

  @Test
  void slowStartGoesOnWhileInflightFollowsTheLimitATickLate() {
    int limit = measure();
    int before = limit;
    // Each tick's inflight reaches the limit of the tick before: the requests admitted under a
    // raised limit take a tick to arrive. Each slow-start window (20 answers) spans two ticks, the
    // limit grows in the first, and the window's peak is the limit it began at.
    for (int i = 0; i < 40 && limit < 64; i++) {
      now += TICK;
      int next = v.update(window(now, limit, before, 10));
      before = limit;
      limit = next;
    }
    assertTrue(limit >= 64, "slow start stopped at " + limit);
  }

  @Test
  void slowStartStopsWhenDemandIsMetBelowTheLimitTheWindowRanAt() {
    int limit = measure();
    // Demand for 3 in flight under a limit of 4, whatever the limit: slow start stops growing it.
    for (int i = 0; i < 40; i++) {
      now += TICK;
      limit = v.update(window(now, limit, 3, 20));
    }
    assertEquals(4, limit);
    // Once it has stopped, a surge is met by Vegas's additive growth, not by doubling: ten
    // windows of 100 answers with every permit in use.
    for (int i = 0; i < 10; i++) {
      now += TICK;
      limit = v.update(window(now, limit, limit, 100));
    }
    assertTrue(limit < 4 << 5, "still doubling after demand was met: " + limit);
  }
}
