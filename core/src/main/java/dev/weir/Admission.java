package dev.weir;

import dev.weir.internal.BucketQueue;
import dev.weir.internal.Credits;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The admission mechanism of one shedder: it admits, sheds, queues, dispatches and rejects
 * requests, and takes their permits back. It decides nothing about policy: the control tick
 * ({@link ControlLoop}) sets the knobs it reads (the cutoff, the queue's bound, the sampling rate)
 * and the limit of its {@link Credits}.
 *
 * <p>The life of a request, in the order of this file: {@link #submit} (or {@link #acquire})
 * counts the arrival and {@linkplain #admit admits} it at once if a permit is free and nothing
 * waits; else sheds it if the cutoff excludes it; else {@linkplain #enqueue queues} it. Whoever
 * frees a permit {@linkplain #dispatch dispatches} the most important waiting request. The
 * admitted request's {@link Request#release} comes back to {@link #released}, which counts the
 * outcome and gives the permit back. A queued request that times out or is cancelled comes back
 * to {@link #leftQueue}.
 *
 * <p>Lock-free throughout; the fast path (admitted at once, unsampled) allocates only the request,
 * and not even that once its holder {@linkplain Request#recycle recycles} it, and while the limit
 * is far from used writes no cache line another thread writes.
 */
final class Admission {
  private static final Logger LOG = Logger.getLogger(LoadShedder.class.getName());

  /** Some 73 years: a timeout of "forever" must not wrap {@code now + timeout} into the past. */
  private static final long MAX_TIMEOUT_NANOS = Long.MAX_VALUE / 4;

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
  /** Reclaims permits held past their deadline plus a grace. */
  final Watchdog watchdog;
  private final ThreadLocal<boolean[]> dispatching = ThreadLocal.withInitial(() -> new boolean[1]);

  // The knobs, written by the control tick and read by every admission.
  private volatile int cutoff = Priority.LEVELS;
  private volatile int queueBound;
  /**
   * Levels below this may queue up to {@link #sparedBound}, at least {@link #queueBound}. The
   * three are written together by the tick and read apart: a reader that mixes two ticks' values
   * applies a bound one tick old, as any reader racing a tick does.
   */
  private volatile int sparedLevels;
  private volatile int sparedBound;
  /** Immediate admissions read the clock once every {@code sampleMask + 1}. */
  private volatile long sampleMask;
  private volatile boolean closed;

  Admission(Timer timer, long requestTimeoutNanos, long queueTimeoutNanos, int queueCapacity,
      int initialLimit, long watchdogGraceNanos) {
    this.timer = timer;
    this.clock = timer.clock();
    this.watchdog = new Watchdog(this, Math.min(watchdogGraceNanos, MAX_TIMEOUT_NANOS));
    this.requestTimeoutNanos = requestTimeoutNanos;
    this.queueTimeoutNanos = queueTimeoutNanos;
    this.queueTimeoutFraction = (double) queueTimeoutNanos / requestTimeoutNanos;
    this.credits = new Credits(initialLimit);
    this.queueBound = queueCapacity;
    this.sparedBound = queueCapacity;
  }

  // ---------------------------------------------------------------------------- arrival

  /** {@link LoadShedder#submit(int, long, AdmissionCallback)}. */
  Ticket submit(int priority, long timeoutNanos, AdmissionCallback callback) {
    Objects.requireNonNull(callback, "callback");
    if (priority >= cutoff && queue.size() != 0 && !closed) {
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
      int s = r.phase();
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
        while (r.phase() == Request.QUEUED || r.phase() == Request.DEQUEUED) {
          Thread.onSpinWait();
        }
        if (r.phase() == Request.ADMITTED) {
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
    long timeout = Math.min(timeoutNanos, MAX_TIMEOUT_NANOS);
    queueTimeout = Math.min(queueTimeout, MAX_TIMEOUT_NANOS);
    Request r = Request.takeSpare();
    if (r == null) {
      return new Request(this, priority, timeout, queueTimeout, cb, w);
    }
    r.renew(this, priority, timeout, queueTimeout, cb, w);
    return r;
  }

  /**
   * Admits at once if a permit is free and nothing waits, whatever the cutoff (turning away a
   * request a free permit could run would idle the permit and spare no one a wait); else sheds a
   * request the cutoff excludes; else queues it.
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
      watchdog.watch(r);
      r.setPhaseRelease(Request.ADMITTED);
      deliverAdmitted(r);
    } else if (level >= cut) {
      reject(r, RejectReason.SHED);
    } else {
      r.timeAt(clock.nanoTime());
      enqueue(r);
    }
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
   * it where a poll can find it, and the enqueuer then dispatches. Between the two, the size says
   * a request waits that no poll can take yet. A dispatcher that meets such a place does not wait
   * for it: see "The hand-over" below dispatch(). The victim of an eviction is still rejected
   * only after the offer, so that its callback runs with the queue in order.
   */

  private void enqueue(Request r) {
    Request victim = null;
    if (!queue.reserve(r.priority < sparedLevels ? sparedBound : queueBound)) {
      victim = queue.evictLessImportantThan(r.priority);
      if (victim == null) {
        reject(r, RejectReason.QUEUE_FULL);
        return;
      }
      cancelTimeout(victim);
    }
    r.waited = true;
    r.setPhase(Request.QUEUED);
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
   * Evicts the least important waiting requests until the queue is within its bound, and the
   * spared levels within theirs. Enqueues keep the bounds one eviction at a time, but a lowered
   * bound (overload just detected, after a cold start's backlog) would otherwise stand over it
   * until the backlog drained: every request admitted meanwhile waits behind work the bound says
   * should have been shed.
   */
  void trimToBound() {
    int spared = sparedLevels;
    while (queue.size() > queueBound) {
      // Past the bound only the spared levels stay, and only up to their own bound.
      Request victim = queue.evictLessImportantThan(spared - 1);
      if (victim == null) {
        if (queue.size() <= sparedBound) {
          return;
        }
        victim = queue.evictLessImportantThan(-1);
        if (victim == null) {
          return;
        }
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
        // A place counted in the size that no poll finds: reserved and not yet offered, or
        // taken by a timeout or cancel not yet reported. See "The hand-over" below.
        credits.release(false);
        if (!queue.mayHaveOffered()) {
          return;
        }
        continue;
      }
      cancelTimeout(r);
      long now = clock.nanoTime();
      r.admittedNanos = now;
      watchdog.watch(r);
      r.setPhase(Request.ADMITTED);
      counters.admittedFromQueue(counters.stripe(), Priority.tier(r.priority),
          now - r.arrivalNanos);
      deliverAdmitted(r);
    }
  }

  /*
   * The hand-over. A dispatcher that holds a credit and polls null while the size is above zero
   * has met a place no poll can take: reserved and not yet offered (its enqueuer is between
   * reserve and offer, possibly stalled, possibly on this very thread inside a timer's schedule or
   * a callback), or a request a timeout or cancel took that has not yet been reported. It does not
   * wait for that place: it puts its credit into the pool (credits.release(false): the pool, where
   * every look finds it, not its own cache), then reads the queue's bitmap, and leaves if no bit is
   * set. It is the enqueuer's own dispatch, after its offer, that admits the request. No lost
   * wake-up: the enqueuer offers (a CAS into the bucket, then the bit set by an atomic OR), then
   * reads the credits in its dispatch; the dispatcher writes the pool, then reads the bit. These
   * are volatile accesses in one total order, so at least one read sees the other's write: either
   * the dispatcher sees the bit, and loops to take a credit and poll again (only because an offer
   * landed: the poll that returned null cleared the bits of the buckets it found empty, so this
   * is progress, not a spin on a stalled enqueuer), or the enqueuer's look comes after the credit
   * was put down and finds it (or someone took it before, who then dispatches in turn). A place
   * taken by a timeout or cancel needs no credit: its remover decrements the size. An enqueuer
   * already dispatching on its thread returns at once from the inner dispatch(); its outer loop
   * reads the size and the credits again before it stops, which is the same look.
   */

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
    watchdog.forget(r);
    int tier = Priority.tier(r.priority);
    int stripe = counters.stripe();
    counters.released(stripe, tier, outcome);
    // Only a request with times (sampled, queued, or watched for its deadline) costs clock reads.
    if (r.timed) {
      long now = clock.nanoTime();
      if (outcome == Outcome.SUCCESS && !r.deadlineOnly) {
        counters.latency(stripe, now - r.admittedNanos);
      }
      // The deadline hook may be firing right now on the timer: whoever claims counts the overrun.
      if (now - r.deadlineNanos() > 0 && r.claimOverrun()) {
        counters.deadlineMissed(stripe, tier);
      }
    }
    releasePermit();
  }

  /** An admitted request's deadline hook claimed the overrun. */
  void deadlinePassed(Request r) {
    counters.deadlineMissed(Priority.tier(r.priority));
  }

  // ------------------------------------------------------------------------------ answers

  private void reject(Request r, RejectReason reason) {
    r.rejectReason = reason;
    r.setPhase(Request.REJECTED);
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
    int life = r.word(); // the callback may hand the permit on, to be released and recycled
    try {
      cb.onAdmitted(r);
    } catch (Throwable t) {
      LOG.log(Level.WARNING, "AdmissionCallback.onAdmitted threw; releasing its permit", t);
      r.releaseLife(life, Outcome.ERROR);
    }
  }

  static void cancelTimeout(Request r) {
    Timer.Timeout t = r.timeout;
    if (t != null) {
      t.cancel();
    }
  }

  // ----------------------------------------------------------------------- knobs and state

  // What the control tick decided; each takes effect on the next admission.
  void setCutoff(int cutoff) { this.cutoff = cutoff; }

  void setQueueBounds(int queueBound, int sparedLevels, int sparedBound) {
    this.queueBound = queueBound;
    this.sparedLevels = sparedLevels;
    this.sparedBound = sparedBound;
  }


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
