package dev.weir.sim;

import java.util.Arrays;
import java.util.Locale;

/**
 * Per-tier statistics of the requests that arrived in a window of a simulation: offered load,
 * goodput, rejections by reason, and the latency of successes.
 */
public final class Report {
  final Scenario scenario;
  final String guard;
  final double fromSeconds;
  final double toSeconds;
  private final long[][] counts = new long[7][Answer.values().length];
  private final long[][] latencies = new long[7][];
  private final int[] latencyCount = new int[7];
  private final long[] maxAnswer = new long[7];

  Report(Scenario scenario, String guard, double fromSeconds, double toSeconds) {
    this.scenario = scenario;
    this.guard = guard;
    this.fromSeconds = fromSeconds;
    this.toSeconds = toSeconds;
    for (int t = 0; t < 7; t++) {
      latencies[t] = new long[256];
    }
  }

  void add(int tier, Answer a, long latency) {
    for (int t : new int[] {tier, 6}) {
      counts[t][a.ordinal()]++;
      if (latency >= 0) {
        maxAnswer[t] = Math.max(maxAnswer[t], latency);
      }
      if (a == Answer.OK) {
        if (latencyCount[t] == latencies[t].length) {
          latencies[t] = Arrays.copyOf(latencies[t], latencyCount[t] * 2);
        }
        latencies[t][latencyCount[t]++] = latency;
      }
    }
  }

  void finish() {
    for (int t = 0; t < 7; t++) {
      Arrays.sort(latencies[t], 0, latencyCount[t]);
    }
  }

  private static int row(int tier) {
    return tier < 0 ? 6 : tier;
  }

  private double seconds() {
    return toSeconds - fromSeconds;
  }

  /** Requests offered by {@code tier} (-1 for all tiers). */
  public long offered(int tier) {
    return Arrays.stream(counts[row(tier)]).sum();
  }

  /** Requests of {@code tier} (-1 for all) that got {@code answer}. */
  public long count(int tier, Answer answer) {
    return counts[row(tier)][answer.ordinal()];
  }

  /** Successful requests per second for {@code tier} (-1 for all). */
  public double goodput(int tier) {
    return count(tier, Answer.OK) / seconds();
  }

  /** Offered requests per second for {@code tier} (-1 for all). */
  public double offeredRate(int tier) {
    return offered(tier) / seconds();
  }

  /** The fraction of {@code tier}'s requests (-1 for all) that succeeded; NaN if none. */
  public double successRatio(int tier) {
    long offered = offered(tier);
    return offered == 0 ? Double.NaN : (double) count(tier, Answer.OK) / offered;
  }

  /** A latency quantile of {@code tier}'s successes, in nanoseconds; 0 if none. */
  public long latencyQuantileNanos(int tier, double q) {
    int r = row(tier);
    int c = latencyCount[r];
    if (c == 0) {
      return 0;
    }
    int idx = (int) Math.min(c - 1, Math.max(0, Math.ceil(q * c) - 1));
    return latencies[r][idx];
  }

  /** The longest time a request of {@code tier} (-1 for all) waited for its answer. */
  public long maxAnswerNanos(int tier) {
    return maxAnswer[row(tier)];
  }

  /** Rejections of every kind (all but OK and PENDING). */
  public long rejections(int tier) {
    return offered(tier) - count(tier, Answer.OK) - count(tier, Answer.PENDING);
  }

  /** A table with one row per tier that had traffic, and a total. */
  public String table() {
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(Locale.ROOT, "%s behind %s, arrivals in %.0f-%.0f s%n",
        scenario.name, guard, fromSeconds, toSeconds));
    sb.append(String.format(Locale.ROOT, "%-5s %9s %9s %7s %7s %7s %7s %7s %7s %8s %8s%n",
        "tier", "offered/s", "goodput/s", "ok%", "shed", "q-full", "q-tmo", "deadln",
        "cl-tmo", "p50 ms", "p99 ms"));
    for (int t = 0; t <= 6; t++) {
      int tier = t == 6 ? -1 : t;
      if (offered(tier) == 0) {
        continue;
      }
      sb.append(String.format(Locale.ROOT,
          "%-5s %9.1f %9.1f %7.2f %7d %7d %7d %7d %7d %8.1f %8.1f%n",
          t == 6 ? "all" : Integer.toString(t), offeredRate(tier), goodput(tier),
          100 * successRatio(tier), count(tier, Answer.SHED), count(tier, Answer.QUEUE_FULL),
          count(tier, Answer.QUEUE_TIMEOUT), count(tier, Answer.DEADLINE),
          count(tier, Answer.CLIENT_TIMEOUT) + count(tier, Answer.PENDING),
          latencyQuantileNanos(tier, 0.5) / 1e6, latencyQuantileNanos(tier, 0.99) / 1e6));
    }
    return sb.toString();
  }

  @Override
  public String toString() {
    return table();
  }
}
