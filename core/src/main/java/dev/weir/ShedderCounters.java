package dev.weir;

import dev.weir.internal.LatencyHistogram;
import dev.weir.internal.StripedCounters;

/**
 * Everything a shedder counts, behind one named method per event. The counts live in one set of
 * {@link StripedCounters}, laid out as: arrivals per priority level; each {@link Snapshot.Counter}
 * per tier; the queue wait per tier; the queue's inflow and outflow; the latency samples' sum and
 * histogram. Recording is one atomic add on the calling thread's stripe and never allocates;
 * a caller that records several events in a row passes the {@link #stripe()} it asked for once.
 *
 * <p>The {@code *SinceTick} methods give what was counted since their previous call, for the
 * control tick, the only caller of them (ticks never overlap).
 */
final class ShedderCounters {
  private static final int COUNTERS = Snapshot.Counter.values().length;
  private static final int TIER_BASE = Priority.LEVELS;
  private static final int WAIT_BASE = TIER_BASE + COUNTERS * Priority.TIERS;
  private static final int ENQUEUED = WAIT_BASE + Priority.TIERS;
  private static final int DEQUEUED = ENQUEUED + 1;
  private static final int LATENCY_SUM = DEQUEUED + 1;
  private static final int LATENCY_BASE = LATENCY_SUM + 1;
  private static final int SLOTS = LATENCY_BASE + LatencyHistogram.BUCKETS;

  private static final int ADMITTED_BASE = slot(Snapshot.Counter.ADMITTED, 0);

  private final StripedCounters counters = new StripedCounters(SLOTS);
  /** The totals at the previous tick; touched only by the tick. */
  private final long[] atLastTick = new long[SLOTS];

  private static int slot(Snapshot.Counter c, int tier) {
    return TIER_BASE + c.ordinal() * Priority.TIERS + tier;
  }

  /** The calling thread's stripe, for several events in a row on this thread. */
  int stripe() {
    return counters.stripe();
  }

  // ------------------------------------------------------------------------------ recording

  /** A request arrived at {@code level}: counted before any decision about it. */
  void arrived(int stripe, int level) {
    counters.add(stripe, level, 1);
  }

  /**
   * A request of {@code tier} was admitted without waiting. Returns how many this stripe had
   * admitted so far of that tier, from which the caller decides whether to sample its latency.
   */
  long admittedAtOnce(int stripe, int tier) {
    return counters.getAndAdd(stripe, ADMITTED_BASE + tier, 1);
  }

  /** A request of {@code tier} left the queue admitted, after waiting {@code waitNanos}. */
  void admittedFromQueue(int stripe, int tier, long waitNanos) {
    counters.add(stripe, ADMITTED_BASE + tier, 1);
    counters.add(stripe, DEQUEUED, 1);
    counters.add(stripe, WAIT_BASE + tier, waitNanos);
  }

  /** A request of {@code tier} was shed at the door. */
  void shed(int stripe, int tier) {
    counters.add(stripe, slot(Snapshot.Counter.SHED, tier), 1);
  }

  /** A request of {@code tier} was rejected for {@code reason}. */
  void rejected(RejectReason reason, int tier) {
    counters.increment(slot(Snapshot.Counter.of(reason), tier));
  }

  /** A request entered the queue. */
  void enqueued() {
    counters.increment(ENQUEUED);
  }

  /** A permit of {@code tier} was released with {@code outcome}. */
  void released(int stripe, int tier, Outcome outcome) {
    counters.add(stripe, slot(Snapshot.Counter.of(outcome), tier), 1);
  }

  /** A latency sample: the time from admission to a successful release. */
  void latency(int stripe, long latencyNanos) {
    counters.add(stripe, LATENCY_BASE + LatencyHistogram.bucketOf(latencyNanos), 1);
    counters.add(stripe, LATENCY_SUM, latencyNanos);
  }

  /** A request of {@code tier} was still running when its deadline passed. */
  void deadlineMissed(int stripe, int tier) {
    counters.add(stripe, slot(Snapshot.Counter.DEADLINE_MISSED, tier), 1);
  }

  /** The watchdog reclaimed a permit of {@code tier} (its release counts DROPPED besides). */
  void reclaimed(int tier) {
    counters.increment(slot(Snapshot.Counter.RECLAIMED, tier));
  }

  /** {@link #deadlineMissed(int, int)} on the calling thread's stripe. */
  void deadlineMissed(int tier) {
    counters.increment(slot(Snapshot.Counter.DEADLINE_MISSED, tier));
  }

  // ------------------------------------------------------------------------------- totals

  /** A counter's total for one tier. */
  long count(Snapshot.Counter counter, int tier) {
    return counters.sum(slot(counter, checkTier(tier)));
  }

  /** Total nanoseconds admitted requests of {@code tier} waited in the queue. */
  long queueWaitNanos(int tier) {
    return counters.sum(WAIT_BASE + checkTier(tier));
  }

  /** Every per-tier counter's total, indexed by counter ordinal, then tier. */
  long[][] totals() {
    long[][] c = new long[COUNTERS][Priority.TIERS];
    for (int k = 0; k < COUNTERS; k++) {
      for (int t = 0; t < Priority.TIERS; t++) {
        c[k][t] = counters.sum(TIER_BASE + k * Priority.TIERS + t);
      }
    }
    return c;
  }

  // Slots are laid out side by side: an unchecked tier would silently read a neighbour's counter.
  private static int checkTier(int tier) {
    if (tier < 0 || tier >= Priority.TIERS) {
      throw new IllegalArgumentException(
          "tier must be in 0.." + (Priority.TIERS - 1) + ", was " + tier);
    }
    return tier;
  }

  // ----------------------------------------------------------------------- since the last tick

  /** Arrivals at {@code level}. */
  long arrivalsSinceTick(int level) {
    return sinceTick(level);
  }

  /** A counter summed over all tiers. */
  long sinceTick(Snapshot.Counter counter) {
    long sum = 0;
    for (int t = 0; t < Priority.TIERS; t++) {
      sum += sinceTick(slot(counter, t));
    }
    return sum;
  }

  /** Requests that entered the queue. */
  long enqueuedSinceTick() {
    return sinceTick(ENQUEUED);
  }

  /** Requests that left the queue admitted. */
  long dequeuedSinceTick() {
    return sinceTick(DEQUEUED);
  }

  /** Latency samples in histogram bucket {@code bucket}. */
  long latenciesSinceTick(int bucket) {
    return sinceTick(LATENCY_BASE + bucket);
  }

  /** The sum of the latency samples. */
  long latencySumSinceTick() {
    return sinceTick(LATENCY_SUM);
  }

  private long sinceTick(int slot) {
    long total = counters.sum(slot);
    long d = total - atLastTick[slot];
    atLastTick[slot] = total;
    return d;
  }
}
