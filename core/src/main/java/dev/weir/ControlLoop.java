package dev.weir;

import dev.weir.internal.Credits;
import dev.weir.internal.LatencyHistogram;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A shedder's control tick and its overload policy. Every control interval, on the timer, it fills
 * a {@link ControlWindow} from the counters, asks the {@link Limit} for a limit and the {@link
 * Rejector} for a cutoff, and turns their answers into the knobs the {@link Admission} mechanism
 * reads: the cutoff, the queue's bound while overloaded ({@link #queueBoundFor}), the short-queue
 * length ({@link #SHORT_QUEUE_LIMITS}) and the latency sampling rate ({@link #sampleMaskFor}).
 * Ticks never overlap, so its state needs no synchronisation. The reasons for each rule are in
 * {@code docs/design.md}.
 */
final class ControlLoop {
  private static final Logger LOG = Logger.getLogger(LoadShedder.class.getName());

  /** The overload queue bound, in limits: about this many service times of waiting at most. */
  static final double OVERLOAD_QUEUE_LIMITS = 1.5;
  /** The bound, in limits, while the cut spares the most important tier arriving. */
  static final double SPARING_QUEUE_LIMITS = 2;
  /** Below this many limits' worth queued, the cut's own tier is queued, so the queue stays wet. */
  static final double SHORT_QUEUE_LIMITS = 0.25;
  /** How much of the recent queue-timeout count survives each tick. */
  private static final double QUEUE_TIMEOUT_MEMORY = 0.9;
  /** The share of recent arrivals from which a tier counts as arriving. */
  private static final double ARRIVING_TIER_SHARE = 0.01;
  /** How much of the recent per-tier arrivals survives each tick. */
  private static final double TIER_ARRIVALS_DECAY = 0.9;
  /** Latency samples wanted per control interval; see {@link #sampleMaskFor}. */
  static final long SAMPLES_PER_INTERVAL = 256;

  private final String name;
  private final Admission admission;
  private final ShedderCounters counters;
  private final Credits credits;
  private final Limit limit;
  private final Rejector rejector;
  private final int queueCapacity;
  private final long queueTimeoutNanos;
  private final long intervalNanos;

  private final ControlWindow window = new ControlWindow();
  private final double[] recentTierArrivals = new double[Priority.TIERS];
  private boolean cutSparesTopTier;
  private double recentQueueTimeouts;
  private boolean overloaded;
  private long overloadedSinceNanos;
  private final Runnable tickTask = this::tick;
  private long lastTickNanos;
  private volatile Timer.Timeout tickTimeout;

  ControlLoop(String name, Admission admission, Limit limit, Rejector rejector, int queueCapacity,
      long requestTimeoutNanos, long queueTimeoutNanos, long intervalNanos) {
    this.name = name;
    this.admission = admission;
    this.counters = admission.counters;
    this.credits = admission.credits;
    this.limit = limit;
    this.rejector = rejector;
    this.queueCapacity = queueCapacity;
    this.queueTimeoutNanos = queueTimeoutNanos;
    this.intervalNanos = intervalNanos;
    this.window.requestTimeoutNanos = requestTimeoutNanos;
    this.window.queueTimeoutNanos = queueTimeoutNanos;
  }

  /** Schedules the first tick, one interval from now. */
  void start() {
    lastTickNanos = admission.clock.nanoTime();
    tickTimeout = admission.timer.schedule(tickTask, lastTickNanos + intervalNanos);
  }

  /** Cancels the next tick; call after the admission is closed, so no tick reschedules. */
  void stop() {
    Timer.Timeout t = tickTimeout;
    if (t != null) {
      t.cancel();
    }
  }

  private void tick() {
    if (admission.isClosed()) {
      return;
    }
    try {
      long now = admission.clock.nanoTime();
      // The watchdog first, so that this window counts what it reclaims.
      admission.watchdog.sweep(now, intervalNanos);
      fillWindow(now);
      int newLimit = limit.update(window);
      int max = limit.maxLimit();
      credits.setLimit(Math.max(1, Math.min(max, newLimit)));
      int cut = Math.max(0, Math.min(Priority.LEVELS, rejector.update(window)));
      admission.setCutoff(cut);
      cutSparesTopTier = sparesTopTier(cut);
      admission.setQueueBound(queueBoundFor(rejector.overloaded(), credits.limit()));
      trackQueueTimeouts(now, rejector.overloaded());
      admission.setShortQueue(recentQueueTimeouts >= 1 ? 0
          : (int) Math.ceil(SHORT_QUEUE_LIMITS * credits.limit()));
      admission.trimToBound();
      admission.setSampleMask(sampleMaskFor(window.admitted));
      lastTickNanos = now;
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "load shedder '" + name + "': control tick failed", e);
    } finally {
      if (!admission.isClosed()) {
        tickTimeout = admission.timer.schedule(tickTask,
            admission.clock.nanoTime() + intervalNanos);
      }
    }
    // A raised limit, and the drain, free credits that nobody's release would hand out.
    admission.dispatch();
  }

  // ------------------------------------------------------------------------ overload policy

  /**
   * The configured capacity, or, while the rejector judges the shedder overloaded, {@value
   * #OVERLOAD_QUEUE_LIMITS} limits' worth if that is less ({@value #SPARING_QUEUE_LIMITS} while
   * the cut spares the most important tier arriving). The cutoff trails every surge by a tick or
   * two; a queue longer than the permits drain in a couple of service times only makes every
   * admitted request wait, so the excess is evicted, least important first, within milliseconds.
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
   * Remembers the queue timeouts of the steady overload, not those of the backlog that built up
   * before it was detected: for one queue timeout after detection, every request that times out
   * had arrived before it (a cold start's queue, cleared by then), and says nothing about the
   * queue the shedder now keeps. While any are remembered, the short-queue rule is off.
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
   * Sample one immediate admission in 2^k, with the largest k that still leaves about {@value
   * #SAMPLES_PER_INTERVAL} samples an interval at the last interval's rate: all of them at low
   * rates, one in 4 at 20,000 per second (2,000 an interval).
   */
  static long sampleMaskFor(long admittedLastInterval) {
    long ratio = admittedLastInterval / SAMPLES_PER_INTERVAL;
    return ratio < 2 ? 0 : Long.highestOneBit(ratio) - 1;
  }

  // ---------------------------------------------------------------------------- the window

  private void fillWindow(long now) {
    ControlWindow w = window;
    w.nowNanos = now;
    w.intervalNanos = now - lastTickNanos;
    long arrivals = 0;
    for (int tier = 0; tier < Priority.TIERS; tier++) {
      long tierArrivals = 0;
      for (int level = tier * Priority.COHORTS; level < (tier + 1) * Priority.COHORTS; level++) {
        long d = counters.arrivalsSinceTick(level);
        w.levelArrivals[level] = d;
        tierArrivals += d;
      }
      recentTierArrivals[tier] = recentTierArrivals[tier] * TIER_ARRIVALS_DECAY + tierArrivals;
      arrivals += tierArrivals;
    }
    w.arrivals = arrivals;
    w.shed = counters.sinceTick(Snapshot.Counter.SHED);
    w.queueFull = counters.sinceTick(Snapshot.Counter.QUEUE_FULL);
    w.queueTimeouts = counters.sinceTick(Snapshot.Counter.QUEUE_TIMEOUT);
    w.admitted = counters.sinceTick(Snapshot.Counter.ADMITTED);
    w.successes = counters.sinceTick(Snapshot.Counter.SUCCEEDED);
    w.errors = counters.sinceTick(Snapshot.Counter.FAILED);
    w.drops = counters.sinceTick(Snapshot.Counter.DROPPED);
    w.enqueued = counters.enqueuedSinceTick();
    w.dequeued = counters.dequeuedSinceTick();
    w.latencies.clear();
    for (int b = 0; b < LatencyHistogram.BUCKETS; b++) {
      long d = counters.latenciesSinceTick(b);
      if (d != 0) {
        w.latencies.add(b, d);
      }
    }
    w.latencies.addSum(counters.latencySumSinceTick());
    w.queueLength = admission.queued();
    // Credits cached by stripes go back to the pool once an interval, so the peak of the next
    // starts from the permits really held (see Credits); the tick's dispatch() hands them out.
    credits.drain();
    w.inflight = credits.held();
    w.peakInflight = credits.takePeak(w.inflight);
    w.limit = credits.limit();
    w.overloadQueueBound = queueBoundFor(true, w.limit);
    w.cutSparesTopTier = cutSparesTopTier;
    w.queueEmptied = admission.takeQueueEmptied();
  }
}
