package dev.weir;

import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import dev.weir.internal.BucketQueue;
import dev.weir.internal.LatencyHistogram;
import dev.weir.internal.StripedCounters;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Admits requests by priority under an adaptive inflight limit, queues the rest, and sheds the
 * least important traffic when overloaded. One shedder guards one endpoint (or one service).
 *
 * <h2>Life of a request</h2>
 * <ol>
 *   <li>{@link #submit} with a packed {@link Priority}. If the {@link Rejector}'s cutoff excludes
 *       the priority, the request is rejected at once as {@link RejectReason#SHED}.
 *   <li>If nothing is queued and fewer than {@code limit} permits are held, the request is
 *       admitted at once: one CAS, no lock, and no allocation beyond the request itself.
 *   <li>Otherwise it waits in a bucketed priority queue, at most its queue timeout. When a permit
 *       is released, the releasing thread admits the next waiting request: from the most important
 *       tier that has one, the one that arrived first (cohorts decide who is shed, not who waits
 *       longest). There is no dispatcher thread. A full queue evicts its least important request
 *       to make room for a more important one; while overloaded, the queue is full at two limits'
 *       worth of requests.
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
 * {@link Timer}'s clock, so a shedder built on {@link dev.weir.sim.VirtualTime} is fully
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
   * While overloaded, the queue holds at most this many limits' worth of requests: in arrival
   * order within a tier, that bounds an admitted request's wait to about this many service times.
   */
  static final int OVERLOAD_QUEUE_LIMITS = 2;
  /** Latency samples wanted per control interval; see {@link #sampleMaskFor}. */
  static final long SAMPLES_PER_INTERVAL = 256;

  private static final VarHandle INFLIGHT;

  static {
    try {
      INFLIGHT = MethodHandles.lookup().findVarHandle(LoadShedder.class, "inflight", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

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
  private final ThreadLocal<boolean[]> dispatching = ThreadLocal.withInitial(() -> new boolean[1]);

  private volatile int inflight;
  private volatile int limit;
  private volatile int peakInflight;
  private volatile int cutoff = Priority.LEVELS;
  /** Fast-path admissions read the clock once every {@code sampleMask + 1}; set by the tick. */
  private volatile long sampleMask;
  private volatile boolean closed;

  // Control state: touched only by the tick, which never overlaps itself.
  private final ControlWindow window = new ControlWindow();
  private final long[] lastTotals = new long[SLOTS];
  private final Runnable tickTask = this::tick;
  private long lastTickNanos;
  private volatile Timer.Timeout tickTimeout;

  private LoadShedder(Builder b) {
    this.name = b.name;
    this.timer = b.timer != null ? b.timer : Timer.system();
    this.clock = timer.clock();
    this.requestTimeoutNanos = b.requestTimeout.toNanos();
    this.queueTimeoutNanos =
        b.queueTimeout != null ? b.queueTimeout.toNanos() : requestTimeoutNanos / 3;
    if (queueTimeoutNanos > requestTimeoutNanos) {
      throw new IllegalArgumentException("queueTimeout (" + b.queueTimeout
          + ") must not exceed requestTimeout (" + b.requestTimeout + ")");
    }
    this.queueTimeoutFraction = (double) queueTimeoutNanos / requestTimeoutNanos;
    this.queueCapacity = b.queueCapacity;
    this.controlIntervalNanos = b.controlInterval.toNanos();
    this.limitController = b.limit != null ? b.limit : Limits.adaptive();
    this.rejector = b.rejector != null ? b.rejector : Rejectors.adaptive();
    int initial = limitController.initialLimit();
    if (initial < 1 || initial > limitController.maxLimit()) {
      throw new IllegalArgumentException("limit: initialLimit() must be in 1..maxLimit(), was "
          + initial);
    }
    this.limit = initial;
    this.window.requestTimeoutNanos = requestTimeoutNanos;
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

  private Request newRequest(int priority, long timeoutNanos, AdmissionCallback cb, Thread w) {
    Priority.check(priority);
    if (timeoutNanos <= 0) {
      throw new IllegalArgumentException("timeout must be positive, was " + timeoutNanos + "ns");
    }
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
    int stripe = counters.stripe();
    counters.add(stripe, level, 1);
    if (closed) {
      reject(r, RejectReason.SHUTTING_DOWN);
    } else if (level >= cutoff) {
      reject(r, RejectReason.SHED);
    } else if (queue.size() == 0 && tryAcquireSlot()) {
      // The controllers need a few hundred latency samples an interval, not one per request:
      // only every (sampleMask + 1)-th admission of this stripe and tier reads the clock.
      long admitted = counters.getAndAdd(stripe, ADMITTED_SLOT + Priority.tier(level), 1);
      if ((admitted & sampleMask) == 0) {
        r.timeAt(clock.nanoTime());
      }
      r.state = Request.ADMITTED;
      deliverAdmitted(r);
    } else {
      r.timeAt(clock.nanoTime());
      enqueue(r);
    }
  }

  private void enqueue(Request r) {
    Request victim = null;
    if (!queue.reserve(queueCapacityNow())) {
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
   * #OVERLOAD_QUEUE_LIMITS} limits' worth if that is less. The rejector's cutoff is set from
   * averages and trails every surge by a tick or two; a queue that then grows past what the
   * permits drain in a couple of service times only makes every admitted request wait. Evicting
   * its least important request instead sheds what the cutoff would have, a moment late but
   * still in milliseconds, and keeps the most important traffic's wait bounded.
   */
  private int queueCapacityNow() {
    if (!rejector.overloaded()) {
      return queueCapacity;
    }
    long cap = Math.max(2L, (long) OVERLOAD_QUEUE_LIMITS * limit);
    return (int) Math.min(queueCapacity, cap);
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
      if (!tryAcquireSlot()) {
        return;
      }
      Request r = queue.poll();
      if (r == null) {
        // A place is reserved but its request not yet offered; its offerer dispatches after the
        // offer. Give the permit back and look again, in case our permit blocked that dispatch.
        releaseSlot();
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

  private boolean tryAcquireSlot() {
    for (;;) {
      int n = inflight;
      if (n >= limit) {
        return false;
      }
      if (INFLIGHT.compareAndSet(this, n, n + 1)) {
        if (n >= peakInflight) {
          peakInflight = n + 1;
        }
        return true;
      }
    }
  }

  private void releaseSlot() {
    INFLIGHT.getAndAdd(this, -1);
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
    counters.add(stripe, counterSlot(Snapshot.Counter.of(outcome), tier), 1);
    // Only a request with times (sampled, queued, or watched for its deadline) costs clock reads.
    if (r.timed) {
      long now = clock.nanoTime();
      if (outcome == Outcome.SUCCESS) {
        long latency = now - r.admittedNanos;
        counters.add(stripe, LATENCY_BASE + LatencyHistogram.bucketOf(latency), 1);
        counters.add(stripe, LATENCY_SUM, latency);
      }
      // The deadline hook may be firing right now on the timer: whoever claims counts the overrun.
      if (now - r.deadlineNanos() > 0 && r.claimOverrun()) {
        counters.add(stripe, counterSlot(Snapshot.Counter.DEADLINE_MISSED, tier), 1);
      }
    }
    releaseSlot();
    dispatch();
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
      return;
    }
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
      limit = Math.max(1, Math.min(max, newLimit));
      int newCutoff = rejector.update(window);
      cutoff = Math.max(0, Math.min(Priority.LEVELS, newCutoff));
      sampleMask = sampleMaskFor(window.admitted);
      lastTickNanos = now;
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "load shedder '" + name + "': control tick failed", e);
    } finally {
      if (!closed) {
        tickTimeout = timer.schedule(tickTask, clock.nanoTime() + controlIntervalNanos);
      }
    }
    // A raised limit frees permits that nobody's release would hand out.
    dispatch();
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
    for (int level = 0; level < Priority.LEVELS; level++) {
      long d = delta(level);
      w.levelArrivals[level] = d;
      arrivals += d;
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
    w.inflight = inflight;
    w.peakInflight = Math.max(peakInflight, w.inflight);
    peakInflight = w.inflight;
    w.limit = limit;
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
    return new Snapshot(name, limit, inflight, queue.size(), rejector.ratio(), cutoff,
        rejector.overloaded(), c);
  }

  /** The shedder's name, used in metrics and logs. */
  public String name() { return name; }

  /** The current inflight limit. */
  public int limit() { return limit; }

  /** Permits currently held. */
  public int inflight() { return inflight; }

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
    return "LoadShedder{" + name + ", limit=" + limit + ", inflight=" + inflight
        + ", queued=" + queue.size() + ", cutoff=" + cutoff + "}";
  }

  /**
   * Settings for a {@link LoadShedder}. Every setting has a default; an invalid value throws
   * {@link IllegalArgumentException} naming the setting.
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
    private Limit limit;
    private Rejector rejector;

    private Builder() {}

    /** The name in metrics and logs. Default {@code "default"}. */
    public Builder name(String name) {
      if (name == null || name.isBlank()) {
        throw new IllegalArgumentException("name must not be blank, was '" + name + "'");
      }
      this.name = name;
      return this;
    }

    /**
     * The timer, and through it the clock, for all of the shedder's time. Default {@link
     * Timer#system()}; use {@link dev.weir.sim.VirtualTime} for virtual time.
     */
    public Builder timer(Timer timer) {
      if (timer == null) {
        throw new IllegalArgumentException("timer must not be null");
      }
      this.timer = timer;
      return this;
    }

    /**
     * The default request timeout: a request's processing deadline is this long after its
     * arrival. Default 3 s. Must be positive.
     */
    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = positive("requestTimeout", requestTimeout);
      return this;
    }

    /**
     * How long a request may wait in the queue. Default a third of the request timeout, as in
     * Cinnamon: a request that waited longer has too little time left to be worth running. Must be
     * positive and at most the request timeout.
     */
    public Builder queueTimeout(Duration queueTimeout) {
      this.queueTimeout = positive("queueTimeout", queueTimeout);
      return this;
    }

    /**
     * How many requests may wait. Default 4096; a full queue evicts a less important request for a
     * more important one. Must be at least 1.
     */
    public Builder queueCapacity(int queueCapacity) {
      if (queueCapacity < 1) {
        throw new IllegalArgumentException("queueCapacity must be at least 1, was " + queueCapacity);
      }
      this.queueCapacity = queueCapacity;
      return this;
    }

    /** How often the limit and the rejector are updated. Default 100 ms. At least 1 ms. */
    public Builder controlInterval(Duration controlInterval) {
      positive("controlInterval", controlInterval);
      if (controlInterval.compareTo(Duration.ofMillis(1)) < 0) {
        throw new IllegalArgumentException("controlInterval must be at least 1ms, was "
            + controlInterval);
      }
      this.controlInterval = controlInterval;
      return this;
    }

    /**
     * The inflight limit controller. Default {@link Limits#adaptive()}; {@link Limits#fixed(int)}
     * for a static limit. An instance serves one shedder.
     */
    public Builder limit(Limit limit) {
      if (limit == null) {
        throw new IllegalArgumentException("limit must not be null");
      }
      this.limit = limit;
      return this;
    }

    /**
     * The rejector. Default {@link Rejectors#adaptive()}; {@link Rejectors#none()} never sheds at
     * the door. An instance serves one shedder.
     */
    public Builder rejector(Rejector rejector) {
      if (rejector == null) {
        throw new IllegalArgumentException("rejector must not be null");
      }
      this.rejector = rejector;
      return this;
    }

    /** Builds the shedder and starts its control ticks. */
    public LoadShedder build() {
      return new LoadShedder(this);
    }

    private static Duration positive(String setting, Duration d) {
      if (d == null || d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(setting + " must be positive, was " + d);
      }
      // All time is long nanoseconds; a longer duration would fail in build() with an
      // ArithmeticException that names no setting.
      if (d.compareTo(MAX_DURATION) > 0) {
        throw new IllegalArgumentException(setting + " must be at most " + MAX_DURATION
            + " (about 292 years), was " + d);
      }
      return d;
    }

    private static final Duration MAX_DURATION = Duration.ofNanos(Long.MAX_VALUE);
  }
}
