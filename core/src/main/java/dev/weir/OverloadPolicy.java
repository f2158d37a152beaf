package dev.weir;

import dev.weir.internal.ArrivingTiers;

/**
 * The overload policy: every decision a shedder takes from its controllers' answers, in one place.
 * Each tick it asks the {@link Limit} for a limit, tells the {@link Rejector} the backlog to aim
 * for and the bound beyond which the queue is evicted, and turns the rejector's cutoff and
 * overload judgement into the knobs the {@link Admission} mechanism reads: the limit, the cutoff
 * and the queue's bounds. It sees the {@link ControlWindow}'s observations, as the controllers do,
 * and nothing else of the mechanism. Ticks never overlap, so its state needs no synchronisation.
 * Why each rule exists, and what the scenario corpus says of it: {@code docs/design.md}.
 */
final class OverloadPolicy {
  /** The queue's bound while overloaded, in limits: about this many service times of waiting. */
  static final double OVERLOAD_QUEUE_LIMITS = 1.5;
  /** The bound while the cut spares the most important tier arriving, which waits for none. */
  static final double SPARING_QUEUE_LIMITS = 2;
  /** The backlog the rejector aims for, in limits: enough that noise seldom empties the queue. */
  static final double BACKLOG_LIMITS = 1.25;
  /**
   * The backlog aimed for while requests time out in the queue, in limits, and at most what the
   * permits admit in a queue timeout: a shorter queue sheds them.
   */
  static final double TIMING_OUT_BACKLOG_LIMITS = 1.0;
  /** How much of the recent queue-timeout count survives each tick. */
  private static final double QUEUE_TIMEOUT_MEMORY = 0.9;
  /** How much of the recent per-tier arrivals, and of the admissions, survives each tick. */
  private static final double RECENT_DECAY = 0.9;

  private final Limit limitController;
  private final Rejector rejector;
  private final int queueCapacity;
  private final double[] recentTierArrivals = new double[Priority.TIERS];
  /** Admissions, decayed as the tiers' arrivals are, so that the two compare. */
  private double recentAdmissions;
  private double recentQueueTimeouts;
  private boolean cutSparesTopTier;

  /** The decisions of the last tick, for the mechanism. */
  int limit;
  int cutoff = Priority.LEVELS;
  int queueBound;
  /** Levels below this (the most important tier arriving, while it fits) have their own bound. */
  int sparedLevels;
  /** The bound of the levels below {@link #sparedLevels}: at least {@link #queueBound}. */
  int sparedBound;

  OverloadPolicy(Limit limitController, Rejector rejector, int queueCapacity) {
    this.limitController = limitController;
    this.rejector = rejector;
    this.queueCapacity = queueCapacity;
    this.limit = limitController.initialLimit();
    this.queueBound = queueCapacity;
  }

  /** The limit controller's own account of its state ({@link Object#toString}), for logs. */
  String limitState() {
    return limitController.toString();
  }

  /** Decides the limit, the cutoff and the queue's bound from one interval's observations. */
  void decide(ControlWindow w) {
    int max = Math.min(limitController.maxLimit(), w.concurrencyCap());
    limit = Math.max(1, Math.min(max, limitController.update(w)));
    // The rejector aims at the interval just observed: the limit and the cut in force during it.
    int bound = overloadBound(w.limit());
    recentQueueTimeouts = recentQueueTimeouts * QUEUE_TIMEOUT_MEMORY + w.queueTimeouts();
    recentAdmissions = recentAdmissions * RECENT_DECAY + w.admitted();
    double backlogTarget;
    if (recentQueueTimeouts >= 1) {
      // A queue that times requests out is too long for some tier whatever its count: the least
      // important admitted tier drains only through what the tiers above leave of the capacity.
      // Nor more than the permits admit in a queue timeout: on a service whose latency is near
      // that timeout, a limit's worth of queue is a wait past it.
      backlogTarget = Math.max(2,
          Math.min(TIMING_OUT_BACKLOG_LIMITS * w.limit(), admittedInQueueTimeout(w)));
    } else if (cutSparesTopTier) {
      // What waits is less important than what arrives next, which goes ahead of it: a full
      // queue costs the important traffic nothing and keeps every permit busy.
      backlogTarget = bound;
    } else {
      backlogTarget = Math.max(2, BACKLOG_LIMITS * w.limit());
    }
    cutoff = Math.max(0, Math.min(Priority.LEVELS,
        rejector.update(w, Math.min(bound, backlogTarget), bound)));
    trackTiers(w.levelArrivals());
    int top = ArrivingTiers.mostImportant(recentTierArrivals);
    // The cut sheds only tiers less important than the most important one arriving
    // (ArrivingTiers): then none of that tier waits behind what the queue holds.
    cutSparesTopTier = cutoff < Priority.LEVELS && top >= 0 && top < Priority.tier(cutoff);
    boolean overloaded = rejector.overloaded();
    queueBound = overloaded ? overloadBound(limit) : queueCapacity;
    sparedLevels = 0;
    sparedBound = queueBound;
    if (overloaded && cutSparesTopTier && recentTierArrivals[top] < recentAdmissions) {
      // The cut spares the most important tier arriving, and that tier alone arrives slower than
      // requests are admitted: it fits, so a burst of it is worth a wait, not a refusal. It may
      // queue past the bound, as far as the permits admit in a queue timeout: a request queued
      // further would time out anyway.
      sparedLevels = (top + 1) * Priority.COHORTS;
      sparedBound = (int) Math.max(queueBound, Math.min(queueCapacity, admittedInQueueTimeout(w)));
    }
  }

  /**
   * The queue's bound while overloaded at {@code limit}: {@value #OVERLOAD_QUEUE_LIMITS} limits'
   * worth ({@value #SPARING_QUEUE_LIMITS} while the cut spares the most important tier arriving),
   * at least two, at most the configured capacity. The cutoff trails every surge by a tick or
   * two; a queue longer than the permits drain in a couple of service times only makes every
   * admitted request wait, so the excess is evicted, least important first, within milliseconds.
   */
  int overloadBound(int limit) {
    double limits = cutSparesTopTier ? SPARING_QUEUE_LIMITS : OVERLOAD_QUEUE_LIMITS;
    long cap = Math.max(2L, (long) (limits * limit));
    return (int) Math.min(queueCapacity, cap);
  }

  /**
   * What the permits have admitted lately in one queue timeout: a request queued behind more than
   * that times out before its turn. Unbounded for an interval that is not positive (a timer that
   * ran a tick early), so that no bound or aim is taken from it.
   */
  private double admittedInQueueTimeout(ControlWindow w) {
    long interval = w.intervalNanos();
    return interval <= 0 ? Double.POSITIVE_INFINITY
        : recentAdmissions * (1 - RECENT_DECAY) * w.queueTimeoutNanos() / interval;
  }

  private void trackTiers(long[] levelArrivals) {
    for (int tier = 0; tier < Priority.TIERS; tier++) {
      long arrivals = 0;
      for (int level = tier * Priority.COHORTS; level < (tier + 1) * Priority.COHORTS; level++) {
        arrivals += levelArrivals[level];
      }
      recentTierArrivals[tier] = recentTierArrivals[tier] * RECENT_DECAY + arrivals;
    }
  }

}
