package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.weir.control.Limits;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The overload policy against hand-made windows: the backlog it tells the rejector to aim for. */
class OverloadPolicyTest {
  private static final long TICK = TimeUnit.MILLISECONDS.toNanos(100);
  private static final long QUEUE_TIMEOUT = TimeUnit.MILLISECONDS.toNanos(300);

  /**
   * One tick at a fixed limit of 100, tiers 1 and 5 arriving, {@code admitted} requests admitted
   * and {@code queueTimeouts} timed out in the queue.
   */
  private static ControlWindow window(long now, long admitted, long queueTimeouts) {
    ControlWindow w = new ControlWindow();
    w.nowNanos = now;
    w.intervalNanos = TICK;
    w.queueTimeoutNanos = QUEUE_TIMEOUT;
    w.requestTimeoutNanos = 3 * QUEUE_TIMEOUT;
    w.arrivals = 2 * admitted;
    w.levelArrivals[Priority.of(1, 0)] = admitted;
    w.levelArrivals[Priority.of(5, 0)] = admitted;
    w.enqueued = 2 * admitted;
    w.dequeued = admitted;
    w.admitted = admitted;
    w.queueTimeouts = queueTimeouts;
    w.queueLength = 150;
    w.inflight = 100;
    w.peakInflight = 100;
    w.limit = 100;
    return w;
  }

  /** The backlog target of the last of 60 ticks, each admitting {@code admitted}. */
  private static double targetAfter(long admitted, long queueTimeouts) {
    SetRejector rejector = new SetRejector();
    OverloadPolicy policy = new OverloadPolicy(Limits.fixed(100), rejector, 4096);
    for (int i = 0; i < 60; i++) {
      policy.decide(window(i * TICK, admitted, queueTimeouts));
    }
    return rejector.backlogTargets.get(rejector.backlogTargets.size() - 1);
  }

  @Test
  void whileRequestsTimeOutTheTargetIsNoLongerThanWhatIsAdmittedInAQueueTimeout() {
    // A slow service: 10 admitted a tick, 30 in a queue timeout, where a limit's worth (100)
    // would wait more than three queue timeouts.
    assertEquals(30, targetAfter(10, 1), 0.1);
    // A faster one: 150 admitted in a queue timeout, so a limit's worth drains within it.
    assertEquals(100, targetAfter(50, 1), 1e-9);
  }

  @Test
  void aTickOfNoLengthTakesNoAimFromIt() {
    // A timer that runs a tick at the instant of the last one: nothing admitted, no interval.
    // What a queue timeout admits is then unknown, not zero over zero: the aim stays a limit's.
    SetRejector rejector = new SetRejector();
    OverloadPolicy policy = new OverloadPolicy(Limits.fixed(100), rejector, 4096);
    ControlWindow w = window(0, 0, 1);
    w.intervalNanos = 0;
    policy.decide(w);
    assertEquals(100, rejector.backlogTargets.get(0), 1e-9);
  }

  @Test
  void withoutQueueTimeoutsTheSlowServiceKeepsItsTargetInLimits() {
    // Nothing times out: a limit and a quarter, however long its wait.
    assertEquals(125, targetAfter(10, 0), 1e-9);
  }
}
