package dev.weir;

import dev.weir.internal.BucketQueue;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * One submitted request: at once the queue node, the timer task, the ticket and the permit, so a
 * request costs one object. Its life is a small state machine advanced only by CAS, so each
 * transition, and therefore each callback, happens exactly once:
 *
 * <pre>
 *   PENDING ──► ADMITTED ──► RELEASED          (fast path)
 *      │
 *      ├──► QUEUED ──► DEQUEUED ──► ADMITTED ──► RELEASED
 *      │       │            └─────► REJECTED   (evicted, or shutdown)
 *      │       └──► REJECTED                   (queue timeout, cancel, shutdown)
 *      └──► REJECTED                           (shed, queue full, closed)
 * </pre>
 *
 * <p>ADMITTED to RELEASED is won either by the holder's {@link #release} or by the shedder's
 * watchdog, which reclaims a permit still held at its deadline plus the grace ({@link
 * Admission#reclaim}); the loser's call does nothing.
 */
final class Request implements Ticket, Permit, Runnable, BucketQueue.Node {
  static final int PENDING = 0;
  static final int QUEUED = 1;
  static final int DEQUEUED = 2;
  static final int ADMITTED = 3;
  static final int RELEASED = 4;
  static final int REJECTED = 5;

  private static final VarHandle STATE;
  private static final VarHandle HOOK_FIRED;
  private static final VarHandle HOOK;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      STATE = l.findVarHandle(Request.class, "state", int.class);
      HOOK_FIRED = l.findVarHandle(Request.class, "hookFired", int.class);
      HOOK = l.findVarHandle(Request.class, "deadlineHook", Runnable.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** The mechanism that admitted, queued or rejected it, and takes its permit back. */
  final Admission admission;
  final int priority;
  final long timeoutNanos;
  final long queueTimeoutNanos;
  /** Null for a blocking {@link LoadShedder#acquire}: the waiting thread is woken instead. */
  final AdmissionCallback callback;
  final Thread waiter;

  volatile int state;
  /**
   * Whether the arrival and admission times were read. The fast path reads the clock only for the
   * requests it samples; a queued request, or one whose deadline is watched, always has them.
   * Volatile so that a reader that sees it true also sees the times written before it.
   */
  volatile boolean timed;
  long arrivalNanos;
  long admittedNanos;
  /** Set just before the final state is published; volatile for {@link LoadShedder#acquire}, which
   * may see the state a CAS set before the reason. */
  volatile RejectReason rejectReason;
  volatile Timer.Timeout timeout;
  volatile Runnable deadlineHook;
  volatile int hookFired;
  /**
   * The permit's slot in the shedder's {@link dev.weir.internal.Watchlist}, or -1 if it has a
   * watchdog timer entry of its own instead. Written before the state becomes ADMITTED, so whoever
   * sees ADMITTED sees it.
   */
  int watchSlot = -1;
  /**
   * The deadline the watchdog counts its grace from, for a request without times (admitted on the
   * fast path unsampled): stamped once, by the admitting thread before it publishes the request or
   * by the control tick's sweep on the timer thread, never both. A timed request uses its arrival.
   */
  long watchDeadline;
  boolean watchStamped;

  Request(Admission admission, int priority, long timeoutNanos, long queueTimeoutNanos,
      AdmissionCallback callback, Thread waiter) {
    this.admission = admission;
    this.priority = priority;
    this.timeoutNanos = timeoutNanos;
    this.queueTimeoutNanos = queueTimeoutNanos;
    this.callback = callback;
    this.waiter = waiter;
  }

  /** Records that the request arrived, and was admitted, at {@code now}. */
  void timeAt(long now) {
    arrivalNanos = now;
    admittedNanos = now;
    timed = true;
  }

  boolean cas(int expect, int update) {
    return STATE.compareAndSet(this, expect, update);
  }

  // ---- BucketQueue.Node

  @Override
  public int level() {
    return priority;
  }

  @Override
  public boolean isQueued() {
    return state == QUEUED;
  }

  @Override
  public boolean tryDequeue() {
    return cas(QUEUED, DEQUEUED);
  }

  @Override
  public long offeredNanos() {
    // Queued requests are always timed: admit() reads the clock before it enqueues.
    return arrivalNanos;
  }

  // ---- Ticket

  @Override
  public boolean cancel() {
    if (!cas(QUEUED, REJECTED)) {
      return false;
    }
    admission.leftQueue(this, RejectReason.CANCELLED);
    return true;
  }

  @Override
  public int priority() {
    return priority;
  }

  // ---- Permit

  @Override
  public boolean release(Outcome outcome) {
    if (outcome == null) {
      throw new NullPointerException("outcome");
    }
    if (!cas(ADMITTED, RELEASED)) {
      return false;
    }
    Timer.Timeout t = timeout;
    if (t != null) {
      t.cancel();
    }
    admission.released(this, outcome);
    return true;
  }

  @Override
  public void onDeadline(Runnable hook) {
    if (hook == null) {
      throw new NullPointerException("hook");
    }
    // One CAS decides the hook: a second call, concurrent or later, changes nothing.
    if (state != ADMITTED || !HOOK.compareAndSet(this, null, hook)) {
      return;
    }
    if (!timed) {
      // Admitted on the fast path unsampled, a moment ago: the deadline counts from now.
      timeAt(admission.clock.nanoTime());
    }
    // A permit without a watchlist slot has a watchdog entry; the deadline's entry replaces it,
    // and run() schedules the watchdog again once the deadline has passed.
    Timer.Timeout old = timeout;
    if (old != null) {
      old.cancel();
    }
    admission.watchdog.scheduleWhileHeld(this, deadlineNanos());
  }

  /**
   * When the watchdog reclaims this permit if it is still held: its deadline plus the shedder's
   * grace. For a request without times, the deadline stamped in {@link #watchDeadline}.
   */
  long watchdogDueNanos() {
    long deadline = timed ? arrivalNanos + timeoutNanos : watchDeadline;
    return deadline + admission.watchdog.graceNanos;
  }

  @Override
  public void started() {
    // Queued requests are always timed; one admitted at once and unsampled has nothing to move.
    if (timed && state == ADMITTED) {
      admittedNanos = admission.clock.nanoTime();
    }
  }

  @Override
  public long queueWaitNanos() {
    return timed ? admittedNanos - arrivalNanos : 0;
  }

  /**
   * {@inheritDoc} A request admitted on the fast path without a sample has no arrival time; its
   * deadline counts from the first call of this method or {@link #onDeadline}.
   */
  @Override
  public long deadlineNanos() {
    if (!timed) {
      timeAt(admission.clock.nanoTime());
    }
    return arrivalNanos + timeoutNanos;
  }

  @Override
  public boolean isReleased() {
    return state == RELEASED;
  }

  // ---- Timer task: the queue timeout while queued, the deadline hook once admitted.

  @Override
  public void run() {
    int s = state;
    if (s == QUEUED) {
      if (cas(QUEUED, REJECTED)) {
        admission.leftQueue(this, RejectReason.QUEUE_TIMEOUT);
      }
    } else if (s == ADMITTED) {
      long now = admission.clock.nanoTime();
      Runnable hook = deadlineHook;
      // A late-firing queue timer also lands here; only a passed deadline may fire the hook.
      if (hook != null && now - deadlineNanos() >= 0 && claimOverrun()) {
        admission.deadlinePassed(this);
        hook.run();
      }
      admission.watchdog.fired(this, now);
    }
  }

  /**
   * Claims the overrun of this request's deadline, for whichever notices it first: the deadline
   * hook on the timer, or a release after the deadline. Exactly one caller wins, so the overrun is
   * counted once and the hook does not run once a late release has claimed it.
   */
  boolean claimOverrun() {
    return HOOK_FIRED.compareAndSet(this, 0, 1);
  }

  void wake() {
    // On the fast path the waiter is this thread, which is not parked: unparking it would cost a
    // system call and leave a stale permit for its next park.
    if (waiter != Thread.currentThread()) {
      LockSupport.unpark(waiter);
    }
  }

  @Override
  public String toString() {
    return "Request{priority=" + Priority.toString(priority) + ", state=" + state + "}";
  }
}
