package dev.weir;

import dev.weir.internal.BucketQueue;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.WeakReference;
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
 * Watchdog#reclaim}); the loser's call does nothing.
 *
 * <h2>Reuse</h2>
 * A holder that released the permit itself and will not touch it again may {@link #recycle} it:
 * the object becomes its thread's spare, and the thread's next submission {@linkplain #renew
 * renews} it as a new request, a new <em>life</em>, instead of allocating one. Only a life that
 * left nothing behind is recycled: admitted at once (never in the queue), released by its holder
 * (not reclaimed), and without a deadline hook. What it can leave behind anyway is stale
 * references of the watchdog: a sweep that read its slot a moment ago, or a timer entry a sweep
 * scheduled and nobody cancels. So the state word carries a generation above the phase, bumped by
 * each renewal, and every transition the watchdog makes is a CAS from the exact word it read: a
 * stale reader's CAS fails on a later life. A stale timer entry that finds a later life acts only
 * on that life's own times (a queue timeout only once it is due), which is what that life's own
 * entry would do.
 */
final class Request implements Ticket, Permit, Runnable, BucketQueue.Node {
  static final int PENDING = 0;
  static final int QUEUED = 1;
  static final int DEQUEUED = 2;
  static final int ADMITTED = 3;
  static final int RELEASED = 4;
  static final int REJECTED = 5;
  /** The phase's bits in the state word; the generation is above them. */
  private static final int PHASE = 7;
  /** One generation: each renewal adds it to the state word. */
  private static final int GENERATION = PHASE + 1;

  /**
   * Each thread's spare request, recycled by its last holder; see "Reuse". The thread holds its
   * slot weakly: a container thread outlives the webapp that loaded this class, and a strong value
   * (a {@code Request[]}) would hold the webapp's class loader for as long as the thread lives. A
   * slot the collector cleared is made anew; one in use is held by its request ({@link #home}).
   */
  private static final ThreadLocal<WeakReference<Request[]>> SPARE = new ThreadLocal<>();

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

  // Set by the constructor or by renew(), before the request is published; final in spirit.
  /** The mechanism that admitted, queued or rejected it, and takes its permit back. */
  Admission admission;
  int priority;
  long timeoutNanos;
  long queueTimeoutNanos;
  /** Null for a blocking {@link LoadShedder#acquire}: the waiting thread is woken instead. */
  AdmissionCallback callback;
  Thread waiter;

  /** The generation and the phase; see "Reuse". Read with {@link #phase()} or {@link #word()}. */
  private volatile int state;
  /**
   * Whether the arrival and admission times were read. The fast path reads the clock only for the
   * requests it samples; a queued request, or one whose deadline is watched, always has them.
   * Volatile so that a reader that sees it true also sees the times written before it.
   */
  volatile boolean timed;
  /**
   * Timed only when {@link #deadlineNanos} was first asked, after an unsampled admission, perhaps
   * long after it (an application checking the time it has left): its latency, counted from
   * that moment, is no sample for the limit. Written before {@link #timed}.
   */
  boolean deadlineOnly;
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
  /** Whether this life waited in the queue: its node may still be reachable there. */
  boolean waited;
  /**
   * The thread whose winning release ended this life, written once the shedder has done with it:
   * only that thread may recycle the request, once, so two threads can never both take it.
   */
  private Thread releasedBy;
  /**
   * The spare slot this request was last recycled into, and the thread that slot belongs to: a
   * thread that renews its spare and releases it itself puts it back without a second thread-local
   * lookup. Written by the recycling thread; a later recycler reads them after the request's own
   * publication to it (its release CAS reads the word the renewal stored), and looks its own slot
   * up unless the slot is its own.
   */
  private Request[] home;
  private Thread homeThread;

  Request(Admission admission, int priority, long timeoutNanos, long queueTimeoutNanos,
      AdmissionCallback callback, Thread waiter) {
    assign(admission, priority, timeoutNanos, queueTimeoutNanos, callback, waiter);
  }

  /** Sets what a life is submitted with: by the constructor, or by {@link #renew}. */
  private void assign(Admission admission, int priority, long timeoutNanos,
      long queueTimeoutNanos, AdmissionCallback callback, Thread waiter) {
    this.admission = admission;
    this.priority = priority;
    this.timeoutNanos = timeoutNanos;
    this.queueTimeoutNanos = queueTimeoutNanos;
    this.callback = callback;
    this.waiter = waiter;
  }

  /** Takes the calling thread's spare request, recycled by its last holder, or returns null. */
  static Request takeSpare() {
    Request[] spare = spareSlot();
    Request r = spare[0];
    spare[0] = null;
    return r;
  }

  /** The calling thread's spare slot, made if it has none or the collector cleared it. */
  private static Request[] spareSlot() {
    WeakReference<Request[]> ref = SPARE.get();
    Request[] slot = ref == null ? null : ref.get();
    if (slot == null) {
      slot = new Request[1];
      SPARE.set(new WeakReference<>(slot));
    }
    return slot;
  }

  /**
   * Starts a new life of a recycled request, PENDING in the next generation, on the thread that
   * took it as its spare. Every field of the last life is overwritten before the state word,
   * whose volatile write (and the later publications of the request) carries them to others.
   */
  void renew(Admission admission, int priority, long timeoutNanos, long queueTimeoutNanos,
      AdmissionCallback callback, Thread waiter) {
    assign(admission, priority, timeoutNanos, queueTimeoutNanos, callback, waiter);
    // A volatile store costs a fence: only what the last life changed is reset. A recycled life
    // had no hook and no rejection; most had no timer entry and were not timed.
    if (timed) {
      timed = false;
    }
    if (deadlineOnly) {
      deadlineOnly = false;
    }
    if (timeout != null) {
      timeout = null;
    }
    if (hookFired != 0) {
      hookFired = 0;
    }
    arrivalNanos = 0;
    admittedNanos = 0;
    watchSlot = -1;
    watchDeadline = 0;
    watchStamped = false;
    waited = false;
    releasedBy = null;
    // A release store, not a volatile one: whoever reads the new word sees every field above,
    // and no thread waits for this word in a handshake that needs the store-load fence a volatile
    // store costs (a stale reader of the last life fails its CAS either way).
    STATE.setRelease(this, ((state & ~PHASE) + GENERATION) | PENDING);
  }

  /** The phase of the current life: PENDING ... REJECTED. */
  int phase() {
    return state & PHASE;
  }

  /** The whole state word, generation and phase, for a later {@link #casWord}. */
  int word() {
    return state;
  }

  /** The phase in a state word read earlier with {@link #word}. */
  static int phaseOf(int word) {
    return word & PHASE;
  }

  /** Sets the phase of a request no one else can move: pending, or won by the caller's CAS. */
  void setPhase(int phase) {
    state = (state & ~PHASE) | phase;
  }

  /**
   * {@link #setPhase} by a release store: a reader that sees the phase sees every write before
   * it, but the store may become visible after the caller's later reads. For the fast path's
   * PENDING to ADMITTED, which only the watchdog's sweep and the holder itself read, and which no
   * one waits on in a handshake that needs the store-load fence of a volatile store.
   */
  void setPhaseRelease(int phase) {
    STATE.setRelease(this, (state & ~PHASE) | phase);
  }

  /** Records that the request arrived, and was admitted, at {@code now}. */
  void timeAt(long now) {
    arrivalNanos = now;
    admittedNanos = now;
    timed = true;
  }

  /** Moves the current life from phase {@code expect} to {@code update}, if it is there. */
  boolean cas(int expect, int update) {
    int w = state;
    return (w & PHASE) == expect && STATE.compareAndSet(this, w, (w & ~PHASE) | update);
  }

  /**
   * Moves the life whose state word was {@code word} to phase {@code update}: fails if that life
   * has moved on or ended, and always on a later life.
   */
  boolean casWord(int word, int update) {
    return STATE.compareAndSet(this, word, (word & ~PHASE) | update);
  }

  // ---- BucketQueue.Node

  @Override
  public int level() {
    return priority;
  }

  @Override
  public boolean isQueued() {
    return phase() == QUEUED;
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
    released(outcome);
    releasedBy = Thread.currentThread();
    return true;
  }

  /**
   * {@link #release}, but only of the life whose state word was {@code word}: for the shedder,
   * after a callback that threw, which may have handed this permit on first, and its holder
   * released and recycled it into a new request. Never recycled itself.
   */
  boolean releaseLife(int word, Outcome outcome) {
    if (phaseOf(word) != ADMITTED || !casWord(word, RELEASED)) {
      return false;
    }
    released(outcome);
    return true;
  }

  private void released(Outcome outcome) {
    Timer.Timeout t = timeout;
    if (t != null) {
      t.cancel();
    }
    admission.released(this, outcome);
  }

  /**
   * {@inheritDoc} Kept only if this life left nothing behind (see "Reuse"): released by its
   * holder's own {@link #release} on the calling thread, admitted without waiting, and without a
   * deadline hook.
   */
  @Override
  public void recycle() {
    Thread t = Thread.currentThread();
    if (releasedBy == t && phase() == RELEASED && !waited && deadlineHook == null) {
      releasedBy = null; // a second recycle() of the same life does nothing
      Request[] slot = home;
      if (homeThread != t) {
        slot = spareSlot();
        home = slot;
        homeThread = t;
      }
      slot[0] = this;
    }
  }

  @Override
  public void onDeadline(Runnable hook) {
    if (hook == null) {
      throw new NullPointerException("hook");
    }
    // One CAS decides the hook: a second call, concurrent or later, changes nothing.
    if (phase() != ADMITTED || !HOOK.compareAndSet(this, null, hook)) {
      return;
    }
    if (!timed) {
      // Admitted on the fast path unsampled, a moment ago (adapters call this at admission): the
      // deadline counts from now, and so does the latency, a sample like a sampled admission's.
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
    if (timed && phase() == ADMITTED) {
      admittedNanos = admission.clock.nanoTime();
    }
  }

  @Override
  public long queueWaitNanos() {
    return timed ? admittedNanos - arrivalNanos : 0;
  }

  /**
   * {@inheritDoc} A request admitted on the fast path without a sample has no arrival time; its
   * deadline counts from the first call of this method or {@link #onDeadline}, and its latency
   * stays no sample.
   */
  @Override
  public long deadlineNanos() {
    if (!timed) {
      deadlineOnly = true;
      timeAt(admission.clock.nanoTime());
    }
    return arrivalNanos + timeoutNanos;
  }

  @Override
  public boolean isReleased() {
    return phase() == RELEASED;
  }

  // ---- Timer task: the queue timeout while queued, the deadline hook once admitted.

  @Override
  public void run() {
    int w = state;
    int s = phaseOf(w);
    if (s == QUEUED) {
      // A stale watchdog entry of an earlier life may find this one queued: only a due timeout
      // counts (the timer never runs an entry early, so the life's own entry always passes).
      long now = admission.clock.nanoTime();
      if (now - (arrivalNanos + queueTimeoutNanos) >= 0 && casWord(w, REJECTED)) {
        admission.leftQueue(this, RejectReason.QUEUE_TIMEOUT);
      }
    } else if (s == ADMITTED) {
      long now = admission.clock.nanoTime();
      Runnable hook = deadlineHook;
      // A late-firing queue timer also lands here; only a passed deadline may fire the hook.
      if (hook != null && now - deadlineNanos() >= 0 && claimOverrun()) {
        admission.deadlinePassed(this);
        try {
          hook.run(); // the timer logs what it throws
        } finally {
          // Its timer entry was the watchdog's too: without it a stuck permit is never reclaimed.
          admission.watchdog.fired(this, now, w);
        }
        return;
      }
      admission.watchdog.fired(this, now, w);
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
    return "Request{priority=" + Priority.toString(priority) + ", phase=" + phase() + "}";
  }
}
