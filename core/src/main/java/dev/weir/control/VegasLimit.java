package dev.weir.control;

import dev.weir.ControlWindow;
import dev.weir.Limit;
import dev.weir.internal.LatencyHistogram;
import java.time.Duration;

/**
 * An inflight limit tuned from latency, after TCP Vegas as modified by Uber's Cinnamon.
 *
 * <p>Each update compares a recent, smoothed median latency with a <em>baseline</em>: the
 * no-load latency. Their ratio estimates how much of the limit is queueing inside the service
 * ({@code queue = limit * (1 - baseline / latency)}). While that queue is small the limit grows; when
 * it is large the limit shrinks toward the concurrency that would bring latency back to the
 * baseline; in between it holds. Drops and timeouts shrink it multiplicatively.
 *
 * <p>The failure modes of other adaptive limits, and what this one does about each:
 * <ul>
 *   <li><b>Noise at low traffic.</b> An update needs {@code minSamples} samples, gathered over as
 *       many ticks as it takes (up to {@code maxWindow}); too few samples change nothing, so the
 *       limit neither collapses nor wanders at 5 RPS.
 *   <li><b>Baseline drift.</b> The baseline is the lowest smoothed median seen in a sliding
 *       horizon, so it cannot creep up with latency while the service is loaded. It moves up only
 *       on evidence that the service itself got slower: the limit was cut by a fifth or more and
 *       latency did not fall with it, which queueing would have made it do.
 *   <li><b>Climbing on timeouts.</b> A window in which more than {@code dropTolerance} of releases
 *       were drops shrinks the limit and never grows it, whatever the latency of the rest.
 *   <li><b>Growing when unused.</b> The limit grows only while it binds: while the peak inflight
 *       came near it or requests waited in the queue. An application that never uses its limit
 *       cannot inflate it.
 * </ul>
 *
 * <p>Not thread-safe: a shedder calls {@link #update} from its ticks, which never overlap.
 */
public final class VegasLimit implements Limit {
  private final int initialLimit;
  private final int minLimit;
  private final int maxLimit;
  private final long minSamples;
  private final long maxWindowNanos;
  private final double dropTolerance;
  private final long baselineHorizonNanos;

  private double limit;
  private long baseline;
  private double smoothed;

  // The current window, accumulated over ticks until it has enough samples.
  private final LatencyHistogram window = new LatencyHistogram();
  private long windowStart = Long.MIN_VALUE;
  private long windowDrops;
  private int windowPeak;
  private boolean windowQueued;

  // A sliding minimum of smoothed medians: one slot per eighth of the horizon.
  private final long[] minSlots = new long[8];
  private long slotStart = Long.MIN_VALUE;
  private int slot;

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
    long now = w.nowNanos();
    if (windowStart == Long.MIN_VALUE) {
      windowStart = now - w.intervalNanos();
    }
    mergeInto(window, w);
    windowDrops += w.drops();
    windowPeak = Math.max(windowPeak, w.peakInflight());
    windowQueued |= !w.queueEmptied() || w.queueLength() > 0;

    long samples = window.count();
    long elapsed = now - windowStart;
    if (samples + windowDrops < minSamples) {
      if (elapsed < maxWindowNanos || samples + windowDrops < minSamples / 4) {
        if (elapsed >= maxWindowNanos * 4) {
          resetWindow(now);
        }
        return (int) limit;
      }
    }
    decide(now, w.limit());
    resetWindow(now);
    return (int) limit;
  }

  private void decide(long now, int currentLimit) {
    long samples = window.count();
    long total = samples + windowDrops;
    boolean binding = windowQueued || windowPeak >= 0.8 * currentLimit;

    if (windowDrops > dropTolerance * total) {
      limit = Math.max(minLimit, limit * 0.9);
      return;
    }
    if (samples == 0) {
      return;
    }
    long median = window.quantile(0.5);
    smoothed = smoothed == 0 ? median : 0.5 * smoothed + 0.5 * median;
    trackBaseline(now, (long) smoothed);

    double ratio = smoothed / Math.max(1, baseline);
    double queue = limit * (1 - 1 / ratio);
    double alpha = Math.max(2, 0.10 * limit);
    double beta = Math.max(4, 0.25 * limit);

    if (queue > beta) {
      if (cutStartLimit == 0) {
        cutStartLimit = limit;
        cutStartLatency = smoothed;
      } else if (limit <= 0.8 * cutStartLimit && smoothed >= 0.9 * cutStartLatency) {
        // Cutting concurrency did not cut latency: the service itself is slower now.
        rebase((long) smoothed);
        return;
      }
      double target = limit * (1 + alpha / limit) / ratio;
      limit = Math.max(minLimit, Math.max(limit * 0.7, target));
    } else {
      cutStartLimit = 0;
      if (queue < alpha && binding) {
        limit = Math.min(maxLimit, limit + Math.max(1, limit * 0.05));
      }
    }
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
    baseline = min;
  }

  private void rebase(long value) {
    java.util.Arrays.fill(minSlots, Long.MAX_VALUE);
    minSlots[slot] = value;
    baseline = value;
    cutStartLimit = 0;
  }

  private void resetWindow(long now) {
    window.clear();
    windowStart = now;
    windowDrops = 0;
    windowPeak = 0;
    windowQueued = false;
  }

  private static void mergeInto(LatencyHistogram target, ControlWindow w) {
    if (w.latencySamples() != 0) {
      target.merge(w.latencyHistogram());
    }
  }

  @Override
  public String toString() {
    return "VegasLimit{limit=" + (int) limit + ", baseline=" + baseline / 1000 + "us, smoothed="
        + (long) smoothed / 1000 + "us}";
  }

  /** Settings for a {@link VegasLimit}; each has a default that suits most services. */
  public static final class Builder {
    private int initialLimit = 20;
    private int minLimit = 1;
    private int maxLimit = 1000;
    private long minSamples = 100;
    private Duration maxWindow = Duration.ofSeconds(2);
    private double dropTolerance = 0.05;
    private Duration baselineHorizon = Duration.ofSeconds(60);

    private Builder() {}

    /** The limit before any sample. Default 20. */
    public Builder initialLimit(int v) {
      this.initialLimit = v;
      return this;
    }

    /** The smallest limit. Default 1. */
    public Builder minLimit(int v) {
      this.minLimit = v;
      return this;
    }

    /** The largest limit. Default 1000. */
    public Builder maxLimit(int v) {
      this.maxLimit = v;
      return this;
    }

    /** Samples needed for one update. Default 100. */
    public Builder minSamples(long v) {
      this.minSamples = v;
      return this;
    }

    /** The longest a window gathers samples before updating on whatever it has. Default 2 s. */
    public Builder maxWindow(Duration v) {
      this.maxWindow = v;
      return this;
    }

    /** The fraction of drops in a window above which the limit shrinks. Default 0.05. */
    public Builder dropTolerance(double v) {
      this.dropTolerance = v;
      return this;
    }

    /** How long the lowest latency seen remains the baseline. Default 60 s. */
    public Builder baselineHorizon(Duration v) {
      this.baselineHorizon = v;
      return this;
    }

    public VegasLimit build() {
      if (minLimit < 1) {
        throw new IllegalArgumentException("minLimit must be at least 1, was " + minLimit);
      }
      if (maxLimit < minLimit) {
        throw new IllegalArgumentException(
            "maxLimit must be at least minLimit (" + minLimit + "), was " + maxLimit);
      }
      if (initialLimit < minLimit || initialLimit > maxLimit) {
        throw new IllegalArgumentException("initialLimit must be in minLimit..maxLimit ("
            + minLimit + ".." + maxLimit + "), was " + initialLimit);
      }
      if (minSamples < 1) {
        throw new IllegalArgumentException("minSamples must be at least 1, was " + minSamples);
      }
      if (maxWindow == null || maxWindow.isNegative() || maxWindow.isZero()) {
        throw new IllegalArgumentException("maxWindow must be positive, was " + maxWindow);
      }
      if (!(dropTolerance >= 0 && dropTolerance < 1)) {
        throw new IllegalArgumentException("dropTolerance must be in [0, 1), was " + dropTolerance);
      }
      if (baselineHorizon == null || baselineHorizon.compareTo(Duration.ofSeconds(1)) < 0) {
        throw new IllegalArgumentException(
            "baselineHorizon must be at least 1s, was " + baselineHorizon);
      }
      return new VegasLimit(this);
    }
  }
}
