package dev.weir;

import dev.weir.internal.Credits;
import dev.weir.internal.LatencyHistogram;
import java.util.Arrays;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A shedder's control tick. Every control interval, on the timer, it fills a {@link
 * ControlWindow} from the counters, hands it to the {@link OverloadPolicy}, and applies the
 * policy's decisions to the {@link Admission} mechanism: the limit, the cutoff and the queue's
 * bound; it also sets the latency sampling rate ({@link #sampleMaskFor}). Ticks never overlap, so
 * its state needs no synchronisation.
 *
 * <p>At {@code FINE}, the {@code dev.weir.LoadShedder} logger gets a line for every tick that
 * changes the limit: the limit before and after, the cutoff, what was in flight and queued, and
 * the limit controller's own account of its state (its {@code toString}), so that a limit that
 * settles somewhere unexpected on a real service can be traced. Off, it costs one level check a
 * tick; on, the log's handlers run on the timer thread, so it is for tracing, not for production.
 */
final class ControlLoop {
  private static final Logger LOG = Logger.getLogger(LoadShedder.class.getName());

  /** Latency samples wanted per control interval; see {@link #sampleMaskFor}. */
  static final long SAMPLES_PER_INTERVAL = 256;

  private final String name;
  private final Admission admission;
  private final ShedderCounters counters;
  private final Credits credits;
  private final OverloadPolicy policy;
  private final long intervalNanos;

  private final ControlWindow window = new ControlWindow();
  private final Runnable tickTask = this::tick;
  private long lastTickNanos;
  private volatile Timer.Timeout tickTimeout;
  /** Set by {@link LoadShedder#capConcurrency} on any thread, under this loop's lock; or null. */
  private volatile ConcurrencyBudget budget;

  ControlLoop(String name, Admission admission, Limit limit, Rejector rejector, int queueCapacity,
      long requestTimeoutNanos, long queueTimeoutNanos, long intervalNanos) {
    this.name = name;
    this.admission = admission;
    this.counters = admission.counters;
    this.credits = admission.credits;
    this.policy = new OverloadPolicy(limit, rejector, queueCapacity);
    this.intervalNanos = intervalNanos;
    this.window.requestTimeoutNanos = requestTimeoutNanos;
    this.window.queueTimeoutNanos = queueTimeoutNanos;
  }

  /** Leaves the budget shared so far, if any, and joins {@code b} unless closed (null: none). */
  synchronized void share(ConcurrencyBudget b) {
    ConcurrencyBudget old = budget;
    if (old == b) {
      return;
    }
    if (old != null) {
      old.leave(this);
    }
    if (b != null && !admission.isClosed()) {
      b.join(this);
      budget = b;
    } else {
      budget = null;
    }
  }

  ConcurrencyBudget budget() {
    return budget;
  }

  /** What the budget leaves this shedder now; {@link Integer#MAX_VALUE} without one. */
  int concurrencyCap() {
    ConcurrencyBudget b = budget;
    return b == null ? Integer.MAX_VALUE : b.capFor(this);
  }

  /** Permits held now, for the budget's other members. */
  int inflight() {
    return credits.held();
  }

  /** Schedules the first tick, one interval from now. */
  void start() {
    lastTickNanos = admission.clock.nanoTime();
    tickTimeout = admission.timer.schedule(tickTask, lastTickNanos + intervalNanos);
  }

  /**
   * Cancels the next tick and leaves the budget; call after the admission is closed, so no tick
   * reschedules and no budget is joined again.
   */
  void stop() {
    Timer.Timeout t = tickTimeout;
    if (t != null) {
      t.cancel();
    }
    share(null);
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
      int before = window.limit;
      policy.decide(window);
      if (policy.limit != before && LOG.isLoggable(Level.FINE)) {
        LOG.fine("load shedder '" + name + "': limit " + before + " -> " + policy.limit
            + ", cutoff " + policy.cutoff + ", in flight " + window.inflight + ", queued "
            + window.queueLength + "; " + policy.limitState());
      }
      credits.setLimit(policy.limit);
      admission.setCutoff(policy.cutoff);
      admission.setQueueBounds(policy.queueBound, policy.sparedLevels, policy.sparedBound);
      // A lowered bound is enforced at once, not one eviction per enqueue.
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
    w.shed = counters.sinceTick(Snapshot.Counter.SHED);
    w.queueFull = counters.sinceTick(Snapshot.Counter.QUEUE_FULL);
    w.queueTimeouts = counters.sinceTick(Snapshot.Counter.QUEUE_TIMEOUT);
    w.cancelled = counters.sinceTick(Snapshot.Counter.CANCELLED);
    w.admitted = counters.sinceTick(Snapshot.Counter.ADMITTED);
    w.successes = counters.sinceTick(Snapshot.Counter.SUCCEEDED);
    w.errors = counters.sinceTick(Snapshot.Counter.FAILED);
    w.drops = counters.sinceTick(Snapshot.Counter.DROPPED);
    w.enqueued = counters.enqueuedSinceTick();
    w.dequeued = counters.dequeuedSinceTick();
    // The levels' and the latencies' counters are most of a tick's reads (a slot a level, summed
    // over every stripe). An interval with no decision and no success has nothing new in them but
    // what a racing arrival or release counted a moment early, which stays for the next tick.
    long arrivals = 0;
    if (w.admitted + w.enqueued + w.shed + w.queueFull == 0) {
      Arrays.fill(w.levelArrivals, 0);
    } else {
      for (int level = 0; level < Priority.LEVELS; level++) {
        long d = counters.arrivalsSinceTick(level);
        w.levelArrivals[level] = d;
        arrivals += d;
      }
    }
    w.arrivals = arrivals;
    w.latencies.clear();
    if (w.successes != 0) {
      for (int b = 0; b < LatencyHistogram.BUCKETS; b++) {
        long d = counters.latenciesSinceTick(b);
        if (d != 0) {
          w.latencies.add(b, d);
        }
      }
      w.latencies.addSum(counters.latencySumSinceTick());
    }
    w.queueLength = admission.queued();
    // Credits cached by stripes go back to the pool once an interval, so the peak of the next
    // starts from the permits really held (see Credits); the tick's dispatch() hands them out.
    credits.drain();
    w.inflight = credits.held();
    w.peakInflight = credits.takePeak(w.inflight);
    w.limit = credits.limit();
    w.concurrencyCap = concurrencyCap();
    w.queueEmptied = admission.takeQueueEmptied();
  }
}
