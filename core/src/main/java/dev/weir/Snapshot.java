package dev.weir;

import dev.weir.internal.Check;

/**
 * A shedder's state at one moment: gauges, and per-tier counters since the shedder was built.
 * Cheap to take (it sums a few striped counters) and immutable.
 */
public final class Snapshot {
  private final String name;
  private final int limit;
  private final int inflight;
  private final int queued;
  private final double rejectionRatio;
  private final int cutoff;
  private final boolean overloaded;
  private final long[][] counters;

  Snapshot(String name, int limit, int inflight, int queued, double rejectionRatio, int cutoff,
      boolean overloaded, long[][] counters) {
    this.name = name;
    this.limit = limit;
    this.inflight = inflight;
    this.queued = queued;
    this.rejectionRatio = rejectionRatio;
    this.cutoff = cutoff;
    this.overloaded = overloaded;
    this.counters = counters;
  }

  /** Per-tier counters, each since the shedder was built. */
  public enum Counter {
    /** Requests admitted, at once or from the queue. */
    ADMITTED,
    /** Requests shed at the door by the rejector. */
    SHED,
    /** Requests rejected because the queue was full. */
    QUEUE_FULL,
    /** Requests that timed out in the queue. */
    QUEUE_TIMEOUT,
    /** Requests rejected because the shedder was closing. */
    SHUTTING_DOWN,
    /** Requests cancelled while queued. */
    CANCELLED,
    /**
     * Admitted requests still running when their processing deadline passed. Counted for requests
     * whose deadline is watched ({@link Permit#onDeadline}) or that were queued or sampled; an
     * unwatched fast-path request is not timed, to spare it the clock reads.
     */
    DEADLINE_MISSED,
    /** Permits released as {@link Outcome#SUCCESS}. */
    SUCCEEDED,
    /** Permits released as {@link Outcome#ERROR}. */
    FAILED,
    /** Permits released as {@link Outcome#DROPPED}, including those the watchdog reclaimed. */
    DROPPED,
    /**
     * Permits still held at their deadline plus the watchdog's grace, which the shedder released
     * as {@link Outcome#DROPPED} (so each is counted in {@link #DROPPED} too). See {@link
     * LoadShedder.Builder#watchdogGrace}.
     */
    RECLAIMED;

    static Counter of(RejectReason reason) {
      switch (reason) {
        case SHED: return SHED;
        case QUEUE_FULL: return QUEUE_FULL;
        case QUEUE_TIMEOUT: return QUEUE_TIMEOUT;
        case SHUTTING_DOWN: return SHUTTING_DOWN;
        case CANCELLED: return CANCELLED;
        default: throw new AssertionError(reason);
      }
    }

    static Counter of(Outcome outcome) {
      switch (outcome) {
        case SUCCESS: return SUCCEEDED;
        case ERROR: return FAILED;
        case DROPPED: return DROPPED;
        default: throw new AssertionError(outcome);
      }
    }
  }

  /** The shedder's name. */
  public String name() { return name; }

  /** The inflight limit. */
  public int limit() { return limit; }

  /** Permits held. */
  public int inflight() { return inflight; }

  /** Requests waiting in the queue. */
  public int queued() { return queued; }

  /** The fraction of recent traffic the cutoff covers, in [0, 1]; at most this is shed. */
  public double rejectionRatio() { return rejectionRatio; }

  /**
   * The priority cutoff: requests at or above it are shed unless a permit is free and nothing
   * waits. {@link Priority#LEVELS} sheds none.
   */
  public int cutoff() { return cutoff; }

  /** Whether the rejector judges the shedder overloaded. */
  public boolean overloaded() { return overloaded; }

  /**
   * A counter for one tier.
   *
   * @throws IllegalArgumentException if {@code tier} is not in 0..5
   */
  public long count(Counter counter, int tier) {
    return counters[counter.ordinal()][Check.inRange("tier", tier, 0, Priority.TIERS - 1)];
  }

  /** A counter summed over all tiers. */
  public long total(Counter counter) {
    long sum = 0;
    for (long v : counters[counter.ordinal()]) {
      sum += v;
    }
    return sum;
  }

  @Override
  public String toString() {
    return "Snapshot{name=" + name + ", limit=" + limit + ", inflight=" + inflight
        + ", queued=" + queued + ", ratio=" + String.format("%.3f", rejectionRatio)
        + ", cutoff=" + cutoff + ", overloaded=" + overloaded
        + ", admitted=" + total(Counter.ADMITTED) + ", shed=" + total(Counter.SHED)
        + ", queueTimeouts=" + total(Counter.QUEUE_TIMEOUT) + "}";
  }
}
