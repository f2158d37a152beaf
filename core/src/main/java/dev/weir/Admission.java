package dev.weir;

import dev.weir.internal.BucketQueue;
import dev.weir.internal.Credits;
import dev.weir.internal.Watchlist;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The admission mechanism of one shedder: it admits, sheds, queues, dispatches and rejects
 * requests, and takes their permits back. It decides nothing about policy: the control tick
 * ({@link ControlLoop}) sets the knobs it reads (the cutoff, the queue's bound, the short-queue
 * length, the sampling rate) and the limit of its {@link Credits}.
 *
 * <p>The life of a request, in the order of this file: {@link #submit} (or {@link #acquire})
 * counts the arrival and {@linkplain #admit admits} it at once if a permit is free and nothing
 * waits; else sheds it if the cutoff excludes it; else {@linkplain #enqueue queues} it. Whoever
 * frees a permit {@linkplain #dispatch dispatches} the most important waiting request. The
 * admitted request's {@link Request#release} comes back to {@link #released}, which counts the
 * outcome and gives the permit back. A queued request that times out or is cancelled comes back
 * to {@link #leftQueue}.
 *
 * <p>Lock-free throughout; the fast path (admitted at once, unsampled) allocates only the request
 * and, while the limit is far from used, writes no cache line another thread writes.
 */
final class Admission {
  private static final Logger LOG = Logger.getLogger(LoadShedder.class.getName());

  /** What {@link #tryEnter} returns when it did not admit; negative, as no entry is. */
  static final long NOT_ADMITTED = -1L;
  /** Some 73 years: a timeout of "forever" must not wrap {@code now + timeout} into the past. */
  private static final long MAX_TIMEOUT_NANOS = Long.MAX_VALUE / 4;

  // An entry from tryEnter: bits 0-2 the tier; bit 3 set if the admission is a latency sample;
  // bits 4-62 the clock's low 59 bits at admission if it is (zero if not); bit 63 clear.
  private static final long ENTRY_TIER_MASK = 0b111;
  private static final long ENTRY_SAMPLED = 0b1000;
  private static final int ENTRY_TIME_SHIFT = 4;
  private static final long ENTRY_TIME_MASK = (1L << 59) - 1;

  final Timer timer;
  final Clock clock;
  private final long requestTimeoutNanos;
  private final long queueTimeoutNanos;
  private final double queueTimeoutFraction;

  /** Tiers are served strictly in order; within a tier, in arrival order whatever the cohort. */
  private final BucketQueue<Request> queue = new BucketQueue<>(Priority.LEVELS, Priority.COHORTS);
  final ShedderCounters counters = new ShedderCounters();
  /** The permits: the limit, the free credits, and the peak held; see {@link Credits}. */
  final Credits credits;
  /** The held permits the watchdog sweeps; see {@link #watch}. */
  private final Watchlist<Request> held = new Watchlist<>();
  /** How long past its deadline a permit may be held before the watchdog reclaims it. */
  final long watchdogGraceNanos;
  private final ThreadLocal<boolean[]> dispatching = ThreadLocal.withInitial(() -> new boolean[1]);

  // The knobs, written by the control tick and read by every admission.
  private volatile int cutoff = Priority.LEVELS;
  private volatile int queueBound;
  private volatile int shortQueue;
  /** Immediate admissions read the clock once every {@code sampleMask + 1}. */
  private volatile long sampleMask;
  private volatile boolean closed;

  Admission(Timer timer, long requestTimeoutNanos, long queueTimeoutNanos, int queueCapacity,
      int initialLimit, long watchdogGraceNanos) {
    this.timer = timer;
    this.watchdogGraceNanos = Math.min(watchdogGraceNanos, MAX_TIMEOUT_NANOS);
    this.clock = timer.clock();
    this.requestTimeoutNanos = requestTimeoutNanos;
    this.queueTimeoutNanos = queueTimeoutNanos;
    this.queueTimeoutFraction = (double) queueTimeoutNanos / requestTimeoutNanos;
    this.credits = new Credits(initialLimit);
    this.queueBound = queueCapacity;
  }

  // ---------------------------------------------------------------------------- arrival

  /** {@link LoadShedder#submit(int, long, AdmissionCallback)}. */
  Ticket submit(int priority, long timeoutNanos, AdmissionCallback callback) {
    Objects.requireNonNull(callback, "callback");
    int cut = cutoff;
    int queued;
    if (priority >= cut && (queued = queue.size()) != 0 && !fillsShortQueue(priority, cut, queued)
        && !closed) {
      // Cut off, and it would wait behind what is queued: what admit() decides, but without a
      // request object, on what is under overload the most frequent path.
      checkArguments(priority, timeoutNanos);
      return shedAtTheDoor(priority, callback);
    }
    Request r = newRequest(priority, timeoutNanos, callback, null);
    admit(r);
    return r;
  }

  /** {@link LoadShedder#acquire(int, long, java.util.concurrent.TimeUnit)}. */
  Permit acquire(int priority, long timeoutNanos) throws RejectedException, InterruptedException {
    Request r = newRequest(priority, timeoutNanos, null, Thread.currentThread());
    admit(r);
    for (;;) {
      int s = r.state;
      if (s == Request.ADMITTED || s == Request.RELEASED) {
        return r;
      }
      if (s == Request.REJECTED) {
        // A timeout or cancel wins the CAS to REJECTED a moment before it sets the reason; the
        // wake-up comes after the reason, so park until then rather than throw without one.
        RejectReason reason = r.rejectReason;
        if (reason != null) {
          throw new RejectedException(reason);
        }
      }
      LockSupport.park(this);
      if (Thread.interrupted()) {
        if (r.cancel()) {
          throw new InterruptedException();
        }
        // Lost the race to an admission or a rejection: it is decided, or about to be.
        while (r.state == Request.QUEUED || r.state == Request.DEQUEUED) {
          Thread.onSpinWait();
        }
        if (r.state == Request.ADMITTED) {
          r.release(Outcome.DROPPED);
        }
        throw new InterruptedException();
      }
    }
  }

  private static void checkArguments(int priority, long timeoutNanos) {
    Priority.check(priority);
    if (timeoutNanos <= 0) {
      throw new IllegalArgumentException("timeout must be positive, was " + timeoutNanos + "ns");
    }
  }

  /** Counts and answers what admit() counts and answers for a shed request. */
  private Ticket shedAtTheDoor(int priority, AdmissionCallback cb) {
    int stripe = counters.stripe();
    counters.arrived(stripe, priority);
    counters.shed(stripe, Priority.tier(priority));
    tellRejected(cb, RejectReason.SHED);
    return ShedTicket.of(priority);
  }

  private Request newRequest(int priority, long timeoutNanos, AdmissionCallback cb, Thread w) {
    checkArguments(priority, timeoutNanos);
    long queueTimeout = timeoutNanos == requestTimeoutNanos
        ? queueTimeoutNanos
        : (long) (timeoutNanos * queueTimeoutFraction);
    return new Request(this, priority, Math.min(timeoutNanos, MAX_TIMEOUT_NANOS),
        Math.min(queueTimeout, MAX_TIMEOUT_NANOS), cb, w);
  }

  /**
   * Admits at once if a permit is free and nothing waits, whatever the cutoff (turning away a
   * request a free permit could run would idle the permit and spare no one a wait); else sheds a
   * request the cutoff excludes, unless it tops up a short queue; else queues it.
   */
  private void admit(Request r) {
    int level = r.priority;
    int cut = cutoff;
    int stripe = counters.stripe();
    counters.arrived(stripe, level);
    if (closed) {
      reject(r, RejectReason.SHUTTING_DOWN);
    } else if (queue.size() == 0 && tryAcquirePermit()) {
      if (countImmediateAdmission(stripe, Priority.tier(level))) {
        r.timeAt(clock.nanoTime());
      }
      watch(r);
      r.state = Request.ADMITTED;
      deliverAdmitted(r);
    } else if (level >= cut && !fillsShortQueue(level, cut, queue.size())) {
      reject(r, RejectReason.SHED);
    } else {
      r.timeAt(clock.nanoTime());
      enqueue(r);
    }
  }

  /**
   * Whether a request cut off at {@code level} waits anyway: the queue is shorter than the tick's
   * short-queue length and the request is of the tier the cut falls in (see {@link
   * ControlLoop#SHORT_QUEUE_LIMITS}).
   */
  private boolean fillsShortQueue(int level, int cut, int queued) {
    return queued < shortQueue && Priority.tier(level) == Priority.tier(cut);
  }

  /**
   * Counts an admission that did not wait, and says whether the controllers sample its latency:
   * only every (sampleMask + 1)-th immediate admission of a stripe and tier reads the clock.
   */
  private boolean countImmediateAdmission(int stripe, int tier) {
    return (counters.admittedAtOnce(stripe, tier) & sampleMask) == 0;
  }

  // ------------------------------------------------------------------------------- queue

  /*
   * Reserve, then offer. A request takes its place in two steps: queue.reserve() counts it in the
   * queue's size (or an eviction hands it the victim's counted place), then queue.offer() links
   * it where a poll can find it. Between the two, the size says a request waits that no poll can
   * take yet. A dispatcher that meets such a place (poll() returns null with size() > 0) gives
   * its permit back to the pool and looks again; the enqueuer, once it has offered, dispatches
   * itself and finds that permit. For that wait to end, nothing between the reserve and the offer
   * may run foreign code on the enqueuing thread: a victim's callback may release a permit, and
   * the dispatch inside that release would spin, on this very thread, on the place only this
   * thread can fill. So the victim is rejected only after the offer.
   */

  private void enqueue(Request r) {
    Request victim = null;
    if (!queue.reserve(queueBound)) {
      victim = queue.evictLessImportantThan(r.priority);
      if (victim == null) {
        reject(r, RejectReason.QUEUE_FULL);
        return;
      }
      cancelTimeout(victim);
    }
    r.state = Request.QUEUED;
    r.timeout = timer.schedule(r, r.arrivalNanos + r.queueTimeoutNanos);
    counters.enqueued();
    queue.offer(r);
    if (victim != null) {
      reject(victim, RejectReason.QUEUE_FULL);
    }
    if (closed && r.cas(Request.QUEUED, Request.REJECTED)) {
      leftQueue(r, RejectReason.SHUTTING_DOWN);
      return;
    }
    dispatch();
  }

  /**
   * Evicts the least important waiting requests until the queue is within its bound. Enqueues
   * keep the bound one eviction at a time, but a lowered bound (overload just detected, after a
   * cold start's backlog) would otherwise stand over it until the backlog drained: every request
   * admitted meanwhile waits behind work the bound says should have been shed.
   */
  void trimToBound() {
    while (queue.size() > queueBound) {
      Request victim = queue.evictLessImportantThan(-1);
      if (victim == null) {
        return;
      }
      queue.unreserve();
      cancelTimeout(victim);
      reject(victim, RejectReason.QUEUE_FULL);
    }
  }

  /** A queued request was taken out by its timer, a cancel or shutdown (it won the CAS). */
  void leftQueue(Request r, RejectReason reason) {
    queue.removed(r.priority);
    if (reason != RejectReason.QUEUE_TIMEOUT) {
      cancelTimeout(r);
    }
    reject(r, reason);
  }

  // ---------------------------------------------------------------------------- dispatch

  /*
   * No lost wake-up. A request must never wait while a credit idles in a cache or the pool. The
   * credits and the queue's size are only touched by volatile accesses (CAS, getAndAdd, volatile
   * reads), which all threads see in one total order. A request that waits was counted in the
   * size (reserve) before its enqueuer's dispatch made its last tryAcquirePermit, which looks at
   * the enqueuer's cache, the pool and every other cache. Whoever puts a credit into a cache or
   * the pool (releasePermit, the tick's drain and raise, a take that drained) reads the size
   * afterwards, in dispatch(). Of these two write-then-read pairs, at least one read sees the
   * other's write: either the releaser sees the waiter and dispatches, and its own dispatch finds
   * the credit (it looks in its own cache first), or the waiter's look comes after the credit was
   * put down and finds it. Either way the credit is taken, by that look or by someone before it.
   * A credit drained from a cache is put into the pool by a second step, so its drainer dispatches
   * as a releaser does. A releaser already dispatching on its thread returns at once from the
   * inner dispatch(); its outer loop looks at the size and the credits again before it stops.
   */

  /**
   * Admits waiting requests while permits are free. Called by whoever may have freed one. A
   * callback that releases a permit re-enters here on the same thread; that inner call returns at
   * once and the outer loop carries on, so the stack stays flat however many requests it admits.
   */
  void dispatch() {
    if (queue.size() == 0) {
      return;
    }
    boolean[] active = dispatching.get();
    if (active[0]) {
      return;
    }
    active[0] = true;
    try {
      dispatchLoop();
    } finally {
      active[0] = false;
    }
  }

  private void dispatchLoop() {
    while (queue.size() > 0) {
      if (!tryAcquirePermit()) {
        return;
      }
      Request r = queue.poll();
      if (r == null) {
        // A reserved place not yet offered (see "Reserve, then offer"): the permit goes back to
        // the pool, where the offerer's dispatch looks, and we look again, in case our permit
        // blocked that dispatch.
        credits.release(false);
        Thread.onSpinWait();
        continue;
      }
      cancelTimeout(r);
      long now = clock.nanoTime();
      r.admittedNanos = now;
      watch(r);
      r.state = Request.ADMITTED;
      counters.admittedFromQueue(counters.stripe(), Priority.tier(r.priority),
          now - r.arrivalNanos);
      deliverAdmitted(r);
    }
  }

  /** Takes a permit, if one is free; its credit comes from wherever {@link Credits} finds one. */
  private boolean tryAcquirePermit() {
    int taken = credits.tryAcquire();
    if (taken == Credits.TAKEN_AND_DRAINED) {
      // Cached credits went into the pool: someone queued meanwhile must hear of them.
      dispatch();
    }
    return taken != Credits.NONE;
  }

  /** Gives a permit back and admits whoever waits for it. */
  private void releasePermit() {
    // Cached (if the pool is plentiful) even when someone waits: the dispatch that follows then
    // takes it back from this thread's cache, which it looks at first, for the waiter.
    credits.release(true);
    dispatch();
  }

  // ------------------------------------------------------------------------------ release

  /** An admitted request's permit was released (it won the CAS to RELEASED). */
  void released(Request r, Outcome outcome) {
    if (r.watchSlot >= 0) {
      held.remove(r.watchSlot);
    }
    int tier = Priority.tier(r.priority);
    int stripe = counters.stripe();
    counters.released(stripe, tier, outcome);
    // Only a request with times (sampled, queued, or watched for its deadline) costs clock reads.
    if (r.timed) {
      long now = clock.nanoTime();
      if (outcome == Outcome.SUCCESS) {
        counters.latency(stripe, now - r.admittedNanos);
      }
      // The deadline hook may be firing right now on the timer: whoever claims counts the overrun.
      if (now - r.deadlineNanos() > 0 && r.claimOverrun()) {
        counters.deadlineMissed(stripe, tier);
      }
    }
    releasePermit();
  }

  // ----------------------------------------------------------------------------- watchdog

  /*
   * The watchdog. Every permit from submit() or acquire() that is still held at its deadline plus
   * the grace is released by the shedder as DROPPED and counted RECLAIMED; the holder's later
   * release() loses the CAS to RELEASED and returns false. So a stuck application costs its own
   * requests, never the route. To cost the fast path no clock read, no allocation and no shared
   * write, an admitted permit goes into a slot of the held-permit Watchlist (a CAS on its stripe's
   * own line; the release empties it with one ordered store), and the control tick sweeps the
   * table: a permit whose reclaim falls before the next tick gets a timer entry at that instant,
   * so the reclaim is on time to the timer's tick, not the control interval's. A permit without
   * times (admitted at once, unsampled) has its deadline stamped when a sweep first sees it,
   * which is never early and at most one interval late. Only a permit whose stripe's slots are
   * all taken has a timer entry of its own, from its admission; a deadline hook's entry stands in
   * for it until the deadline and then schedules it again. The watchdog runs with the control
   * tick and stops with it at close().
   */

  /** Registers an admitted request with the watchdog; before its state becomes ADMITTED. */
  private void watch(Request r) {
    int slot = held.add(r);
    r.watchSlot = slot;
    if (slot < 0) {
      if (!r.timed) {
        r.watchDeadline = clock.nanoTime() + r.timeoutNanos;
        r.watchStamped = true;
      }
      r.timeout = timer.schedule(r, r.watchdogDueNanos());
    }
  }

  /**
   * Sweeps the held permits: reclaims those past their deadline plus the grace, and gives those
   * due before {@code now + horizonNanos} (the next sweep) a timer entry at the instant. On the
   * timer, by the control tick.
   */
  void sweepHeld(long now, long horizonNanos) {
    Watchlist<Request> h = held;
    for (int i = 0, n = h.length(); i < n; i++) {
      Request r = h.get(i);
      if (r == null || r.state != Request.ADMITTED) {
        continue;
      }
      if (!r.timed && !r.watchStamped) {
        // First seen now: admitted at or before now, so the deadline is at or before this one.
        r.watchDeadline = now + r.timeoutNanos;
        r.watchStamped = true;
      }
      long due = r.watchdogDueNanos();
      if (due - now <= 0) {
        reclaim(r);
      } else if (due - now < horizonNanos) {
        // Not kept: release does not cancel it; it finds the permit released and does nothing.
        timer.schedule(r, due);
      }
    }
  }

  /** A timer entry of an admitted request ran at {@code now}: reclaims it if it is due. */
  void watchdogFired(Request r, long now) {
    if (!r.timed && !r.watchStamped) {
      return;
    }
    long due = r.watchdogDueNanos();
    if (due - now <= 0) {
      reclaim(r);
    } else if (r.watchSlot < 0) {
      // The deadline hook's entry, or a late queue timer: the permit's own watchdog entry again.
      scheduleWhileHeld(r, due);
    }
  }

  /**
   * Schedules {@code r} as its own timer task at {@code deadline}, as {@code r.timeout}, unless
   * the permit is released meanwhile. The entry is written, then the state read; a release
   * writes the state, then reads the entry to cancel it: one of the two sees the other's write.
   */
  void scheduleWhileHeld(Request r, long deadline) {
    Timer.Timeout t = timer.schedule(r, deadline);
    r.timeout = t;
    if (r.state != Request.ADMITTED) {
      t.cancel();
    }
  }

  /** Releases a permit held past its deadline plus the grace, as DROPPED, if still held. */
  void reclaim(Request r) {
    if (closed || !r.cas(Request.ADMITTED, Request.RELEASED)) {
      return;
    }
    cancelTimeout(r);
    counters.reclaimed(Priority.tier(r.priority));
    released(r, Outcome.DROPPED);
  }

  /** An admitted request's deadline hook claimed the overrun. */
  void deadlinePassed(Request r) {
    counters.deadlineMissed(Priority.tier(r.priority));
  }

  // ------------------------------------------------------------- the fast path without a request

  /** {@link LoadShedder#tryEnter}: the immediate admission of {@link #admit}, as an entry. */
  long tryEnter(int priority) {
    Priority.check(priority);
    if (closed || queue.size() != 0 || !tryAcquirePermit()) {
      return NOT_ADMITTED;
    }
    int stripe = counters.stripe();
    int tier = Priority.tier(priority);
    counters.arrived(stripe, priority);
    if (countImmediateAdmission(stripe, tier)) {
      return ENTRY_SAMPLED | tier | (clock.nanoTime() & ENTRY_TIME_MASK) << ENTRY_TIME_SHIFT;
    }
    return tier;
  }

  /** {@link LoadShedder#exit}: what {@link #released} does, for an entry. */
  void exit(long entry, Outcome outcome) {
    checkEntry(entry);
    if (outcome == null) {
      throw new NullPointerException("outcome");
    }
    int tier = (int) (entry & ENTRY_TIER_MASK);
    int stripe = counters.stripe();
    counters.released(stripe, tier, outcome);
    if ((entry & ENTRY_SAMPLED) != 0 && outcome == Outcome.SUCCESS) {
      // Both times are the clock's low 59 bits: their difference is right modulo 2^59 ns.
      long start = entry >>> ENTRY_TIME_SHIFT;
      counters.latency(stripe, ((clock.nanoTime() & ENTRY_TIME_MASK) - start) & ENTRY_TIME_MASK);
    }
    releasePermit();
  }

  private static void checkEntry(long entry) {
    if (entry == NOT_ADMITTED) {
      throw new IllegalArgumentException(
          "entry is NOT_ADMITTED: tryEnter admitted nothing, so there is nothing to exit");
    }
    boolean valid = entry >= 0
        && (entry & ENTRY_TIER_MASK) < Priority.TIERS
        && ((entry & ENTRY_SAMPLED) != 0 || entry >>> ENTRY_TIME_SHIFT == 0);
    if (!valid) {
      throw new IllegalArgumentException(
          "entry must be a value returned by tryEnter, was " + entry);
    }
  }

  // ------------------------------------------------------------------------------ answers

  private void reject(Request r, RejectReason reason) {
    r.rejectReason = reason;
    r.state = Request.REJECTED;
    counters.rejected(reason, Priority.tier(r.priority));
    AdmissionCallback cb = r.callback;
    if (cb == null) {
      r.wake();
    } else {
      tellRejected(cb, reason);
    }
  }

  /** A callback's own failure is logged, not thrown into whichever thread answered it. */
  private static void tellRejected(AdmissionCallback cb, RejectReason reason) {
    try {
      cb.onRejected(reason);
    } catch (Throwable t) {
      LOG.log(Level.WARNING, "AdmissionCallback.onRejected threw", t);
    }
  }

  private void deliverAdmitted(Request r) {
    AdmissionCallback cb = r.callback;
    if (cb == null) {
      r.wake();
      return;
    }
    try {
      cb.onAdmitted(r);
    } catch (Throwable t) {
      LOG.log(Level.WARNING, "AdmissionCallback.onAdmitted threw; releasing its permit", t);
      r.release(Outcome.ERROR);
    }
  }

  private static void cancelTimeout(Request r) {
    Timer.Timeout t = r.timeout;
    if (t != null) {
      t.cancel();
    }
  }

  // ----------------------------------------------------------------------- knobs and state

  // What the control tick decided; each takes effect on the next admission.
  void setCutoff(int cutoff) { this.cutoff = cutoff; }

  void setQueueBound(int queueBound) { this.queueBound = queueBound; }

  void setShortQueue(int shortQueue) { this.shortQueue = shortQueue; }

  void setSampleMask(long sampleMask) { this.sampleMask = sampleMask; }

  int cutoff() { return cutoff; }

  int queued() { return queue.size(); }

  /** Whether the queue was empty at some moment since the last call, or is now. */
  boolean takeQueueEmptied() {
    return queue.takeEmptied();
  }

  boolean isClosed() { return closed; }

  /** Stops admitting: every later arrival is rejected as {@link RejectReason#SHUTTING_DOWN}. */
  void close() { closed = true; }

  /** Rejects everything queued as {@link RejectReason#SHUTTING_DOWN}; after {@link #close()}. */
  void rejectQueued() {
    Request r;
    while ((r = queue.poll()) != null) {
      cancelTimeout(r);
      reject(r, RejectReason.SHUTTING_DOWN);
    }
  }
}
