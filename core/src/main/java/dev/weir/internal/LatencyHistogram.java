package dev.weir.internal;

/**
 * A log-linear histogram of nanosecond latencies: 8 sub-buckets per power of two, so a bucket's
 * midpoint is within about 6% of any value in it. Used per control window, by one thread at a time.
 *
 * <p>The bucket scheme ({@link #bucketOf}, {@link #BUCKETS}) is shared with the striped recorder
 * that fills it, so the hot path only increments a counter.
 */
public final class LatencyHistogram {
  private static final int SUB_BITS = 3;
  private static final int SUB = 1 << SUB_BITS;
  /** Values below 2^MIN_EXP ns (~1 µs) share bucket 0. */
  private static final int MIN_EXP = 10;
  /** Values at or above 2^MAX_EXP ns (~275 s) share the last bucket. */
  private static final int MAX_EXP = 38;
  /** The number of buckets. */
  public static final int BUCKETS = (MAX_EXP - MIN_EXP) * SUB + 1;

  private final long[] counts = new long[BUCKETS];
  private long count;
  private long sum;

  /** The bucket a latency falls in. */
  public static int bucketOf(long nanos) {
    if (nanos < (1L << MIN_EXP)) {
      return 0;
    }
    int exp = 63 - Long.numberOfLeadingZeros(nanos);
    if (exp >= MAX_EXP) {
      return BUCKETS - 1;
    }
    int sub = (int) (nanos >>> (exp - SUB_BITS)) & (SUB - 1);
    return (exp - MIN_EXP) * SUB + sub;
  }

  /** A representative value (the midpoint) of a bucket. */
  public static long valueOf(int bucket) {
    if (bucket <= 0) {
      return (1L << MIN_EXP) / 2;
    }
    if (bucket >= BUCKETS - 1) {
      return 1L << MAX_EXP;
    }
    return (lowOf(bucket) + lowOf(bucket + 1)) / 2;
  }

  /** Empties the histogram. */
  public void clear() {
    java.util.Arrays.fill(counts, 0);
    count = 0;
    sum = 0;
  }

  /** Adds {@code n} samples to a bucket. */
  public void add(int bucket, long n) {
    counts[bucket] += n;
    count += n;
  }

  /** Adds all of {@code other}'s samples to this one. */
  public void merge(LatencyHistogram other) {
    for (int i = 0; i < BUCKETS; i++) {
      counts[i] += other.counts[i];
    }
    count += other.count;
    sum += other.sum;
  }

  /** Adds to the running sum used by {@link #mean()}. */
  public void addSum(long nanos) {
    sum += nanos;
  }

  /** Records one latency. */
  public void record(long nanos) {
    add(bucketOf(nanos), 1);
    addSum(nanos);
  }

  /** The samples in one bucket. */
  public long countIn(int bucket) {
    return counts[bucket];
  }

  /** The number of samples. */
  public long count() {
    return count;
  }

  /** The mean latency, or 0 if empty. */
  public long mean() {
    return count == 0 ? 0 : sum / count;
  }

  /** The smallest bucket's value, or {@code Long.MAX_VALUE} if empty. */
  public long min() {
    for (int i = 0; i < BUCKETS; i++) {
      if (counts[i] != 0) {
        return valueOf(i);
      }
    }
    return Long.MAX_VALUE;
  }

  /**
   * The {@code q} quantile, or 0 if empty: interpolated within its bucket, as if the bucket's
   * samples were spread evenly across it. A bucket is up to 12% wide; returning its midpoint would
   * move a median in steps that large, which a controller comparing two medians reads as a change
   * of load.
   */
  public long quantile(double q) {
    if (count == 0) {
      return 0;
    }
    double rank = Math.max(0, Math.min(1, q)) * count;
    long seen = 0;
    for (int i = 0; i < BUCKETS; i++) {
      long c = counts[i];
      if (c != 0 && seen + c >= rank) {
        if (i == 0 || i == BUCKETS - 1) {
          return valueOf(i);
        }
        double within = Math.max(0, Math.min(1, (rank - seen) / c));
        long low = lowOf(i);
        long high = lowOf(i + 1);
        return Math.min(high - 1, low + Math.round(within * (high - low)));
      }
      seen += c;
    }
    return valueOf(BUCKETS - 1);
  }

  /** The smallest value of a bucket, for buckets 1 to BUCKETS - 1. */
  private static long lowOf(int bucket) {
    int exp = bucket / SUB + MIN_EXP;
    int sub = bucket % SUB;
    return (1L << exp) + ((long) sub << (exp - SUB_BITS));
  }
}
