package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
    w.overloadQueueBound = 20;
    w.queueEmptied = false;
    return w;
  }

  /**
   * Like {@link #window}, with the arrivals in tier 1 alone, the shedder's bound for a cut inside
   * the most important tier arriving (a limit and a half), and the given flows.
   */
  private static ControlWindow oneTier(long now, int queueLength, int enqueued, int dequeued) {
    ControlWindow w = window(now, queueLength);
    java.util.Arrays.fill(w.levelArrivals, 0);
    w.levelArrivals[Priority.of(1, 0)] = 100;
    w.overloadQueueBound = 15;
    w.enqueued = enqueued;
    w.dequeued = dequeued;
    w.admitted = dequeued;
    return w;
  }

  /** What the shedder reports with tiers 1 and 5 arriving: the cut spares tier 1 if in tier 5. */
  private static ControlWindow sparedIfCutInTier5(ControlWindow w, PidRejector r) {
    w.cutSparesTopTier = r.cutoff() < Priority.LEVELS && Priority.tier(r.cutoff()) == 5;
    return w;
  }

  @Test
  void theQueueIsKeptFullerWhileTheCutSparesTheMostImportantTier() {
    // 17 waiting on a limit of 10. With tiers 1 and 5 arriving and the cut in tier 5, tier 1
    // goes ahead of everything queued, and the shedder says so: the rejector aims for the full
    // bound, two limits, and admits more. With tier 1 alone, cut inside it, every admitted
    // request waits behind the queue: it aims for a limit and a quarter and sheds more.
    PidRejector mixed = PidRejector.builder().build();
    PidRejector topOnly = PidRejector.builder().build();
    long now = 0;
    for (int i = 0; i < 6; i++, now += TICK) {
      mixed.update(sparedIfCutInTier5(window(now, 17), mixed));
      topOnly.update(oneTier(now, 17, 100, 60));
    }
    assertTrue(mixed.cutoff() > Priority.of(5, 0) && mixed.cutoff() < Priority.LEVELS,
        "cut in tier 5: " + mixed.cutoff());
    assertTrue(topOnly.cutoff() > Priority.of(1, 0) && topOnly.cutoff() < Priority.of(2, 0),
        "cut in tier 1: " + topOnly.cutoff());
    double mixedBefore = mixed.ratio();
    double topOnlyBefore = topOnly.ratio();
    for (int i = 0; i < 10; i++, now += TICK) {
      ControlWindow balanced = window(now, 17);
      balanced.enqueued = 60;
      mixed.update(sparedIfCutInTier5(balanced, mixed));
      topOnly.update(oneTier(now, 17, 60, 60));
    }
    assertTrue(mixed.ratio() < mixedBefore, mixedBefore + " -> " + mixed.ratio());
    assertTrue(topOnly.ratio() > topOnlyBefore, topOnlyBefore + " -> " + topOnly.ratio());
  }

  @Test
  void queueTimeoutsShortenTheBacklogAimedFor() {
    // The same queue of 19 that the rejector lets stand while the cut spares tier 1 is too long
    // once requests time out in it: tier 5 drains only through what tier 1 leaves.
    PidRejector rejector = PidRejector.builder().build();
    long now = 0;
    for (int i = 0; i < 6; i++, now += TICK) {
      rejector.update(window(now, 19));
    }
    double before = rejector.ratio();
    for (int i = 0; i < 10; i++, now += TICK) {
      ControlWindow timingOut = window(now, 19);
      timingOut.enqueued = 60;
      timingOut.queueTimeouts = 1;
      rejector.update(timingOut);
    }
    assertTrue(rejector.ratio() > before + 0.03, before + " -> " + rejector.ratio());
  }

  @Test
  void theTimeoutsOfTheBacklogBeforeSheddingBeganAreNotCounted() {
    // Shedding begins at 500 ms. For one queue timeout (1 s) after, every request that times out
    // arrived before: a cold start's backlog, not the queue now kept. They must not shorten the
    // backlog aimed for; later timeouts must.
    PidRejector quiet = PidRejector.builder().build();
    PidRejector timingOut = PidRejector.builder().build();
    long now = 0;
    for (int i = 0; i < 6; i++, now += TICK) {
      quiet.update(withQueueTimeout(window(now, 19), 0));
      timingOut.update(withQueueTimeout(window(now, 19), 0));
    }
    assertTrue(quiet.overloaded() && timingOut.overloaded());
    for (int i = 0; i < 9; i++, now += TICK) { // up to 1.4 s
      quiet.update(withQueueTimeout(window(now, 19), 0));
      timingOut.update(withQueueTimeout(window(now, 19), 5));
    }
    assertEquals(quiet.ratio(), timingOut.ratio(), 1e-12, "the backlog's timeouts are ignored");
    for (int i = 0; i < 10; i++, now += TICK) {
      quiet.update(withQueueTimeout(window(now, 19), 0));
      timingOut.update(withQueueTimeout(window(now, 19), 5));
    }
    assertTrue(timingOut.ratio() > quiet.ratio() + 0.03,
        "quiet " + quiet.ratio() + ", timing out " + timingOut.ratio());
  }

  /** A balanced window (as many leave the queue as enter it) with {@code timeouts} of them. */
  private static ControlWindow withQueueTimeout(ControlWindow w, int timeouts) {
    w.queueTimeoutNanos = TimeUnit.SECONDS.toNanos(1);
    w.enqueued = 60;
    w.queueTimeouts = timeouts;
    w.dequeued = 60 - timeouts;
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
