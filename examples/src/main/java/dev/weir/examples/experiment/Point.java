package dev.weir.examples.experiment;

import dev.weir.examples.LoadReport;
import dev.weir.examples.Status;
import dev.weir.examples.TierStats;
import java.util.Objects;

/**
 * What one guard did at one offered load: the numbers the experiment's table and charts show.
 * Immutable.
 *
 * @param guard the guard's name
 * @param load the offered load as a multiple of capacity
 * @param offeredPerSecond the requests sent per second in the measured window
 * @param topTier the most important tier sent
 * @param topGoodput successes per second of {@code topTier}
 * @param totalGoodput successes per second of all tiers, as counted, not summed from the tiers'
 *     rates: two runs with the same count have exactly the same total
 * @param topSuccess the share of {@code topTier}'s requests that succeeded, 0..1
 * @param topP50Millis the median latency of {@code topTier}'s successes, NaN if none
 * @param topP99Millis the 99th percentile latency of {@code topTier}'s successes, NaN if none
 * @param statusShares the share of all requests that ended in each {@link Status}, by ordinal
 */
record Point(String guard, double load, double offeredPerSecond, int topTier, double topGoodput,
    double totalGoodput, double topSuccess, double topP50Millis, double topP99Millis,
    double[] statusShares) {

  Point {
    Objects.requireNonNull(guard, "guard");
    if (statusShares.length != Status.values().length) {
      throw new IllegalArgumentException("statusShares must have one entry per Status");
    }
    statusShares = statusShares.clone();
  }

  /** The point of a load-generator report. */
  static Point of(String guard, double load, LoadReport report) {
    int top = report.byTier().keySet().iterator().next(); // tier order: the first is the top
    TierStats t = report.tier(top);
    TierStats all = report.total();
    double[] shares = new double[Status.values().length];
    long sent = all.sent();
    for (Status s : Status.values()) {
      shares[s.ordinal()] = sent == 0 ? 0 : (double) all.count(s) / sent;
    }
    return new Point(guard, load, all.offeredPerSecond(), top, t.goodputPerSecond(),
        all.goodputPerSecond(), t.successRatio(), t.latencyMillis(0.50),
        t.latencyMillis(0.99), shares);
  }

  /** Successes per second of every tier but {@code topTier}. */
  double otherGoodput() {
    return totalGoodput - topGoodput;
  }

  /** The share of all requests that ended in {@code status}, 0..1. */
  double share(Status status) {
    return statusShares[status.ordinal()];
  }

  @Override
  public double[] statusShares() {
    return statusShares.clone();
  }
}
