package dev.weir.examples;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What the clients of one tier (or of all tiers) saw during a measured window: how many requests
 * were sent, how each ended, and the latency of the successful ones. Immutable.
 *
 * <p>Goodput counts only successes, per second of the window: a server that answers every request
 * after the client has given up has a throughput but no goodput. It counts the successes that
 * <em>ended</em> in the window, whenever they were sent: the useful work the server did there.
 * Counting instead the successes among the requests sent in the window credits a guard whose
 * queue is still growing when the window ends with work it does after it: in one run, 413 req/s
 * from a service that can do 400. The other counts (status mix, latencies) are of the requests
 * sent in the window.
 */
public final class TierStats {
  /** The tier of a summary over all tiers. */
  public static final int ALL = -1;

  private final int tier;
  private final double seconds;
  private final long[] counts; // indexed by Status.ordinal()
  private final long[] sortedLatencyNanos;
  private final long endedOk;

  /**
   * @param tier the tier, or {@link #ALL}
   * @param seconds the length of the measured window
   * @param counts how many requests ended in each {@link Status}, indexed by ordinal
   * @param successLatencyNanos the latencies of the {@link Status#OK} requests, in any order
   */
  TierStats(int tier, double seconds, long[] counts, long[] successLatencyNanos) {
    this(tier, seconds, counts, successLatencyNanos, counts[Status.OK.ordinal()]);
  }

  /**
   * @param endedOk the successes that ended in the window, sent in it or before
   */
  TierStats(int tier, double seconds, long[] counts, long[] successLatencyNanos, long endedOk) {
    if (!(seconds > 0)) {
      throw new IllegalArgumentException("seconds must be positive, was " + seconds);
    }
    if (counts.length != Status.values().length) {
      throw new IllegalArgumentException("counts must have one entry per Status");
    }
    this.tier = tier;
    this.seconds = seconds;
    this.counts = counts.clone();
    this.sortedLatencyNanos = successLatencyNanos.clone();
    Arrays.sort(sortedLatencyNanos);
    this.endedOk = endedOk;
  }

  /**
   * Sums several stats into one, with tier {@link #ALL}: several tiers of the same window, or the
   * same tier over consecutive windows {@code seconds} long together.
   */
  public static TierStats merge(List<TierStats> parts, double seconds) {
    long[] counts = new long[Status.values().length];
    int latencies = 0;
    long endedOk = 0;
    for (TierStats s : parts) {
      for (int i = 0; i < counts.length; i++) {
        counts[i] += s.counts[i];
      }
      latencies += s.sortedLatencyNanos.length;
      endedOk += s.endedOk;
    }
    long[] all = new long[latencies];
    int at = 0;
    for (TierStats s : parts) {
      System.arraycopy(s.sortedLatencyNanos, 0, all, at, s.sortedLatencyNanos.length);
      at += s.sortedLatencyNanos.length;
    }
    return new TierStats(ALL, seconds, counts, all, endedOk);
  }

  /** The tier, or {@link #ALL}. */
  public int tier() {
    return tier;
  }

  /** The requests sent in the window. */
  public long sent() {
    long sum = 0;
    for (long c : counts) {
      sum += c;
    }
    return sum;
  }

  /** The requests that ended in {@code status}. */
  public long count(Status status) {
    return counts[status.ordinal()];
  }

  /** Requests sent per second. */
  public double offeredPerSecond() {
    return sent() / seconds;
  }

  /** Successes that ended in the window, per second of it (see the class comment). */
  public double goodputPerSecond() {
    return endedOk / seconds;
  }

  /** The successes that ended in the window, whenever they were sent. */
  public long endedOk() {
    return endedOk;
  }

  /** The share of sent requests that succeeded, 0..1 (0 if none was sent). */
  public double successRatio() {
    long sent = sent();
    return sent == 0 ? 0 : (double) count(Status.OK) / sent;
  }

  /**
   * The {@code quantile} (0..1) of the latency of successful requests in milliseconds, by the
   * nearest-rank method; {@code NaN} if none succeeded.
   */
  public double latencyMillis(double quantile) {
    return percentile(sortedLatencyNanos, quantile) / 1e6;
  }

  /**
   * A latency from {@link #latencyMillis} as text with {@code decimals} decimals, or "-" if there
   * was none ({@code NaN}): for the tables the demo and the benches print.
   */
  public static String millisText(double ms, int decimals) {
    return Double.isNaN(ms) ? "-" : String.format(Locale.ROOT, "%." + decimals + "f", ms);
  }

  /**
   * The nearest-rank percentile of sorted values: the smallest value such that at least {@code
   * quantile} of the values are less than or equal to it; {@code NaN} if there are none.
   */
  static double percentile(long[] sorted, double quantile) {
    if (!(quantile >= 0 && quantile <= 1)) {
      throw new IllegalArgumentException("quantile must be in 0..1, was " + quantile);
    }
    if (sorted.length == 0) {
      return Double.NaN;
    }
    // 1-based; the slack keeps 0.99 * 100 (which is 99.00000000000001) at rank 99
    int rank = (int) Math.ceil(quantile * sorted.length - 1e-9);
    return sorted[Math.max(0, rank - 1)];
  }
}
