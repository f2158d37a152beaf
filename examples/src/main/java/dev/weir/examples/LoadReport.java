package dev.weir.examples;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The result of a {@link LoadGenerator} run: per-tier stats of the measured window. Immutable. */
public final class LoadReport {
  private final double seconds;
  private final Map<Integer, TierStats> byTier;
  private final TierStats total;
  private final long maxSendLagNanos;
  private final List<LoadReport> slices;

  LoadReport(double seconds, List<TierStats> tiers, long maxSendLagNanos) {
    this(seconds, tiers, maxSendLagNanos, List.of());
  }

  LoadReport(double seconds, List<TierStats> tiers, long maxSendLagNanos,
      List<LoadReport> slices) {
    this.seconds = seconds;
    Map<Integer, TierStats> map = new TreeMap<>();
    for (TierStats t : tiers) {
      map.put(t.tier(), t);
    }
    this.byTier = Collections.unmodifiableMap(map);
    this.total = TierStats.merge(new ArrayList<>(map.values()), seconds);
    this.maxSendLagNanos = maxSendLagNanos;
    this.slices = List.copyOf(slices);
  }

  /**
   * The measured window cut into slices of the length the generator was given, in order, each by
   * the requests scheduled in it (successes ended in it, for its goodput); empty unless asked.
   */
  public List<LoadReport> slices() {
    return slices;
  }

  /** The length of the measured window in seconds. */
  public double seconds() {
    return seconds;
  }

  /** The stats of each tier that was sent, by tier, in tier order. */
  public Map<Integer, TierStats> byTier() {
    return byTier;
  }

  /** The stats of {@code tier}; an empty one if the tier sent nothing. */
  public TierStats tier(int tier) {
    TierStats t = byTier.get(tier);
    return t != null ? t : new TierStats(tier, seconds, new long[Status.values().length],
        new long[0]);
  }

  /** The stats of all tiers together. */
  public TierStats total() {
    return total;
  }

  /**
   * How late, at worst, a request left the generator compared with its scheduled time, in
   * milliseconds: small when the generator kept its open-loop schedule.
   */
  public double maxSendLagMillis() {
    return maxSendLagNanos / 1e6;
  }
}
