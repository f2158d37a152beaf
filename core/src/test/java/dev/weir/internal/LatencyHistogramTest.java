package dev.weir.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LatencyHistogramTest {
  private static final long MS = 1_000_000;

  @Test
  void quantilesOfAnEvenSpreadAreWithinAPercentOfTheTruth() {
    // 10 to 30 ms spans a dozen buckets, each up to 12% wide: a bucket's midpoint can be 6% off.
    LatencyHistogram h = new LatencyHistogram();
    int n = 20_000;
    for (int i = 0; i < n; i++) {
      h.record(10 * MS + i * (20 * MS / n));
    }
    for (double q = 0.05; q < 1; q += 0.05) {
      double truth = 10 * MS + q * 20 * MS;
      double error = Math.abs(h.quantile(q) - truth) / truth;
      assertTrue(error < 0.01, "q=" + q + ": " + h.quantile(q) + " vs " + truth);
    }
  }

  @Test
  void quantilesMoveWithinABucketAsTheMixChanges() {
    // A controller compares medians window to window: one more slow sample must move the median
    // a little, not by a bucket's width or not at all.
    LatencyHistogram h = new LatencyHistogram();
    for (int i = 0; i < 100; i++) {
      h.record(17 * MS);
    }
    long before = h.quantile(0.5);
    for (int i = 0; i < 10; i++) {
      h.record(40 * MS);
    }
    long after = h.quantile(0.5);
    assertTrue(after > before, before + " -> " + after);
    assertTrue(after - before < 0.05 * before, before + " -> " + after);
  }

  @Test
  void emptyAndExtremes() {
    LatencyHistogram h = new LatencyHistogram();
    assertEquals(0, h.quantile(0.5));
    h.record(5 * MS);
    long only = h.quantile(0.5);
    int bucket = LatencyHistogram.bucketOf(5 * MS);
    assertEquals(bucket, LatencyHistogram.bucketOf(only), "inside the sample's own bucket");
    assertEquals(bucket, LatencyHistogram.bucketOf(h.quantile(0)));
    assertEquals(bucket, LatencyHistogram.bucketOf(h.quantile(1)));
    h.record(Long.MAX_VALUE);
    assertEquals(LatencyHistogram.valueOf(LatencyHistogram.BUCKETS - 1), h.quantile(1));
  }
}
