package dev.weir;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.PidRejector;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The rejector against hand-made windows: what it does with a backlog the shedder will evict. */
class PidRejectorBacklogTest {
  private static final long TICK = TimeUnit.MILLISECONDS.toNanos(100);

  /** One interval at the limit's capacity: 100 arrivals, 60 served, the rest queued or waiting. */
  private static ControlWindow window(long now, int queueLength) {
    ControlWindow w = new ControlWindow();
    w.nowNanos = now;
    w.intervalNanos = TICK;
    w.arrivals = 100;
    w.levelArrivals[Priority.of(1, 0)] = 50;
    w.levelArrivals[Priority.of(5, 0)] = 50;
    w.enqueued = 100;
    w.dequeued = 60;
    w.admitted = 60;
    w.queueLength = queueLength;
    w.limit = 10;
    w.queueEmptied = false;
    return w;
  }

  @Test
  void aQueueThatEmptiesWhileSheddingNudgesTheRatioDown() {
    PidRejector steady = PidRejector.builder().build();
    PidRejector emptying = PidRejector.builder().build();
    long now = 0;
    for (int i = 0; i < 6; i++, now += TICK) {
      steady.update(window(now, 15));
      emptying.update(window(now, 15));
    }
    assertTrue(steady.overloaded() && emptying.overloaded());
    for (int i = 0; i < 5; i++, now += TICK) {
      steady.update(window(now, 15));
      ControlWindow w = window(now, 15);
      w.queueEmptied = true;
      emptying.update(w);
    }
    // Five intervals, one nudge each: the door sheds less where permits were seen idle.
    double gap = steady.ratio() - emptying.ratio();
    assertTrue(gap > 0.04 && gap < 0.06, "steady " + steady.ratio() + ", emptying "
        + emptying.ratio());
  }

  @Test
  void aColdStartBacklogDoesNotShutTheDoorOnTheImportantTier() {
    // Overload detected with 1,000 waiting, 100 times the limit: the shedder trims that to two
    // limits' worth by eviction. Counted in full, the integral alone would add 0.08 * 990 / 100 =
    // 0.8 to the ratio in one tick, shedding tier 1 as well as tier 5.
    PidRejector rejector = PidRejector.builder().build();
    long now = 0;
    for (int i = 0; i < 6; i++, now += TICK) {
      rejector.update(window(now, 1000));
    }
    assertTrue(rejector.overloaded());
    assertTrue(rejector.ratio() > 0, "the excess inflow is shed");
    assertTrue(rejector.ratio() <= 0.5, "tier 5 is half the traffic; ratio " + rejector.ratio());
    assertTrue(rejector.cutoff() > Priority.of(1, 0), "tier 1 is admitted");
  }
}
