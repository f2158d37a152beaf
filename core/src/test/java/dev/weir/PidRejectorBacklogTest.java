package dev.weir;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.PidRejector;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The rejector against hand-made windows: the backlog it aims for, and one it must not chase. */
class PidRejectorBacklogTest {
  private static final long TICK = TimeUnit.MILLISECONDS.toNanos(100);
  /** The bound the shedder's policy keeps at a limit of 10: a limit and a half. */
  private static final int BOUND = 15;

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
  void aQueueShortOfItsTargetPullsTheRatioDownOnAFastServiceAsOnA20msOne() {
    // Two services at a limit of 10, one a hundred times faster: a hundred times the arrivals a
    // tick for the same queue. The door shuts on half the traffic, then the queue stays short of
    // its target: the cut is too deep, and what it lets in is served at once. Divided by the
    // arrivals alone, the backlog's pull on the fast service is a hundred times weaker; its ratio
    // barely moves, and the cut goes on emptying the queue, idling the service.
    PidRejector slow = PidRejector.builder().build();
    PidRejector fast = PidRejector.builder().build();
    long now = 0;
    for (int i = 0; i < 20; i++, now += TICK) {
      slow.update(fastWindow(now, BOUND, 1, 50), 12.5, BOUND);
      fast.update(fastWindow(now, BOUND, 100, 50), 12.5, BOUND);
    }
    double cut = fast.ratio();
    assertTrue(cut > 0.3 && Math.abs(slow.ratio() - cut) < 1e-9, "slow " + slow.ratio()
        + ", fast " + cut);
    for (int i = 0; i < 10; i++, now += TICK) {
      slow.update(fastWindow(now, 2, 1, 30), 12.5, BOUND);
      fast.update(fastWindow(now, 2, 100, 30), 12.5, BOUND);
    }
    assertTrue(fast.ratio() < cut - 0.1, "from " + cut + " to " + fast.ratio());
    assertTrue(Math.abs(fast.ratio() - slow.ratio()) < 1e-9, "slow " + slow.ratio() + ", fast "
        + fast.ratio());
  }

  /**
   * A tick of a service at a limit of 10 whose latency is {@code 20 / scale} ms: 50 arrivals (a
   * limit and a quarter's target, four times) times {@code scale}, half tier 1 and half tier 5,
   * {@code enqueued} of them (times {@code scale}) queued and 30 admitted from the queue.
   */
  private static ControlWindow fastWindow(long now, int queueLength, int scale, int enqueued) {
    ControlWindow w = window(now, queueLength);
    w.arrivals = 50L * scale;
    w.levelArrivals[Priority.of(1, 0)] = 25L * scale;
    w.levelArrivals[Priority.of(5, 0)] = 25L * scale;
    w.enqueued = (long) enqueued * scale;
    w.dequeued = 30L * scale;
    w.admitted = 30L * scale;
    return w;
  }

  @Test
  void aShorterBacklogTargetShedsMore() {
    // The policy aims for one limit while requests time out in the queue, a limit and a quarter
    // otherwise: the same queue then reads as more backlog, and the door sheds more.
    PidRejector usual = PidRejector.builder().build();
    PidRejector timingOut = PidRejector.builder().build();
    long now = 0;
    for (int i = 0; i < 16; i++, now += TICK) {
      ControlWindow w = window(now, 13);
      w.enqueued = i < 6 ? 100 : 60;
      usual.update(w, 12.5, BOUND);
      timingOut.update(w, 10, BOUND);
    }
    assertTrue(usual.overloaded() && timingOut.overloaded());
    assertTrue(timingOut.ratio() > usual.ratio() + 0.02,
        "usual " + usual.ratio() + ", timing out " + timingOut.ratio());
  }

  @Test
  void aColdStartBacklogDoesNotShutTheDoorOnTheImportantTier() {
    // Overload detected with 1,000 waiting, 100 times the limit: the shedder trims that to its
    // bound by eviction. Counted in full, the integral alone would add 0.08 * 990 / 100 = 0.8 to
    // the ratio in one tick, shedding tier 1 as well as tier 5.
    PidRejector rejector = PidRejector.builder().build();
    long now = 0;
    for (int i = 0; i < 6; i++, now += TICK) {
      rejector.update(window(now, 1000), 12.5, BOUND);
    }
    assertTrue(rejector.overloaded());
    assertTrue(rejector.ratio() > 0, "the excess inflow is shed");
    assertTrue(rejector.ratio() <= 0.5, "tier 5 is half the traffic; ratio " + rejector.ratio());
    assertTrue(rejector.cutoff() > Priority.of(1, 0), "tier 1 is admitted");
  }

  @Test
  void requestsTheirCallersWithdrawLeaveTheQueueAsTimeoutsDo() {
    // A standing queue whose length holds: half the outflow is served, half withdrawn by callers
    // (clients that left; the Ring middleware's sync seats evicting a less important waiter).
    // Counted as excess inflow, the withdrawals alone would push the ratio up every tick until
    // the door shut on tier 1 too.
    PidRejector rejector = PidRejector.builder().build();
    long now = 0;
    for (int i = 0; i < 40; i++, now += TICK) {
      ControlWindow w = window(now, 12);
      w.enqueued = 60;
      w.dequeued = 30;
      w.cancelled = 30;
      rejector.update(w, 12.5, BOUND);
    }
    assertTrue(rejector.ratio() < 0.05, "the queue holds; ratio " + rejector.ratio());
    assertTrue(rejector.cutoff() > Priority.of(5, 0), "tier 5 is admitted");
  }

  @Test
  void aStandingExcessCutsEveryLessImportantTierButNotTheMostImportantOne() {
    // Twice as much arrives as leaves, tick after tick: the PI ratio climbs past tier 5's half of
    // the traffic. The cut stops at tier 1, the most important tier arriving, and the ratio is
    // held at tier 5's share, so it does not wind up past what the door can shed; tier 1's own
    // excess, if any, is the queue's to turn away (its bound answers at once).
    PidRejector rejector = PidRejector.builder().build();
    PidRejector unbounded = PidRejector.builder().build();
    long now = 0;
    for (int i = 0; i < 60; i++, now += TICK) {
      ControlWindow w = window(now, BOUND);
      w.enqueued = 100;
      w.dequeued = 50;
      rejector.update(w, 12.5, BOUND);
      assertTrue(rejector.cutoff() >= Priority.of(2, 0), "tick " + i + ": cutoff "
          + rejector.cutoff() + " cuts into tier 1");
    }
    assertTrue(rejector.overloaded());
    assertTrue(rejector.cutoff() == Priority.of(2, 0), "all of tier 5 is cut: " + rejector.cutoff());
    assertTrue(Math.abs(rejector.ratio() - 0.5) < 1e-9, "held at tier 5's share: "
        + rejector.ratio());
  }

  @Test
  void oneTierAloneIsStillCutByCohort() {
    // With nothing less important arriving, there is no tier to spare the only one for: the
    // ratio covers its least important cohorts, as the cohort scheme intends.
    PidRejector rejector = PidRejector.builder().build();
    long now = 0;
    for (int i = 0; i < 60 && rejector.ratio() < 0.3; i++, now += TICK) {
      ControlWindow w = window(now, BOUND);
      java.util.Arrays.fill(w.levelArrivals, 0);
      for (int cohort = 0; cohort < Priority.COHORTS; cohort += 16) {
        w.levelArrivals[Priority.of(3, cohort)] = 100 / 8;
      }
      w.enqueued = 100;
      w.dequeued = 50;
      rejector.update(w, 12.5, BOUND);
    }
    assertTrue(rejector.ratio() >= 0.3, "ratio " + rejector.ratio());
    assertTrue(rejector.cutoff() > Priority.of(3, 0) && rejector.cutoff() < Priority.of(4, 0),
        "cut within tier 3: " + rejector.cutoff());
  }

  @Test
  void aStrayRequestOfAMoreImportantTierDoesNotMoveTheTierSpared() {
    // Under 1% of the traffic does not count as arriving: the tier spared is the next one, and a
    // single tier-0 request cannot stop the door from shedding tier 5.
    PidRejector rejector = PidRejector.builder().build();
    long now = 0;
    for (int i = 0; i < 60; i++, now += TICK) {
      ControlWindow w = window(now, BOUND);
      if (i % 20 == 0) {
        w.levelArrivals[Priority.of(0, 0)] = 1;
      }
      w.enqueued = 100;
      w.dequeued = 50;
      rejector.update(w, 12.5, BOUND);
    }
    assertTrue(rejector.cutoff() == Priority.of(2, 0), "cutoff " + rejector.cutoff());
  }
}
