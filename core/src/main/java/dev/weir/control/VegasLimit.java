package dev.weir.control;

import dev.weir.ControlWindow;
import dev.weir.Limit;
import dev.weir.internal.Check;
import dev.weir.internal.LatencyHistogram;
import java.time.Duration;

/**
 * An inflight limit tuned from latency, after TCP Vegas as modified by Uber's Cinnamon.
 *
 * <p>Each update compares a recent, smoothed median latency with a <em>baseline</em>: the
 * service's latency without queueing. Their ratio estimates how many of the admitted requests are
 * queueing inside the service, {@code queue = limit * (1 - baseline / latency)}: Vegas's estimate.
 * The limit moves toward the value that keeps that queue at a small target ({@code targetQueue} of
 * the limit, at least 1.5 requests), enough slack to keep every server busy, and never smaller than
 * three standard errors of a window's median times the limit: on a noisy service a smaller queue
 * cannot be told from chance. Moving toward a target, rather than stepping whenever a threshold is
 * crossed, keeps the limit from random-walking upward.
 *
 * <p><b>Start.</b> The limit starts low (4), so the first window (60 samples) measures the
 * service's latency with little queueing. Then, as in TCP's slow start, every answer no slower
 * than half as much again as the start-up windows' median raises the limit by one, or the limit
 * grows straight toward what the arrivals would hold in flight at the start-up's mean latency, if
 * that is more (at most a doubling a tick either way), until the median of a window (20 samples)
 * exceeds that twice in a row. So the limit doubles at least once a round trip of the service,
 * however slow. It then restarts at Vegas's estimate of the service's concurrency ({@code limit *
 * latency below the knee / latency}, from mean latencies, since a queue's wait grows with the mean
 * service time, not the median), between a quarter and a half of the limit reached (a stall as
 * slow start ends reads as a deep queue), and takes the median of all the start-up windows before
 * the rise as the baseline: latency measured below the knee, which no later window at the
 * restarted limit can measure if that limit is above the knee. Full windows take over from it
 * after an eighth of the baseline horizon (at least two windows). Slow start that ends because a
 * window did not use its limit keeps a start-up baseline the same way, with the requests still
 * running counted as slower than every answer.
 *
 * <p>The failure modes of other adaptive limits, and what this one does about each:
 * <ul>
 *   <li><b>Noise and collapse at low traffic.</b> An update needs {@code minSamples} samples,
 *       gathered over as many ticks as it takes (up to {@code maxWindow}), so noise at 5 RPS cannot
 *       whittle the limit down; an unused limit settles near its recent peak (below).
 *   <li><b>Baseline drift.</b> The baseline is the lowest smoothed median in a sliding horizon, so it
 *       cannot creep up with latency while the service is loaded; every 32 updates one window runs at
 *       the limit less its target queue (at most 0.8 of the limit), where Vegas puts the knee, and
 *       its median is a fresh baseline candidate from below the operating point. On a
 *       processor-shared service, whose latency grows with every request in flight, a probe at a
 *       fixed depth above that reads a queue's latency, and each time the horizon slides the
 *       baseline rises to it and the limit with it; at the knee it reads the baseline itself,
 *       and the lowest of such readings can only bring it down.
 *       Within the horizon the baseline rises only on evidence that the service itself got slower:
 *       the limit was cut by a fifth, and by three standard errors of a window's median, and
 *       latency fell by less than half as much, where a queue's latency would have fallen with it.
 *       Latency that still lags a higher limit, as on a processor-shared service, gives the same
 *       evidence, so the rebase follows neither reading all the way: it undoes half the cut and
 *       reads the latency now as the target queue there. A baseline set to the latency itself
 *       reads no queue, so the limit grows, latency lags again, and the limit ratchets up.
 *   <li><b>Noise read as queueing.</b> The baseline is the lowest of many noisy medians, so it
 *       reads low by about one and a half of their standard errors: on a heavy-tailed service
 *       (lognormal sigma 1) more than the target's slack, and the limit would sit below the
 *       knee with nothing queued. The target's noise floor, measured from each window's spread,
 *       keeps the estimate out of that noise; below lognormal sigma 0.4 it is under the target
 *       anyway. It never exceeds half the limit: a wider spread is the queue's own, as past a
 *       processor-shared service's knee, and read as noise it would let the limit climb on it.
 *   <li><b>Climbing on timeouts.</b> A window in which more than {@code dropTolerance} of releases
 *       were drops shrinks the limit by a tenth and never grows it, whatever the other latencies.
 *       It does not end the start: a service slow for its first seconds times out then, and
 *       Vegas's additive growth from a start-up limit would take minutes to reach a wide pool.
 *   <li><b>Growing when unused.</b> The limit grows on latency only while the peak inflight
 *       reaches 80% of it. An unused limit settles at one and a half times the recent peak, from
 *       above or below: a sudden surge cannot all be admitted on the strength of capacity that
 *       was never tested, and a service that slows at the same load has room before the limit
 *       binds and its slower answers read as queueing.
 * </ul>
 *
 * <p>Not thread-safe: a shedder calls {@link #update} from its ticks, which never overlap. Why each
 * default is what it is, with the scenarios that set it: {@code docs/design.md}.
 */
public final class VegasLimit implements Limit {
  /** How much of the gap between the queue estimate and its target one update closes. */
  private static final double GAIN = 0.5;
  /** Latency this many times the baseline, twice in a row, ends slow start. */
  private static final double SLOW_START_EXIT = 1.5;
  /** Every this many updates while the limit binds, one window runs at a lower limit. */
  private static final int PROBE_EVERY = 32;
  /**
   * The probe window's limit, as a fraction of the limit, at most: deep enough to get below a
   * pool's knee; deeper still when the target queue is more than a fifth of the limit.
   */
  private static final double PROBE_DEPTH = 0.8;
  /**
   * An unused limit settles at this many times the recent peak inflight: room for a service that
   * slows by half as much again at the same load, without admitting a surge twice the usual.
   */
  private static final double UNUSED_HEADROOM = 1.5;
  /** How much of the recent peak inflight survives each update. */
  private static final double PEAK_DECAY = 0.995;
  /** Samples in the first window, at the initial limit: enough for a start-up baseline. */
  private static final int MEASURE_SAMPLES = 60;
  /** Samples in each slow-start window. */
  private static final int SLOW_START_SAMPLES = 20;
  /**
   * Slow start restarts at no less than this share of the limit it reached: it doubles at most
   * once a round trip and sees a rise within about one, so it overshoots the knee by about two
   * doublings at most; a lower estimate read a stall or a slower service, not its own queue.
   */
  private static final double RESTART_FLOOR = 0.25;
  /**
   * The target queue is at least this many standard errors of the window median: a queue smaller
   * than that cannot be told from noise, and the baseline, the lowest of many noisy medians,
   * reads low by about one and a half of them.
   */
  private static final double NOISE_FLOOR = 3;
  /**
   * The noise floor keeps the target under this share of the limit. A spread wide enough to read
   * as more is the queue's own (past a processor-shared service's knee latencies spread with the
   * queue), and a queue of half the limit doubles the latency.
   */
  private static final double NOISE_FLOOR_MAX = 0.5;
  /**
   * A cut of at least this share of the limit, and of three standard errors of the window median,
   * with latency falling by less than half as much, is evidence that the service is slower.
   */
  private static final double REBASE_CUT = 0.2;
  /**
   * The share of each window's standard error in the smoothed noise: about ten windows' worth, so
   * that one window's spread neither lifts the target nor, by dipping, lets a cut within the
   * noise rebase. Where the limit moves, a processor-shared service's latencies spread with it,
   * and a faster estimate would follow that spread up and feed the growth that made it.
   */
  private static final double NOISE_WEIGHT = 0.1;
  /** A sample median's standard error over a normal sample's standard deviation, sqrt(pi/2). */
  private static final double MEDIAN_ERROR = 1.2533;
  /** The interquartile range of a standard normal: a robust spread of the latencies' logs. */
  private static final double NORMAL_IQR = 1.349;

  private final int initialLimit;
  private final int minLimit;
  private final int maxLimit;
  private final long minSamples;
  private final long maxWindowNanos;
  private final double dropTolerance;
  private final long baselineHorizonNanos;
  private final double targetQueue;

  private Phase phase = Phase.MEASURE;
  private double limit;
  private long baseline;
  private double smoothed;
  /**
   * The relative standard error of a window's median, smoothed over about ten windows: how far one
   * reads by chance.
   */
  private double noise;
  private int risesInARow;
  private boolean probing;
  /** The current probe's limit, as a fraction of the limit. */
  private double probeDepth = PROBE_DEPTH;
  private int updatesSinceProbe;
  private double recentPeak;
  /** The last window's median latency, and the rebases so far: for {@link #toString}. */
  private long lastMedian;
  private int rebases;

  // The current window, accumulated over ticks until it has enough samples.
  private final LatencyHistogram window = new LatencyHistogram();
  // Every start-up window whose latency had not yet risen: the service without queueing, pooled.
  private final LatencyHistogram startWindows = new LatencyHistogram();
  private long windowStart = Long.MIN_VALUE;
  private long windowDrops;
  private double windowLatencySum;
  private double startLatencySum;
  private long startLatencyCount;
  private long windowSuccesses;
  private int windowPeak;
  /**
   * The lowest limit in force during the window: the one its peak is judged against. In slow start
   * the limit grows tick by tick, and inflight takes a round trip to follow it.
   */
  private int windowLimit = Integer.MAX_VALUE;

  // A sliding minimum of smoothed medians: one slot per eighth of the horizon.
  private final long[] minSlots = new long[8];
  private long slotStart = Long.MIN_VALUE;
  private int slot;

  // The start-up windows' baseline, and until when it counts alongside the slots.
  private long seed = Long.MAX_VALUE;
  private long seedUntilNanos;

  // The evidence for a genuinely slower service: where a run of decreases began.
  private double cutStartLimit;
  private double cutStartLatency;

  private VegasLimit(Builder b) {
    this.initialLimit = b.initialLimit;
    this.minLimit = b.minLimit;
    this.maxLimit = b.maxLimit;
    this.minSamples = b.minSamples;
    this.maxWindowNanos = b.maxWindow.toNanos();
    this.dropTolerance = b.dropTolerance;
    this.baselineHorizonNanos = b.baselineHorizon.toNanos();
    this.targetQueue = b.targetQueue;
    this.limit = initialLimit;
    java.util.Arrays.fill(minSlots, Long.MAX_VALUE);
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public int initialLimit() {
    return initialLimit;
  }

  @Override
  public int maxLimit() {
    return maxLimit;
  }

  /** The current baseline (no-load) latency estimate in nanoseconds, or 0 before the first. */
  public long baselineNanos() {
    return baseline == Long.MAX_VALUE ? 0 : baseline;
  }

  /** The smoothed median latency in nanoseconds. */
  public long smoothedNanos() {
    return (long) smoothed;
  }

  @Override
  public int update(ControlWindow w) {
    learn(w);
    // Above the host's cap a cut would cut nothing that runs, and the rebase would read the
    // unchanged latency as a slower service.
    limit = Math.min(limit, w.concurrencyCap());
    return current();
  }

  private void learn(ControlWindow w) {
    long now = w.nowNanos();
    if (windowStart == Long.MIN_VALUE) {
      windowStart = now - w.intervalNanos();
    }
    if (w.latencySamples() != 0) {
      windowLatencySum += (double) w.meanLatencyNanos() * w.latencySamples();
      for (int b = 0, n = w.latencyBuckets(); b < n; b++) {
        window.add(b, w.latencyCount(b));
      }
    }
    if (phase == Phase.SLOW_START) {
      slowStart(w);
    }
    windowDrops += w.drops();
    windowSuccesses += w.successes();
    windowPeak = Math.max(windowPeak, w.peakInflight());
    windowLimit = Math.min(windowLimit, w.limit());

    long total = window.count() + windowDrops;
    long needed = phase == Phase.NORMAL ? minSamples
        : (phase == Phase.MEASURE ? MEASURE_SAMPLES : SLOW_START_SAMPLES);
    if (total < needed && now - windowStart < maxWindowNanos) {
      return;
    }
    if (total >= Math.min(needed, 5)) {
      decide(now, w.inflight());
    }
    resetWindow(now);
  }

  private int current() {
    return probing ? Math.max(minLimit, (int) (limit * probeDepth)) : (int) limit;
  }

  private enum Phase {
    /** Measuring the no-load latency at the low initial limit. */
    MEASURE,
    /** Growing the limit by one for each fast answer until latency rises, as TCP's slow start. */
    SLOW_START,
    /** Holding the service's internal queue near its target. */
    NORMAL
  }

  /** Decides on the window just closed; {@code inflight}: requests whose answers are yet to come. */
  private void decide(long now, int inflight) {
    long samples = window.count();
    // Latency is sampled, releases are all counted: the drop share comes from the counts.
    long total = windowSuccesses + windowDrops;
    // The limit binds when requests actually used it. A queue alone is no evidence: it also
    // stands while a backlog drains after the limit has already caught up.
    boolean binding = windowPeak >= 0.8 * windowLimit;
    recentPeak = Math.max(windowPeak, recentPeak * PEAK_DECAY);

    if (windowDrops > dropTolerance * total) {
      // Drops while starting say the service was slow then, not where its knee is: the start goes
      // on, to measure and grow once answers come back in time.
      limit = Math.max(minLimit, limit * 0.9);
      return;
    }
    if (samples == 0) {
      return;
    }
    long median = window.quantile(0.5);
    lastMedian = median;
    switch (phase) {
      case MEASURE:
        baseline = median;
        smoothed = median;
        startWindows.merge(window);
        startLatencySum += windowLatencySum;
        startLatencyCount += samples;
        phase = Phase.SLOW_START;
        return;
      case SLOW_START:
        boolean rose = median > SLOW_START_EXIT * startBaseline();
        if (!rose) {
          startWindows.merge(window);
          startLatencySum += windowLatencySum;
          startLatencyCount += samples;
        }
        if (samples >= minSamples) {
          baseline = Math.min(baseline, median);
        }
        // Two windows in a row, so that one noisy median of a few samples cannot end it early.
        risesInARow = rose ? risesInARow + 1 : 0;
        if (risesInARow >= 2) {
          // Latency rose: the limit went past the knee. The windows before the rise measured the
          // service without queueing, from enough samples to be within a few percent (one window
          // alone can be far off, and a baseline too low would read the service's own latency as
          // queueing). Vegas's estimate of the service's concurrency (limit x latency below the
          // knee / latency now) is where the knee is; restart there, at most half the limit
          // reached and at least RESTART_FLOOR of it. From means: the wait in a queue grows with
          // the mean service time, and a ratio of medians reads a skewed service's concurrency
          // low. The median baseline carries over, so the limit is judged from the start against
          // latency below the knee.
          long pooled = startWindows.quantile(0.5);
          double belowKnee = startLatencyCount == 0 || windowLatencySum <= 0
              ? (double) pooled / median
              : (startLatencySum / startLatencyCount) / (windowLatencySum / samples);
          limit = Math.max(minLimit,
              Math.min(limit / 2, limit * Math.max(belowKnee, RESTART_FLOOR)));
          phase = Phase.NORMAL;
          smoothed = 0;
          java.util.Arrays.fill(minSlots, Long.MAX_VALUE);
          seedStartBaseline(now, pooled);
          startWindows.clear();
          baseline = pooled;
          return;
        }
        if (!binding) {
          // Demand is met below the limit: nothing more to learn by growing it. The start-up
          // windows guide the first normal ones here too, or the first of them, which may already
          // queue, would become the baseline. Their answers are the fastest of the requests
          // started, so those still running count as slower than every answer; with as many
          // running as answered, the median is unknown and full windows take over at once.
          phase = Phase.NORMAL;
          long answered = startWindows.count();
          double q = answered == 0 ? 1 : 0.5 * (answered + inflight) / answered;
          if (q < 1) {
            seedStartBaseline(now, startWindows.quantile(q));
          }
          startWindows.clear();
        }
        return;
      default:
        break;
    }

    if (probing) {
      // One window at a lower concurrency: if latency fell, part of it was queueing, and the
      // baseline was too high. Either way the probe's median is a fair baseline candidate.
      probing = false;
      trackBaseline(now, median);
      return;
    }
    smoothed = smoothed == 0 ? median : 0.5 * smoothed + 0.5 * median;
    double error = medianError(samples);
    noise = noise == 0 ? error : (1 - NOISE_WEIGHT) * noise + NOISE_WEIGHT * error;
    trackBaseline(now, (long) smoothed);
    double ratio = Math.max(1, smoothed / Math.max(1, baseline));
    double queue = limit * (1 - 1 / ratio);
    double noiseShare = NOISE_FLOOR * noise;
    double target = Math.max(Math.max(1.5, targetQueue * limit),
        Math.min(noiseShare, NOISE_FLOOR_MAX) * limit);
    if (binding && ++updatesSinceProbe >= PROBE_EVERY) {
      // At most where Vegas puts the knee, the limit less its target queue: a fixed depth above it
      // reads the latency of a queue on a processor-shared service, and the baseline creeps up.
      updatesSinceProbe = 0;
      probing = true;
      probeDepth = Math.min(PROBE_DEPTH, 1 - target / limit);
      return;
    }

    if (queue > target) {
      double cut = Math.max(REBASE_CUT, noiseShare);
      if (cutStartLimit == 0) {
        cutStartLimit = limit;
        cutStartLatency = smoothed;
      } else if (limit <= (1 - cut) * cutStartLimit && smoothed >= (1 - cut / 2) * cutStartLatency) {
        // Cutting concurrency did not cut latency, beyond the median's noise: the service itself
        // is slower now, or latency still lags a higher limit, as every answer's does on a
        // processor-shared service; a few windows cannot tell the two apart. The rebase follows
        // neither all the way: it undoes half the cut, and the new baseline reads the latency now
        // as the target queue at that limit, so that Vegas neither cuts nor grows on it. The
        // target's share is capped as the noise floor's is: at a limit of two or three, the floor
        // of 1.5 requests would read nearly all of the latency as queue.
        limit = 0.5 * (limit + cutStartLimit);
        rebase((long) (smoothed * (1 - Math.min(target / limit, NOISE_FLOOR_MAX))));
        return;
      }
      // The queue estimate is below the limit, so one update cuts less than half of it.
      limit = Math.max(minLimit, limit - GAIN * (queue - target));
    } else {
      cutStartLimit = 0;
      if (!binding) {
        // An unused limit settles at UNUSED_HEADROOM times the recent peak, from either side.
        double settled = Math.min(maxLimit, Math.max(initialLimit, UNUSED_HEADROOM * recentPeak));
        limit = limit > settled ? Math.max(settled, 0.9 * limit) : Math.min(settled, 1.1 * limit);
      } else {
        double step = Math.min(GAIN * (target - queue), 0.1 * limit + 1);
        limit = Math.min(maxLimit, limit + Math.max(step, 0.5));
      }
    }
  }

  /**
   * Ends the start with a start-up baseline that guides an eighth of the horizon (at least two
   * windows) alongside full windows, enough to bring the limit to the knee, and then gives way to
   * full windows measured there. Left longer, a start-up estimate that happened to be low would
   * keep the limit below the knee for the whole horizon.
   */
  private void seedStartBaseline(long now, long startUp) {
    seed = startUp;
    seedUntilNanos = now + Math.max(baselineHorizonNanos / minSlots.length, 2 * maxWindowNanos);
  }

  /**
   * Slow start by acknowledgement, as TCP's: while the limit binds, each answer no slower than
   * {@value #SLOW_START_EXIT} times the start-up baseline raises the limit by one, so the limit
   * doubles once a round trip of the service however slow it is, and stops growing by itself once
   * answers queue. Where the arrivals would hold more in flight than that at the start-up's mean
   * latency (Little's law), it grows straight toward that demand instead: a round trip of a slow
   * service is long, and doubling once per round trip from 4 to the hundreds a wide slow pool
   * needs takes seconds of shedding. At most a doubling a tick either way.
   */
  private void slowStart(ControlWindow w) {
    long samples = w.latencySamples();
    if (samples == 0 || w.peakInflight() < 0.8 * w.limit()) {
      return;
    }
    int fastest = LatencyHistogram.bucketOf((long) (SLOW_START_EXIT * startBaseline()));
    long fast = 0;
    for (int b = 0; b <= fastest && b < w.latencyBuckets(); b++) {
      fast += w.latencyCount(b);
    }
    // Latency is sampled, answers are all counted: scale the fast share up to every answer.
    double grow = (double) fast * Math.max(w.successes(), samples) / samples;
    if (startLatencyCount > 0 && w.intervalNanos() > 0) {
      // Little's law: what the arrivals would hold in flight at the start-up's mean latency.
      double demand =
          (double) w.arrivals() / w.intervalNanos() * startLatencySum / startLatencyCount;
      grow = Math.max(grow, demand - limit);
    }
    limit = Math.min(maxLimit, limit + Math.min(limit, grow));
  }

  /**
   * The relative standard error of the current window's median: the spread of the latencies'
   * logarithms, read robustly from the quartiles, times sqrt(pi/2) over the square root of the
   * samples. About 4% for 100 samples of a lognormal of sigma 0.3, 12% at sigma 1.
   */
  private double medianError(long samples) {
    long q1 = window.quantile(0.25);
    long q3 = window.quantile(0.75);
    if (q1 <= 0 || q3 <= q1) {
      return 0;
    }
    return MEDIAN_ERROR * Math.log((double) q3 / q1) / NORMAL_IQR / Math.sqrt(samples);
  }

  /** The median of every start-up window so far whose latency had not risen: the most samples. */
  private long startBaseline() {
    return startWindows.count() > 0 ? startWindows.quantile(0.5) : baseline;
  }

  private void trackBaseline(long now, long value) {
    long slotNanos = baselineHorizonNanos / minSlots.length;
    if (slotStart == Long.MIN_VALUE) {
      slotStart = now;
    }
    while (now - slotStart >= slotNanos) {
      slot = (slot + 1) % minSlots.length;
      minSlots[slot] = Long.MAX_VALUE;
      slotStart += slotNanos;
    }
    minSlots[slot] = Math.min(minSlots[slot], value);
    long min = Long.MAX_VALUE;
    for (long v : minSlots) {
      min = Math.min(min, v);
    }
    if (seed != Long.MAX_VALUE && now - seedUntilNanos < 0) {
      min = Math.min(min, seed);
    } else {
      seed = Long.MAX_VALUE;
    }
    baseline = min;
  }

  private void rebase(long value) {
    rebases++;
    seed = Long.MAX_VALUE;
    java.util.Arrays.fill(minSlots, Long.MAX_VALUE);
    minSlots[slot] = value;
    baseline = value;
    cutStartLimit = 0;
  }

  private void resetWindow(long now) {
    window.clear();
    windowStart = now;
    windowDrops = 0;
    windowLatencySum = 0;
    windowSuccesses = 0;
    windowPeak = 0;
    windowLimit = Integer.MAX_VALUE;
  }

  /**
   * The state behind the limit, for logs: the limit (with its fraction), the phase, the last
   * window's median, the smoothed median and the baseline in microseconds, the noise (a window
   * median's relative standard error), how many times the baseline was rebased on evidence of a
   * slower service, and whether a probe window is running.
   */
  @Override
  public String toString() {
    return String.format(java.util.Locale.ROOT,
        "VegasLimit{limit=%.1f, %s, median=%dus, smoothed=%dus, baseline=%dus, noise=%.3f,"
            + " rebases=%d%s}",
        limit, phase, lastMedian / 1000, (long) smoothed / 1000, baselineNanos() / 1000, noise,
        rebases, probing ? ", probing" : "");
  }

  /** Settings for a {@link VegasLimit}; each has a default that suits most services. */
  public static final class Builder {
    private int initialLimit = 4;
    private double targetQueue = 0.15;
    private int minLimit = 1;
    private int maxLimit = 1000;
    private long minSamples = 100;
    private Duration maxWindow = Duration.ofSeconds(2);
    private double dropTolerance = 0.05;
    private Duration baselineHorizon = Duration.ofSeconds(60);

    private Builder() {}

    /**
     * The fraction of the limit allowed to queue inside the service: the slack that keeps every
     * server busy. Default 0.15; at least 1.5 requests whatever the limit. In (0, 1). Well above
     * the few percent by which the baseline, the lowest of many noisy medians, reads low.
     */
    public Builder targetQueue(double v) {
      this.targetQueue = Check.inRange("targetQueue", v, 0, false, 1, false);
      return this;
    }

    /**
     * The limit before any sample. Default 4: low, so that the first window measures the
     * service's latency with little or no queueing inside it; slow start then doubles the limit
     * once a round trip of the service until latency rises.
     */
    public Builder initialLimit(int v) {
      this.initialLimit = Check.atLeast("initialLimit", v, 1);
      return this;
    }

    /** The smallest limit. Default 1. */
    public Builder minLimit(int v) {
      this.minLimit = Check.atLeast("minLimit", v, 1);
      return this;
    }

    /** The largest limit. Default 1000. */
    public Builder maxLimit(int v) {
      this.maxLimit = Check.atLeast("maxLimit", v, 1);
      return this;
    }

    /** Samples needed for one update. Default 100. */
    public Builder minSamples(long v) {
      this.minSamples = Check.atLeast("minSamples", v, 1L);
      return this;
    }

    /** The longest a window gathers samples before updating on whatever it has. Default 2 s. */
    public Builder maxWindow(Duration v) {
      this.maxWindow = Check.positive("maxWindow", v);
      return this;
    }

    /** The fraction of drops in a window above which the limit shrinks. Default 0.05. */
    public Builder dropTolerance(double v) {
      this.dropTolerance = Check.inRange("dropTolerance", v, 0, true, 1, false);
      return this;
    }

    /** How long the lowest latency seen remains the baseline. Default 60 s. */
    public Builder baselineHorizon(Duration v) {
      this.baselineHorizon = Check.atLeast("baselineHorizon", v, Duration.ofSeconds(1));
      return this;
    }

    /**
     * Builds the limit.
     *
     * @throws IllegalArgumentException if {@code maxLimit < minLimit}, or {@code initialLimit} is
     *     outside {@code minLimit..maxLimit}
     */
    public VegasLimit build() {
      if (maxLimit < minLimit) {
        throw new IllegalArgumentException(
            "maxLimit must be at least minLimit (" + minLimit + "), was " + maxLimit);
      }
      if (initialLimit < minLimit || initialLimit > maxLimit) {
        throw new IllegalArgumentException("initialLimit must be in minLimit..maxLimit ("
            + minLimit + ".." + maxLimit + "), was " + initialLimit);
      }
      return new VegasLimit(this);
    }
  }
}
