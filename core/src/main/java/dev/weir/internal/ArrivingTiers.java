package dev.weir.internal;

import dev.weir.Priority;

/**
 * Which tiers count as arriving: those with at least {@value #SHARE} of recent arrivals. A share,
 * so the answer is the same at 50 and at 50,000 RPS, and a stray request of a more important tier
 * does not change it. The overload policy and the rejector both spare the most important tier
 * arriving, and must agree on which it is.
 */
public final class ArrivingTiers {
  /** The share of recent arrivals from which a tier counts as arriving. */
  public static final double SHARE = 0.01;

  private ArrivingTiers() {}

  /**
   * The most important tier with at least {@value #SHARE} of the arrivals in {@code tierArrivals}
   * (indexed by tier, any non-negative weights), or -1 if there are none.
   */
  public static int mostImportant(double[] tierArrivals) {
    double total = 0;
    for (double v : tierArrivals) {
      total += v;
    }
    if (total <= 0) {
      return -1;
    }
    for (int tier = 0; tier < Priority.TIERS; tier++) {
      if (tierArrivals[tier] >= SHARE * total) {
        return tier;
      }
    }
    return -1;
  }
}
