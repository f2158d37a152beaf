package dev.weir;

import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import dev.weir.internal.BucketQueue;
import dev.weir.internal.Check;
import dev.weir.internal.Credits;
import dev.weir.internal.LatencyHistogram;
import dev.weir.internal.StripedCounters;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Admits requests by priority under an adaptive inflight limit, queues the rest, and sheds the
 * least important traffic when overloaded. One shedder guards one endpoint (or one service).
 *
 * <h2>Life of a request</h2>
 * <ol>
 *   <li>{@link #submit} with a packed {@link Priority}. If nothing is queued and fewer than {@code
 *       limit} permits are held, the request is admitted at once, whatever its priority: no lock,
 *       no allocation beyond the request itself, and, while the limit is far from used, no write
 *       to a cache line that other threads write (the permits are {@linkplain Credits credits},
 *       cached per thread stripe). {@link #tryEnter} and {@link
 *       #exit} are this path without the request object, for callers that release exactly once.
 *       The cutoff sheds only what would wait: turning away a request that a free permit could
 *       run at once would idle the permit and spare no one a wait.
 *   <li>Otherwise, if the {@link Rejector}'s cutoff excludes the priority, the request is
 *       rejected at once as {@link RejectReason#SHED}; behind a non-empty queue, the usual case
 *       under overload, without allocating anything. Except while the queue is short (see
 *       {@link #SHORT_QUEUE_LIMITS}): then a request of the tier the cut falls in waits whatever
 *       its cohort, so that the queue does not run dry.
 *   <li>Otherwise it waits in a bucketed priority queue, at most its queue timeout. When a permit
 *       is released, the releasing thread admits the next waiting request: from the most important
 *       tier that has one, the one that arrived first (cohorts decide who is shed, not who waits
 *       longest). There is no dispatcher thread. A full queue evicts its least important request
 *       to make room for a more important one; while overloaded, the queue is full at a limit and a
 *       half's worth of requests, or two limits' worth while the cut spares the most important
 *       tier arriving (see {@link #queueBoundFor}).
 *   <li>The admitted request runs and {@linkplain Permit#release releases} its permit with its
 *       outcome; the latency is the {@link Limit}'s sample.
 * </ol>
 *
 * <h2>Guarantees</h2>
 * Every submitted request's callback hears exactly once. A permit is counted exactly once however
 * often it is released. All methods are thread-safe and none blocks except {@link #acquire}.
 *
 * <h2>Control</h2>
 * Every {@code controlInterval}, on the timer, the shedder hands what it observed to its
 * {@link Limit} and {@link Rejector} and applies their answers. All time comes from the
 * {@link Timer}'s clock, so a shedder built on {@link VirtualTime} is fully
 * deterministic.
 */
public final class LoadShedder implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(LoadShedder.class.getName());

  // Slots of the striped counters: arrivals per level, then per-tier counters, then the rest.
  private static final int COUNTERS = Snapshot.Counter.values().length;
  private static final int TIER_BASE = Priority.LEVELS;
  private static final int WAIT_BASE = TIER_BASE + COUNTERS * Priority.TIERS;
  private static final int ENQUEUED = WAIT_BASE + Priority.TIERS;
  private static final int DEQUEUED = ENQUEUED + 1;
  private static final int LATENCY_SUM = DEQUEUED + 1;
  private static final int LATENCY_BASE = LATENCY_SUM + 1;
  private static final int SLOTS = LATENCY_BASE + LatencyHistogram.BUCKETS;

  private static final int ADMITTED_SLOT = TIER_BASE + Snapshot.Counter.ADMITTED.ordinal() * Priority.TIERS;

  private static final long MAX_TIMEOUT_NANOS = Long.MAX_VALUE / 4;
  /**
   * While overloaded with the cut inside the most important tier arriving, the queue holds at most
   * this many limits' worth of requests: in arrival order within a tier, that bounds the wait of
   * that tier's admitted requests to about this many service times. On the overload experiment's
   * service at 3x (S10), two limits left its P99 at 96 ms against a bound of 107; this, with the
   * rejector aiming a quarter of a limit lower to match, at 86.
   */
  static final double OVERLOAD_QUEUE_LIMITS = 1.5;
  /**
   * While overloaded with the cut sparing the most important tier arriving, the queue holds at
   * most this many limits' worth. That tier goes ahead of everything queued, so what waits is
   * less important work, kept as a buffer against arrival noise. A longer buffer kept the
   * overload experiment's downstream busier at 1.5x (at four limits a connection idled with
   * nothing waiting 0.2-0.3% of the time instead of 1.3%), but three limits already doubled S4's
   * late answers, to 2.1%: what a longer queue holds of the least important admitted tier times
   * out instead of being shed at the door.
   */
  static final double SPARING_QUEUE_LIMITS = 2;
  /**
   * While the queue holds less than this many limits' worth (rounded up), a request of the tier
   * the cut falls in is queued whatever its cohort, unless requests have recently timed out in
   * the queue. The cutoff is set from averages, and within a tick Poisson arrivals can drain the
   * queue: a permit then idles until the next request above the cut arrives. Topping the queue up
   * from the cut's own tier takes nothing from a more important tier, which goes ahead of it,
   * and blurs the cut only across that tier's cohorts. On the overload experiment's service at
   * 1.5x (cut inside tier 5), a connection idled with nothing waiting 0.15% of the time behind a
   * dry queue, and 0.02% with this, over twelve seeds. Not while requests time out in the queue:
   * there every request queued ahead pushes the most important tier's tail past its timeout
   * (with the rule always on, S7 at 50 RPS's tier 1 fell from 99.53% to 99.01% on its seed).
   */
  static final double SHORT_QUEUE_LIMITS = 0.25;
  /** How much of the recent queue-timeout count survives each tick. */
  private static final double QUEUE_TIMEOUT_MEMORY = 0.9;
  /** The share of recent arrivals from which a tier counts as arriving. */
  private static final double ARRIVING_TIER_SHARE = 0.01;
  /** How much of the recent per-tier arrivals survives each tick. */
  private static final double TIER_ARRIVALS_DECAY = 0.9;

  /** What {@link #tryEnter} returns when it did not admit: go to {@link #submit} or {@link
   * #acquire}. Negative, as no entry is. */
  public static final long NOT_ADMITTED = -1L;

  // An entry from tryEnter: bits 0-2 the tier; bit 3 set if the admission is a latency sample;
  // bits 4-62 the clock's low 59 bits at admission if it is (zero if not); bit 63 clear.
  private static final long ENTRY_TIER_MASK = 0b111;
  private static final long ENTRY_SAMPLED = 0b1000;
  private static final int ENTRY_TIME_SHIFT = 4;
  private static final long ENTRY_TIME_MASK = (1L << 59) - 1;
  /** Latency samples wanted per control interval; see {@link #sampleMaskFor}. */
  static final long SAMPLES_PER_INTERVAL = 256;

  final String name;
  final Timer timer;
  final Clock clock;
  private final long requestTimeoutNanos;
  private final long queueTimeoutNanos;
  private final double queueTimeoutFraction;
  private final int queueCapacity;
  private final long controlIntervalNanos;
  private final Limit limitController;
  private final Rejector rejector;

  /** Tiers are served strictly in order; within a tier, cohorts wait their turn in arrival order. */
  private final BucketQueue<Request> queue = new BucketQueue<>(Priority.LEVELS, Priority.COHORTS);
  private final StripedCounters counters = new StripedCounters(SLOTS);
  /** The permits: the limit, the free credits, and the peak held; see {@link Credits}. */
  private final Credits credits;
  private final ThreadLocal<boolean[]> dispatching = ThreadLocal.withInitial(() -> new boolean[1]);

  private volatile int cutoff = Priority.LEVELS;
  /** How many requests may wait now; set by the tick, see {@link #queueBoundFor}. */
  private volatile int queueBound;
  /** Below this queue length the cut's own tier is queued; set by the tick, see {@link
   * #SHORT_QUEUE_LIMITS}. */
  private volatile int shortQueue;
  /** Fast-path admissions read the clock once every {@code sampleMask + 1}; set by the tick. */
  private volatile long sampleMask;
  private volatile boolean closed;

  // Control state: touched only by the tick, which never overlaps itself.
  private final ControlWindow window = new ControlWindow();
  private final long[] lastTotals = new long[SLOTS];
  private final double[] recentTierArrivals = new double[Priority.TIERS];
  private boolean cutSparesTopTier;
  private double recentQueueTimeouts;
  private boolean overloaded;
  private long overloadedSinceNanos;
  private final Runnable tickTask = this::tick;
  private long lastTickNanos;
  private volatile Timer.Timeout tickTimeout;

  private LoadShedder(Builder b) {
    this.name = b.name;
    this.timer = b.timer != null ? b.timer : Timer.system();
    this.clock = timer.clock();
    this.requestTimeoutNanos = b.requestTimeout.toNanos();
    this.queueTimeoutNanos = Builder.queueTimeoutNanos(b);
    this.queueTimeoutFraction = (double) queueTimeoutNanos / requestTimeoutNanos;
    this.queueCapacity = b.queueCapacity;
    this.controlIntervalNanos = b.controlInterval.toNanos();
    this.limitController = Builder.limitOf(b);
    this.rejector = Builder.rejectorOf(b);
    this.credits = new Credits(limitController.initialLimit());
    this.queueBound = queueCapacity;
    this.window.requestTimeoutNanos = requestTimeoutNanos;
    this.window.queueTimeoutNanos = queueTimeoutNanos;
    this.lastTickNanos = clock.nanoTime();
    this.tickTimeout = timer.schedule(tickTask, lastTickNanos + controlIntervalNanos);
  }

  /** A builder whose every setting has a working default: {@code builder().build()} is enough. */
  public static Builder builder() {
    return new Builder();
  }

  // ------------------------------------------------------------------------------------ admission

  /**
   * Submits a request with the shedder's default request timeout. {@code callback} hears exactly
   * once, possibly before this method returns.
   *
   * @param priority a packed {@link Priority}
   * @throws IllegalArgumentException if {@code priority} is not a valid packed priority
   */
  public Ticket submit(int priority, AdmissionCallback callback) {
    return submit(priority, requestTimeoutNanos, callback);
  }

  /**
   * Submits a request with its own request timeout: its processing deadline is {@code
   * timeoutNanos} from now, and it may wait in the queue the same fraction of that as the
   * shedder's queue timeout is of its request timeout (a third, by default).
   *
   * @throws IllegalArgumentException if {@code priority} is invalid or {@code timeoutNanos <= 0}
   */
  public Ticket submit(int priority, long timeoutNanos, AdmissionCallback callback) {
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

  /**
   * Blocks until the request is admitted or rejected, at most the queue timeout, using the
   * default request timeout.
   *
   * @throws RejectedException if the request was not admitted
   * @throws InterruptedException if interrupted while queued; the request is withdrawn
   */
  public Permit acquire(int priority) throws RejectedException, InterruptedException {
    return acquire(priority, requestTimeoutNanos, TimeUnit.NANOSECONDS);
  }

  /**
   * Blocks until the request is admitted or rejected, for a request whose timeout is {@code
   * timeout}: it waits at most its queue timeout, the configured fraction of {@code timeout}.
   *
   * <p>Interruption, as with the JDK's interruptible locks, wins over whatever the wait would have
   * returned: a request interrupted while queued is withdrawn; one admitted in the same instant
   * has its permit released as {@link Outcome#DROPPED}; either way nothing is held afterwards.
   *
   * @throws RejectedException if the request was not admitted
   * @throws InterruptedException if interrupted while waiting; nothing is held
   */
  public Permit acquire(int priority, long timeout, TimeUnit unit)
      throws RejectedException, InterruptedException {
    Request r = newRequest(priority, unit.toNanos(timeout), null, Thread.currentThread());
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

  /**
   * Admits a request at once if it would take the fast path, and allocates nothing: the primitive
   * form of {@link #acquire}, for a caller that releases exactly once by construction, as a
   * synchronous servlet filter does with {@code try}/{@code finally}.
   *
   * <p>It admits if the shedder is open, nothing is queued and a permit is free, whatever the
   * cutoff (which sheds only what would wait), and then counts what an immediate admission by
   * {@link #submit} counts: an arrival at the priority's level, {@link Snapshot.Counter#ADMITTED}
   * for its tier, and a latency sample when it is this admission's turn. It returns an
   * <em>entry</em>, a non-negative token that holds what {@link #exit} needs: the tier, and the
   * admission time if sampled. Otherwise it returns {@link #NOT_ADMITTED} and counts nothing, not
   * even the arrival: the caller then goes to {@link #submit} or {@link #acquire}, which queue,
   * shed or reject the request and count it. Under overload such a caller pays one failed attempt
   * more.
   *
   * <p>The contract is a {@link java.util.concurrent.Semaphore}'s:
   * <ul>
   *   <li>Call {@link #exit} exactly once for each entry, from any thread, when the request is
   *       done. Nothing checks this, as there is no permit object to mark released. An entry never
   *       exited holds its permit for good. An entry exited twice gives back a permit that another
   *       request holds: from then on the shedder admits one more request at once than its limit,
   *       and {@link #inflight()} is one too low, for good.
   *   <li>Entries are plain values: any entry of this shedder may be exited, by any thread, and an
   *       entry of another shedder corrupts this one's count as a second exit does.
   *   <li>Nothing watches the deadline: there is no {@link Permit#onDeadline} hook, and a late
   *       exit does not count {@link Snapshot.Counter#DEADLINE_MISSED}.
   * </ul>
   *
   * @param priority a packed {@link Priority}
   * @return a non-negative entry for {@link #exit}, or {@link #NOT_ADMITTED}
   * @throws IllegalArgumentException if {@code priority} is not a valid packed priority
   */
  public long tryEnter(int priority) {
    Priority.check(priority);
    if (closed || queue.size() != 0 || !tryAcquirePermit()) {
      return NOT_ADMITTED;
    }
    int stripe = counters.stripe();
    int tier = Priority.tier(priority);
    counters.add(stripe, priority, 1);
    if (countImmediateAdmission(stripe, tier)) {
      return ENTRY_SAMPLED | tier | (clock.nanoTime() & ENTRY_TIME_MASK) << ENTRY_TIME_SHIFT;
    }
    return tier;
  }

  /**
   * Ends a request that {@link #tryEnter} admitted: counts its outcome for its tier and, if it
   * succeeded and was sampled, its latency, as {@link Permit#release} does; then gives its permit
   * back and admits whoever waits for it. Call it exactly once per entry (see {@link #tryEnter}):
   * a second call is not detected and breaks the limit.
   *
   * @param entry what {@link #tryEnter} returned
   * @throws IllegalArgumentException if {@code entry} is {@link #NOT_ADMITTED} (nothing was
   *     admitted) or any other value that {@link #tryEnter} never returns
   * @throws NullPointerException if {@code outcome} is null
   */
  public void exit(long entry, Outcome outcome) {
    checkEntry(entry);
    if (outcome == null) {
      throw new NullPointerException("outcome");
    }
    int tier = (int) (entry & ENTRY_TIER_MASK);
    int stripe = counters.stripe();
    countOutcome(stripe, tier, outcome);
    if ((entry & ENTRY_SAMPLED) != 0 && outcome == Outcome.SUCCESS) {
      // Both times are the clock's low 59 bits: their difference is right modulo 2^59 ns.
      long start = entry >>> ENTRY_TIME_SHIFT;
      countLatency(stripe, ((clock.nanoTime() & ENTRY_TIME_MASK) - start) & ENTRY_TIME_MASK);
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

  private static void checkArguments(int priority, long timeoutNanos) {
    Priority.check(priority);
    if (timeoutNanos <= 0) {
      throw new IllegalArgumentException("timeout must be positive, was " + timeoutNanos + "ns");
    }
  }

  /** Counts and answers what admit() counts and answers for a shed request. */
  private Ticket shedAtTheDoor(int priority, AdmissionCallback cb) {
    int stripe = counters.stripe();
    counters.add(stripe, priority, 1);
    counters.add(stripe, counterSlot(Snapshot.Counter.SHED, Priority.tier(priority)), 1);
    tellRejected(cb, RejectReason.SHED);
    return ShedTicket.of(priority);
  }

  private Request newRequest(int priority, long timeoutNanos, AdmissionCallback cb, Thread w) {
    checkArguments(priority, timeoutNanos);
    long queueTimeout = timeoutNanos == requestTimeoutNanos
        ? queueTimeoutNanos
        : (long) (timeoutNanos * queueTimeoutFraction);
    // A timeout of "forever" (Long.MAX_VALUE) would wrap now + timeout into the past, and a timer
    // would run it at once. Some 73 years is forever enough.
    return new Request(this, priority, Math.min(timeoutNanos, MAX_TIMEOUT_NANOS),
        Math.min(queueTimeout, MAX_TIMEOUT_NANOS), cb, w);
  }

  private void admit(Request r) {
    int level = r.priority;
    int cut = cutoff;
    int stripe = counters.stripe();
    counters.add(stripe, level, 1);
    if (closed) {
      reject(r, RejectReason.SHUTTING_DOWN);
    } else if (queue.size() == 0 && tryAcquirePermit()) {
      if (countImmediateAdmission(stripe, Priority.tier(level))) {
        r.timeAt(clock.nanoTime());
      }
      r.state = Request.ADMITTED;
      deliverAdmitted(r);
    } else if (level >= cut && !fillsShortQueue(level, cut, queue.size())) {
      reject(r, RejectReason.SHED);
    } else {
      r.timeAt(clock.nanoTime());
      enqueue(r);
    }
  }

  /** Whether a request cut off at {@code level} waits anyway: see {@link #SHORT_QUEUE_LIMITS}. */
  private boolean fillsShortQueue(int level, int cut, int queued) {
    return queued < shortQueue && Priority.tier(level) == Priority.tier(cut);
  }

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
    counters.increment(ENQUEUED);
    queue.offer(r);
    if (victim != null) {
      // Only now, with the victim's place filled: its callback may release a permit, and the
      // dispatch that follows would spin on a reserved but empty place that only we can fill.
      reject(victim, RejectReason.QUEUE_FULL);
    }
    if (closed && r.cas(Request.QUEUED, Request.REJECTED)) {
      leftQueue(r, RejectReason.SHUTTING_DOWN);
      return;
    }
    dispatch();
  }

  /**
   * The configured capacity, or, while the rejector judges the shedder overloaded, {@value
   * #OVERLOAD_QUEUE_LIMITS} limits' worth if that is less ({@value #SPARING_QUEUE_LIMITS} while
   * the cut spares the most important tier arriving). The rejector's cutoff is set from averages
   * and trails every surge by a tick or two; a queue that then grows past what the permits drain
   * in a couple of service times only makes every admitted request wait. Evicting its least
   * important request instead sheds what the cutoff would have, a moment late but still in
   * milliseconds, and keeps the most important traffic's wait bounded. Computed by the tick,
   * which alone may call the rejector, and read by every enqueue.
   */
  private int queueBoundFor(boolean overloaded, int limit) {
    if (!overloaded) {
      return queueCapacity;
    }
    double limits = cutSparesTopTier ? SPARING_QUEUE_LIMITS : OVERLOAD_QUEUE_LIMITS;
    long cap = Math.max(2L, (long) (limits * limit));
    return (int) Math.min(queueCapacity, cap);
  }

  /**
   * Whether {@code cut} sheds only tiers less important than the most important one arriving:
   * then none of that tier waits behind what the queue holds. A tier counts as arriving from
   * {@value #ARRIVING_TIER_SHARE} of recent traffic, a share, so the answer is the same at 50 and
   * at 50,000 RPS, and a stray request of a more important tier does not change it.
   */
  private boolean sparesTopTier(int cut) {
    double total = 0;
    for (double v : recentTierArrivals) {
      total += v;
    }
    if (cut >= Priority.LEVELS || total <= 0) {
      return false;
    }
    for (int tier = 0; tier < Priority.tier(cut); tier++) {
      if (recentTierArrivals[tier] >= ARRIVING_TIER_SHARE * total) {
        return true;
      }
    }
    return false;
  }

  /**
   * Evicts the least important waiting requests until the queue is within its bound. Enqueues
   * keep the bound one eviction at a time, but a lowered bound (overload just detected, after a
   * cold start's backlog) would otherwise stand over it until the backlog drained: every request
   * admitted meanwhile waits behind work the bound says should have been shed.
   */
  private void trimToBound() {
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

  /**
   * Admits waiting requests while permits are free. Called by whoever may have freed one. A
   * callback that releases a permit re-enters here on the same thread; that inner call returns at
   * once and the outer loop carries on, so the stack stays flat however many requests it admits.
   */
  private void dispatch() {
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
        // A place is reserved but its request not yet offered; its offerer dispatches after the
        // offer. Give the permit back to the pool, where that dispatch looks first, and look
        // again, in case our permit blocked that dispatch.
        credits.release(false);
        Thread.onSpinWait();
        continue;
      }
      cancelTimeout(r);
      long now = clock.nanoTime();
      r.admittedNanos = now;
      r.state = Request.ADMITTED;
      int tier = Priority.tier(r.priority);
      int stripe = counters.stripe();
      counters.add(stripe, ADMITTED_SLOT + tier, 1);
      counters.add(stripe, DEQUEUED, 1);
      counters.add(stripe, WAIT_BASE + tier, now - r.arrivalNanos);
      deliverAdmitted(r);
    }
  }

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

  /**
   * Counts an admission that did not wait, and says whether the controllers sample its latency.
   * They need a few hundred samples an interval, not one per request: only every
   * (sampleMask + 1)-th immediate admission of a stripe and tier reads the clock.
   */
  private boolean countImmediateAdmission(int stripe, int tier) {
    long admitted = counters.getAndAdd(stripe, ADMITTED_SLOT + tier, 1);
    return (admitted & sampleMask) == 0;
  }

  private void countOutcome(int stripe, int tier, Outcome outcome) {
    counters.add(stripe, counterSlot(Snapshot.Counter.of(outcome), tier), 1);
  }

  /** Counts a latency sample: the time from admission to a successful release. */
  private void countLatency(int stripe, long latency) {
    counters.add(stripe, LATENCY_BASE + LatencyHistogram.bucketOf(latency), 1);
    counters.add(stripe, LATENCY_SUM, latency);
  }

  private static void cancelTimeout(Request r) {
    Timer.Timeout t = r.timeout;
    if (t != null) {
      t.cancel();
    }
  }

  // ------------------------------------------------------------------- callbacks from requests

  /** A queued request was taken out by its timer, a cancel or shutdown (it won the CAS). */
  void leftQueue(Request r, RejectReason reason) {
    queue.removed(r.priority);
    if (reason != RejectReason.QUEUE_TIMEOUT) {
      cancelTimeout(r);
    }
    reject(r, reason);
  }

  void released(Request r, Outcome outcome) {
    int tier = Priority.tier(r.priority);
    int stripe = counters.stripe();
    countOutcome(stripe, tier, outcome);
    // Only a request with times (sampled, queued, or watched for its deadline) costs clock reads.
    if (r.timed) {
      long now = clock.nanoTime();
      if (outcome == Outcome.SUCCESS) {
        countLatency(stripe, now - r.admittedNanos);
      }
      // The deadline hook may be firing right now on the timer: whoever claims counts the overrun.
      if (now - r.deadlineNanos() > 0 && r.claimOverrun()) {
        counters.add(stripe, counterSlot(Snapshot.Counter.DEADLINE_MISSED, tier), 1);
      }
    }
    releasePermit();
  }

  void deadlinePassed(Request r) {
    counters.increment(counterSlot(Snapshot.Counter.DEADLINE_MISSED, Priority.tier(r.priority)));
  }

  private void reject(Request r, RejectReason reason) {
    r.rejectReason = reason;
    r.state = Request.REJECTED;
    counters.increment(counterSlot(Snapshot.Counter.of(reason), Priority.tier(r.priority)));
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

  private static int counterSlot(Snapshot.Counter c, int tier) {
    return TIER_BASE + c.ordinal() * Priority.TIERS + tier;
  }

  // -------------------------------------------------------------------------------------- control

  private void tick() {
    if (closed) {
      return;
    }
    try {
      long now = clock.nanoTime();
      fillWindow(now);
      int newLimit = limitController.update(window);
      int max = limitController.maxLimit();
      credits.setLimit(Math.max(1, Math.min(max, newLimit)));
      int newCutoff = rejector.update(window);
      cutoff = Math.max(0, Math.min(Priority.LEVELS, newCutoff));
      cutSparesTopTier = sparesTopTier(cutoff);
      queueBound = queueBoundFor(rejector.overloaded(), credits.limit());
      trackQueueTimeouts(now, rejector.overloaded());
      shortQueue = recentQueueTimeouts >= 1 ? 0
          : (int) Math.ceil(SHORT_QUEUE_LIMITS * credits.limit());
      trimToBound();
      sampleMask = sampleMaskFor(window.admitted);
      lastTickNanos = now;
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "load shedder '" + name + "': control tick failed", e);
    } finally {
      if (!closed) {
        tickTimeout = timer.schedule(tickTask, clock.nanoTime() + controlIntervalNanos);
      }
    }
    // A raised limit, and the drain, free credits that nobody's release would hand out.
    dispatch();
  }

  /**
   * Remembers the queue timeouts of the steady overload, not those of the backlog that built up
   * before it was detected: for one queue timeout after detection, every request that times out
   * had arrived before it (a cold start's queue, cleared by then), and says nothing about the
   * queue the shedder now keeps.
   */
  private void trackQueueTimeouts(long now, boolean overloadedNow) {
    if (overloadedNow && !overloaded) {
      overloadedSinceNanos = now;
    }
    overloaded = overloadedNow;
    boolean backlog = !overloadedNow || now - overloadedSinceNanos < queueTimeoutNanos;
    recentQueueTimeouts = recentQueueTimeouts * QUEUE_TIMEOUT_MEMORY
        + (backlog ? 0 : window.queueTimeouts);
  }

  /**
   * Sample one fast-path admission in 2^k, with the largest k that still leaves about {@value
   * #SAMPLES_PER_INTERVAL} samples an interval at the last interval's rate: all of them at low
   * rates, one in 4 at 20,000 per second (2,000 an interval).
   */
  static long sampleMaskFor(long admittedLastInterval) {
    long ratio = admittedLastInterval / SAMPLES_PER_INTERVAL;
    return ratio < 2 ? 0 : Long.highestOneBit(ratio) - 1;
  }

  private void fillWindow(long now) {
    ControlWindow w = window;
    w.nowNanos = now;
    w.intervalNanos = now - lastTickNanos;
    long arrivals = 0;
    for (int tier = 0; tier < Priority.TIERS; tier++) {
      long tierArrivals = 0;
      for (int level = tier * Priority.COHORTS; level < (tier + 1) * Priority.COHORTS; level++) {
        long d = delta(level);
        w.levelArrivals[level] = d;
        tierArrivals += d;
      }
      recentTierArrivals[tier] = recentTierArrivals[tier] * TIER_ARRIVALS_DECAY + tierArrivals;
      arrivals += tierArrivals;
    }
    w.arrivals = arrivals;
    w.shed = tierDelta(Snapshot.Counter.SHED);
    w.queueFull = tierDelta(Snapshot.Counter.QUEUE_FULL);
    w.queueTimeouts = tierDelta(Snapshot.Counter.QUEUE_TIMEOUT);
    w.admitted = tierDelta(Snapshot.Counter.ADMITTED);
    w.successes = tierDelta(Snapshot.Counter.SUCCEEDED);
    w.errors = tierDelta(Snapshot.Counter.FAILED);
    w.drops = tierDelta(Snapshot.Counter.DROPPED);
    w.enqueued = delta(ENQUEUED);
    w.dequeued = delta(DEQUEUED);
    w.latencies.clear();
    for (int b = 0; b < LatencyHistogram.BUCKETS; b++) {
      long d = delta(LATENCY_BASE + b);
      if (d != 0) {
        w.latencies.add(b, d);
      }
    }
    w.latencies.addSum(delta(LATENCY_SUM));
    w.queueLength = queue.size();
    // Credits cached by stripes go back to the pool once an interval, so the peak of the next
    // starts from the permits really held (see Credits); the tick's dispatch() hands them out.
    credits.drain();
    w.inflight = credits.held();
    w.peakInflight = credits.takePeak(w.inflight);
    w.limit = credits.limit();
    w.overloadQueueBound = queueBoundFor(true, w.limit);
    w.cutSparesTopTier = cutSparesTopTier;
    w.queueEmptied = queue.takeEmptied();
  }

  private long delta(int slot) {
    long total = counters.sum(slot);
    long d = total - lastTotals[slot];
    lastTotals[slot] = total;
    return d;
  }

  private long tierDelta(Snapshot.Counter c) {
    long sum = 0;
    for (int t = 0; t < Priority.TIERS; t++) {
      sum += delta(counterSlot(c, t));
    }
    return sum;
  }

  // -------------------------------------------------------------------------------- observation

  /** The shedder's current state and counters. Cheap enough to call on every scrape. */
  public Snapshot snapshot() {
    long[][] c = new long[COUNTERS][Priority.TIERS];
    for (int k = 0; k < COUNTERS; k++) {
      for (int t = 0; t < Priority.TIERS; t++) {
        c[k][t] = counters.sum(TIER_BASE + k * Priority.TIERS + t);
      }
    }
    return new Snapshot(name, credits.limit(), credits.held(), queue.size(), rejector.ratio(),
        cutoff, rejector.overloaded(), c);
  }

  /** The shedder's name, used in metrics and logs. */
  public String name() { return name; }

  /** The current inflight limit. */
  public int limit() { return credits.limit(); }

  /**
   * Permits currently held. Exact when no permit is being taken or given back at the moment of
   * the call; otherwise a moment's estimate, never negative, that may be off by the permits moving
   * meanwhile.
   */
  public int inflight() { return credits.held(); }

  /** The permits' credits, for tests. */
  Credits credits() { return credits; }

  /** Requests currently waiting. */
  public int queued() { return queue.size(); }

  /** The current priority cutoff; {@link Priority#LEVELS} when nothing is shed. */
  public int cutoff() { return cutoff; }

  /** The rejector's current ratio. */
  public double rejectionRatio() { return rejector.ratio(); }

  /** Whether the rejector judges the shedder overloaded. */
  public boolean overloaded() { return rejector.overloaded(); }

  /** The largest limit the limit controller may set; sizes worker pools. */
  public int maxLimit() { return limitController.maxLimit(); }

  /** The default request timeout, in nanoseconds. */
  public long requestTimeoutNanos() { return requestTimeoutNanos; }

  /** The default queue timeout, in nanoseconds. */
  public long queueTimeoutNanos() { return queueTimeoutNanos; }

  /** The clock all of this shedder's time comes from. */
  public Clock clock() { return clock; }

  /**
   * A counter's total for one tier; same as {@code snapshot().count(counter, tier)}.
   *
   * @throws IllegalArgumentException if {@code tier} is not in 0..5
   */
  public long count(Snapshot.Counter counter, int tier) {
    return counters.sum(counterSlot(counter, checkTier(tier)));
  }

  /**
   * Total nanoseconds that admitted requests of {@code tier} spent waiting in the queue.
   *
   * @throws IllegalArgumentException if {@code tier} is not in 0..5
   */
  public long totalQueueWaitNanos(int tier) {
    return counters.sum(WAIT_BASE + checkTier(tier));
  }

  // Slots are laid out side by side: an unchecked tier would silently read a neighbour's counter.
  private static int checkTier(int tier) {
    if (tier < 0 || tier >= Priority.TIERS) {
      throw new IllegalArgumentException(
          "tier must be in 0.." + (Priority.TIERS - 1) + ", was " + tier);
    }
    return tier;
  }

  // ------------------------------------------------------------------------------------ shutdown

  /**
   * Stops admitting: every queued request, and every later submission, is answered {@link
   * RejectReason#SHUTTING_DOWN}. Permits already held stay valid and may still be released.
   * Idempotent.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    Timer.Timeout t = tickTimeout;
    if (t != null) {
      t.cancel();
    }
    Request r;
    while ((r = queue.poll()) != null) {
      cancelTimeout(r);
      reject(r, RejectReason.SHUTTING_DOWN);
    }
  }

  /** Whether {@link #close()} was called. */
  public boolean isClosed() {
    return closed;
  }

  @Override
  public String toString() {
    return "LoadShedder{" + name + ", limit=" + limit() + ", inflight=" + inflight()
        + ", queued=" + queue.size() + ", cutoff=" + cutoff + "}";
  }

  /**
   * Settings for a {@link LoadShedder}. Every setting has a default; an invalid value throws
   * {@link IllegalArgumentException} naming the setting, from the setter, or from {@link
   * #validate()} for settings that are checked together.
   *
   * <p>A builder is also a template: {@link #build()} may be called any number of times, and each
   * shedder gets its own limit controller and rejector from the factories. Adapters take one to
   * make a shedder per route, after {@link #copy() copying} and {@link #validate() validating}
   * it at configuration time. Not thread-safe.
   */
  public static final class Builder {
    /** Default request timeout, 3 s. */
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(3);
    /** Default queue capacity, 4096 requests. */
    public static final int DEFAULT_QUEUE_CAPACITY = 4096;
    /** Default control interval, 100 ms. */
    public static final Duration DEFAULT_CONTROL_INTERVAL = Duration.ofMillis(100);

    private String name = "default";
    private Timer timer;
    private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
    private Duration queueTimeout;
    private int queueCapacity = DEFAULT_QUEUE_CAPACITY;
    private Duration controlInterval = DEFAULT_CONTROL_INTERVAL;
    private Supplier<? extends Limit> limit = Limits::adaptive;
    private Supplier<? extends Rejector> rejector = Rejectors::adaptive;

    private Builder() {}

    /** An independent builder with the same settings. */
    public Builder copy() {
      Builder b = new Builder();
      b.name = name;
      b.timer = timer;
      b.requestTimeout = requestTimeout;
      b.queueTimeout = queueTimeout;
      b.queueCapacity = queueCapacity;
      b.controlInterval = controlInterval;
      b.limit = limit;
      b.rejector = rejector;
      return b;
    }

    /** The name in metrics and logs. Default {@code "default"}. */
    public Builder name(String name) {
      this.name = Check.notBlank("name", name);
      return this;
    }

    /**
     * The timer, and through it the clock, for all of the shedder's time. Default {@link
     * Timer#system()}; use {@link VirtualTime} for virtual time.
     */
    public Builder timer(Timer timer) {
      this.timer = Check.notNull("timer", timer);
      return this;
    }

    /**
     * The default request timeout: a request's processing deadline is this long after its
     * arrival. Default 3 s. Must be positive.
     */
    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = Check.positive("requestTimeout", requestTimeout);
      return this;
    }

    /**
     * How long a request may wait in the queue. Default a third of the request timeout, as in
     * Cinnamon: a request that waited longer has too little time left to be worth running. Must be
     * positive and at most the request timeout.
     */
    public Builder queueTimeout(Duration queueTimeout) {
      this.queueTimeout = Check.positive("queueTimeout", queueTimeout);
      return this;
    }

    /**
     * How many requests may wait. Default 4096; a full queue evicts a less important request for a
     * more important one. Must be at least 1.
     */
    public Builder queueCapacity(int queueCapacity) {
      this.queueCapacity = Check.atLeast("queueCapacity", queueCapacity, 1);
      return this;
    }

    /** How often the limit and the rejector are updated. Default 100 ms. At least 1 ms. */
    public Builder controlInterval(Duration controlInterval) {
      Check.positive("controlInterval", controlInterval);
      if (controlInterval.compareTo(Duration.ofMillis(1)) < 0) {
        throw new IllegalArgumentException("controlInterval must be at least 1ms, was "
            + controlInterval);
      }
      this.controlInterval = controlInterval;
      return this;
    }

    /**
     * Makes the inflight limit controller, once per shedder built (a controller serves one
     * shedder). Default {@link Limits#adaptive()}; {@code () -> Limits.fixed(n)} for a static
     * limit.
     */
    public Builder limit(Supplier<? extends Limit> limit) {
      this.limit = Check.notNull("limit", limit);
      return this;
    }

    /**
     * Makes the rejector, once per shedder built. Default {@link Rejectors#adaptive()}; {@link
     * Rejectors#none()} never sheds at the door.
     */
    public Builder rejector(Supplier<? extends Rejector> rejector) {
      this.rejector = Check.notNull("rejector", rejector);
      return this;
    }

    /**
     * Checks the settings together, as {@link #build()} does, without building: the queue
     * timeout is at most the request timeout, and the factories make a controller whose initial
     * limit is in {@code 1..maxLimit()}. Adapters call it at configuration time, so that no
     * setting they accepted fails on a request.
     *
     * @throws IllegalArgumentException naming the setting
     */
    public Builder validate() {
      limitOf(this);
      rejectorOf(this);
      queueTimeoutNanos(this);
      return this;
    }

    /** Builds a shedder and starts its control ticks. */
    public LoadShedder build() {
      return new LoadShedder(this);
    }

    static long queueTimeoutNanos(Builder b) {
      long request = b.requestTimeout.toNanos();
      long queue = b.queueTimeout != null ? b.queueTimeout.toNanos() : request / 3;
      if (queue > request) {
        throw new IllegalArgumentException("queueTimeout (" + b.queueTimeout
            + ") must not exceed requestTimeout (" + b.requestTimeout + ")");
      }
      return queue;
    }

    static Limit limitOf(Builder b) {
      Limit l = b.limit.get();
      if (l == null) {
        throw new IllegalArgumentException("limit: the factory returned null");
      }
      int initial = l.initialLimit();
      if (initial < 1 || initial > l.maxLimit()) {
        throw new IllegalArgumentException("limit: initialLimit() must be in 1..maxLimit() ("
            + l.maxLimit() + "), was " + initial);
      }
      return l;
    }

    static Rejector rejectorOf(Builder b) {
      Rejector r = b.rejector.get();
      if (r == null) {
        throw new IllegalArgumentException("rejector: the factory returned null");
      }
      return r;
    }
  }
}
