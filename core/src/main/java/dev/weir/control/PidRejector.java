package dev.weir.control;

import dev.weir.ControlWindow;
import dev.weir.Priority;
import dev.weir.Rejector;
import dev.weir.internal.ArrivingTiers;
import dev.weir.internal.Check;
import java.time.Duration;
import java.util.Arrays;

/**
 * Sheds the least important traffic at the door while the shedder is overloaded, after Uber's
 * Cinnamon.
 *
 * <p><b>Detection.</b> The shedder is overloaded once its queue has not been empty for {@code
 * detectionWindow} (Facebook's and Cinnamon's signal: a queue that never empties is a standing
 * queue, not a burst being absorbed).
 *
 * <p><b>Ratio.</b> While shedding, a PI controller in velocity form turns the queue's dynamics into
 * a rejection ratio, from three terms:
 * <ul>
 *   <li>The proportional term follows the excess inflow (requests enqueued minus requests that left
 *       the queue: admitted, timed out, or withdrawn by their callers).
 *   <li>The integral term follows the backlog above a target, counted up to the queue's bound
 *       while overloaded (beyond it the shedder evicts). Both come from the shedder's overload
 *       policy ({@link #update(ControlWindow, double, int)}); used alone, the target is a limit
 *       and a quarter's worth and the whole queue counts.
 *   <li>A gentle third term follows the rate of queue timeouts, which are requests shed late,
 *       after a wait, and moves that shedding to the door.
 * </ul>
 * Each term is divided by the arrivals of the interval, so the controller sees rates, not counts,
 * and behaves alike at 50 and at 50,000 RPS; the backlog's arrivals count at most four targets a
 * tick, so that its pull does not vanish on a service much faster than the tick. At low rates it
 * gathers at least {@code minArrivals} before it moves. Once the queue has stayed empty for three
 * ticks, the ratio decays by {@code decay} a tick: fast enough to stop shedding within a few
 * seconds of an overload's end, slow enough that a brief lull does not reopen the door. The result
 * is a ratio that settles in a few seconds, without the all-or-nothing swings of CoDel-style
 * shedders.
 *
 * <p>A queue that stands while the limit is still climbing steeply (a cold start) is not judged
 * overload: it waits for capacity the limit is about to grant.
 *
 * <p><b>Cutoff.</b> The ratio becomes a priority cutoff through a decayed histogram of recent
 * arrivals over all 768 levels: the least important {@code ratio} of traffic is cut off, and shed
 * when it would wait (a request that finds a permit free and nothing queued runs whatever its
 * priority), so at most {@code ratio} is shed. Because cohorts order the levels within a tier,
 * services that share the cohort scheme shed the same users.
 *
 * <p>The cut never enters the most important tier arriving (from 1% of recent traffic) while
 * less important ones arrive too (together from 1%): the ratio is held at the less important tiers' share.
 * That tier's own excess, if it has one, is the queue's to turn away: its bound answers at once.
 * A PI ratio overshoots whenever a backlog drains by itself (a cold start, a burst), and past
 * that share the overshoot would turn away the very traffic the shedder exists to serve. With one
 * tier alone, its cohorts are cut as usual.
 *
 * <p>Not thread-safe: a shedder calls {@link #update} from its ticks, which never overlap. Why each
 * default is what it is, with the scenarios that set it: {@code docs/design.md}.
 */
public final class PidRejector implements Rejector {
  private final long detectionWindowNanos;
  private final double kp;
  private final double ki;
  private final double decay;
  private final long minArrivals;
  private final double distributionDecay;

  private final double[] distribution = new double[Priority.LEVELS];
  private final double[] tierDistribution = new double[Priority.TIERS];
  private double distributionTotal;

  // The tick's working state, touched only by update(), and what it publishes for other threads
  // (metrics scrapes, snapshots): volatile, written once at the end of each update.
  private double ratioNow;
  private int cutoffNow = Priority.LEVELS;
  private boolean sheddingNow;
  private volatile double ratio;
  private volatile int cutoff = Priority.LEVELS;
  private volatile boolean shedding;
  private long lastEmptyNanos = Long.MIN_VALUE;
  private int emptyTicks;
  private int lastLimit;

  // Accumulated over ticks until there are enough arrivals to judge rates.
  private long accTicks;
  private long accArrivals;
  private long accEnqueued;
  private long accDequeued;
  private long accTimeouts;

  /** The backlog aimed for, in limits, when no policy says otherwise. */
  private static final double DEFAULT_BACKLOG_LIMITS = 1.25;

  /**
   * In the backlog's pull, the arrivals count at most this many backlog targets a tick: the pull
   * of a service whose latency is a fifth of the tick (20 ms, where S1-S10 set {@code ki}), which
   * every faster service keeps.
   */
  private static final double FAST_PULL_TARGETS = 4;

  /** The gain on the rate of queue timeouts. */
  private static final double LATE_GAIN = 0.25;


  private PidRejector(Builder b) {
    this.detectionWindowNanos = b.detectionWindow.toNanos();
    this.kp = b.kp;
    this.ki = b.ki;
    this.decay = b.decay;
    this.minArrivals = b.minArrivals;
    this.distributionDecay = b.distributionDecay;
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public double ratio() {
    return ratio;
  }

  @Override
  public boolean overloaded() {
    return shedding;
  }

  /** The current cutoff. */
  public int cutoff() {
    return cutoff;
  }

  @Override
  public int update(ControlWindow w) {
    return update(w, Math.max(2, DEFAULT_BACKLOG_LIMITS * w.limit()), Integer.MAX_VALUE);
  }

  @Override
  public int update(ControlWindow w, double backlogTarget, int queueBound) {
    int c = compute(w, backlogTarget, queueBound);
    ratio = ratioNow;
    shedding = sheddingNow;
    cutoff = c;
    return c;
  }

  private int compute(ControlWindow w, double backlogTarget, int queueBound) {
    long now = w.nowNanos();
    updateDistribution(w.levelArrivals());
    // A queue that stands while the limit is still climbing steeply (a cold start) is waiting for
    // capacity the limit is about to grant, not for capacity the service lacks.
    boolean limitClimbing = w.limit() > 1.25 * lastLimit;
    lastLimit = w.limit();
    if (lastEmptyNanos == Long.MIN_VALUE || w.queueEmptied() || limitClimbing && !sheddingNow) {
      lastEmptyNanos = now;
    }
    emptyTicks = w.queueEmptied() && w.queueLength() == 0 ? emptyTicks + 1 : 0;
    boolean standingQueue = now - lastEmptyNanos >= detectionWindowNanos;

    accTicks++;
    accArrivals += w.arrivals();
    accEnqueued += w.enqueued();
    // Queue timeouts leave the queue too. Counting them as excess inflow instead would make the
    // ratio chase a cold start's backlog, which the timeouts clear by themselves, and overshoot
    // into the most important tiers. Requests their callers withdrew left it too.
    accDequeued += w.dequeued() + w.queueTimeouts() + w.cancelled();
    accTimeouts += w.queueTimeouts();

    if (!sheddingNow) {
      if (!standingQueue) {
        clearAccumulators();
        return cutoffNow = Priority.LEVELS;
      }
      sheddingNow = true;
    }

    if (emptyTicks >= 3) {
      // The queue has stayed empty: back off gently, so a brief lull does not reopen the door.
      ratioNow = Math.max(0, ratioNow * (1 - decay) - decay / 10);
      clearAccumulators();
      if (ratioNow == 0) {
        sheddingNow = false;
        return cutoffNow = Priority.LEVELS;
      }
      return cutoffNow = cut();
    }

    if (accArrivals < minArrivals) {
      return cutoffNow;
    }
    double arrivals = accArrivals;
    double excess = (accEnqueued - accDequeued) / arrivals;
    // A longer queue than the bound (a cold start's backlog, when overload is first detected) is
    // evicted by the shedder, not drained by shedding at the door: counted in full, it would shut
    // the door on every tier for seconds.
    double queued = Math.min(w.queueLength(), queueBound);
    // Over the arrivals, a backlog error is drained in about 1/ki ticks whatever the rate. But
    // the target is about a service time of arrivals, so the pull scales with the service's
    // latency over the tick, and on a fast service it vanishes: a cut that keeps emptying the
    // queue would stay, idling the service. So the arrivals count at most a few targets a tick.
    double pullArrivals = Math.min(arrivals,
        FAST_PULL_TARGETS * Math.max(1, backlogTarget) * accTicks);
    double backlog = (queued - backlogTarget) / pullArrivals;
    // Requests that time out in the queue were shed late: at the cost of a wait, for nothing.
    // Gentle, because timeouts lag the queue by the queue timeout, and a strong term would
    // overshoot after a cold start.
    double late = accTimeouts / arrivals;
    ratioNow = clamp(ratioNow + kp * excess + ki * backlog + LATE_GAIN * late);
    clearAccumulators();
    return cutoffNow = cut();
  }

  /**
   * The cutoff for {@code ratioNow}, sparing the most important tier arriving while less important
   * traffic arrives: past that traffic's share the ratio is held at it, so it does not wind up
   * past what the door can shed.
   */
  private int cut() {
    int topTier = topTierArriving();
    if (topTier >= 0) {
      double below = shareBelow(topTier);
      if (ratioNow >= below) {
        ratioNow = below;
        return (topTier + 1) * Priority.COHORTS;
      }
    }
    return cutoffFor(ratioNow);
  }

  /**
   * The most important tier arriving ({@link ArrivingTiers}), if less important tiers arrive too,
   * with at least that share between them; else -1 (one tier, nothing to spare it for).
   */
  private int topTierArriving() {
    if (distributionTotal <= 0) {
      return -1;
    }
    Arrays.fill(tierDistribution, 0);
    for (int l = 0; l < Priority.LEVELS; l++) {
      tierDistribution[Priority.tier(l)] += distribution[l];
    }
    int top = ArrivingTiers.mostImportant(tierDistribution);
    return top >= 0 && shareBelow(top) >= ArrivingTiers.SHARE ? top : -1;
  }

  /** The share of recent arrivals in tiers less important than {@code tier}. */
  private double shareBelow(int tier) {
    double below = 0;
    for (int l = (tier + 1) * Priority.COHORTS; l < Priority.LEVELS; l++) {
      below += distribution[l];
    }
    return below / distributionTotal;
  }

  private void clearAccumulators() {
    accTicks = 0;
    accArrivals = 0;
    accEnqueued = 0;
    accDequeued = 0;
    accTimeouts = 0;
  }

  private void updateDistribution(long[] arrivals) {
    double total = 0;
    for (int i = 0; i < distribution.length; i++) {
      double v = distribution[i] * distributionDecay + arrivals[i];
      distribution[i] = v;
      total += v;
    }
    distributionTotal = total;
  }

  /** The lowest level such that the levels from it down hold at most {@code ratio} of traffic. */
  private int cutoffFor(double ratio) {
    if (ratio <= 0 || distributionTotal <= 0) {
      return Priority.LEVELS;
    }
    double budget = ratio * distributionTotal;
    double shed = 0;
    int level = Priority.LEVELS;
    while (level > 0 && shed + distribution[level - 1] <= budget) {
      shed += distribution[level - 1];
      level--;
    }
    return level;
  }

  private static double clamp(double v) {
    return v < 0 ? 0 : (v > 1 ? 1 : v);
  }

  @Override
  public String toString() {
    return String.format("PidRejector{ratio=%.3f, cutoff=%d, shedding=%s}", ratio, cutoff,
        shedding);
  }

  /** Settings for a {@link PidRejector}; each has a default that suits most services. */
  public static final class Builder {
    private Duration detectionWindow = Duration.ofMillis(500);
    private double kp = 0.3;
    private double ki = 0.08;
    private double decay = 0.1;
    private long minArrivals = 50;
    private double distributionDecay = 0.9;

    private Builder() {}

    /**
     * How long the queue must stay non-empty before shedding starts. Default 500 ms: longer than a
     * burst the queue absorbs on its own, and short enough that an overload is shed at the door
     * within about a second rather than in queue timeouts. Positive.
     */
    public Builder detectionWindow(Duration v) {
      this.detectionWindow = Check.positive("detectionWindow", v);
      return this;
    }

    /**
     * The proportional gain, on excess inflow per arrival. Default 0.3, in [0, 10]: low, as an
     * interval's excess is mostly Poisson noise that this term passes straight into the cutoff.
     */
    public Builder kp(double v) {
      this.kp = Check.inRange("kp", v, 0, true, 10, true);
      return this;
    }

    /**
     * The integral gain, on backlog per arrival, the arrivals counted at most four backlog targets
     * a tick. Default 0.08, in (0, 10].
     */
    public Builder ki(double v) {
      this.ki = Check.inRange("ki", v, 0, false, 10, true);
      return this;
    }

    /**
     * The fraction by which the ratio decays each tick once the queue stays empty. Default 0.1,
     * in (0, 1): shedding stops within a few seconds of an overload's end.
     */
    public Builder decay(double v) {
      this.decay = Check.inRange("decay", v, 0, false, 1, false);
      return this;
    }

    /**
     * Arrivals needed before the ratio is updated. Default 50, at least 1: enough for rates to
     * mean something at a small service's rate; at 1000 RPS and above, every tick.
     */
    public Builder minArrivals(long v) {
      this.minArrivals = Check.atLeast("minArrivals", v, 1L);
      return this;
    }

    /** How much of the priority histogram survives each tick. Default 0.9, in [0, 1). */
    public Builder distributionDecay(double v) {
      this.distributionDecay = Check.inRange("distributionDecay", v, 0, true, 1, false);
      return this;
    }

    /** Builds the rejector; every setting was checked by its setter. */
    public PidRejector build() {
      return new PidRejector(this);
    }
  }
}
