package dev.weir.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class TierStatsTest {
  private static long[] counts(long ok, long tooMany, long unavailable, long timeout, long other) {
    return new long[] {ok, tooMany, unavailable, timeout, other};
  }

  private static long[] millis(long... ms) {
    long[] nanos = new long[ms.length];
    for (int i = 0; i < ms.length; i++) {
      nanos[i] = ms[i] * 1_000_000;
    }
    return nanos;
  }

  @Test
  void percentilesAreNearestRankOfUnsortedInput() {
    long[] values = new long[100];
    for (int i = 0; i < 100; i++) {
      values[i] = (100 - i) * 1_000_000L; // 100 ms down to 1 ms: the constructor must sort
    }
    TierStats t = new TierStats(1, 1, counts(100, 0, 0, 0, 0), values);
    assertEquals(1.0, t.latencyMillis(0));
    assertEquals(50.0, t.latencyMillis(0.5));
    assertEquals(99.0, t.latencyMillis(0.99));
    assertEquals(100.0, t.latencyMillis(1));
  }

  @Test
  void percentileOfFewValues() {
    assertEquals(7, TierStats.percentile(new long[] {7}, 0.99));
    assertEquals(3, TierStats.percentile(new long[] {1, 3, 9}, 0.5));
    assertEquals(9, TierStats.percentile(new long[] {1, 3, 9}, 0.99));
    assertTrue(Double.isNaN(TierStats.percentile(new long[0], 0.5)));
    assertThrows(IllegalArgumentException.class, () -> TierStats.percentile(new long[] {1}, 1.5));
    assertThrows(IllegalArgumentException.class,
        () -> TierStats.percentile(new long[] {1}, Double.NaN));
  }

  @Test
  void goodputCountsOnlySuccessesPerSecondOfTheWindow() {
    // 10 s window: 300 ok, 200 shed, 100 unavailable, 350 timed out, 50 other.
    TierStats t = new TierStats(5, 10, counts(300, 200, 100, 350, 50), new long[300]);
    assertEquals(1000, t.sent());
    assertEquals(100.0, t.offeredPerSecond(), 1e-9);
    assertEquals(30.0, t.goodputPerSecond(), 1e-9);
    assertEquals(0.3, t.successRatio(), 1e-9);
    assertEquals(350, t.count(Status.TIMEOUT));
    assertEquals(5, t.tier());
  }

  @Test
  void noSuccessesMeansNoLatencyAndZeroGoodput() {
    TierStats t = new TierStats(1, 2, counts(0, 0, 0, 40, 0), new long[0]);
    assertEquals(0.0, t.goodputPerSecond());
    assertEquals(20.0, t.offeredPerSecond(), 1e-9);
    assertTrue(Double.isNaN(t.latencyMillis(0.5)));
  }

  @Test
  void mergeSumsCountsAndPoolsLatencies() {
    TierStats a = new TierStats(1, 2, counts(2, 1, 0, 0, 0), millis(10, 30));
    TierStats b = new TierStats(5, 2, counts(2, 0, 3, 1, 1), millis(20, 40));
    TierStats all = TierStats.merge(List.of(a, b), 2);
    assertEquals(TierStats.ALL, all.tier());
    assertEquals(10, all.sent());
    assertEquals(4, all.count(Status.OK));
    assertEquals(3, all.count(Status.UNAVAILABLE));
    assertEquals(2.0, all.goodputPerSecond(), 1e-9);
    assertEquals(20.0, all.latencyMillis(0.5));
    assertEquals(40.0, all.latencyMillis(0.99));
  }

  @Test
  void reportGivesAnEmptyTierForATierNeverSent() {
    LoadReport r = new LoadReport(4, List.of(new TierStats(1, 4, counts(8, 0, 0, 0, 0),
        millis(1, 2, 3, 4, 5, 6, 7, 8))), 0);
    assertEquals(0, r.tier(3).sent());
    assertEquals(2.0, r.tier(1).goodputPerSecond(), 1e-9);
    assertEquals(2.0, r.total().goodputPerSecond(), 1e-9);
  }

  @Test
  void rejectsNonsense() {
    assertThrows(IllegalArgumentException.class,
        () -> new TierStats(1, 0, counts(0, 0, 0, 0, 0), new long[0]));
    assertThrows(IllegalArgumentException.class,
        () -> new TierStats(1, 1, new long[2], new long[0]));
  }

  @Test
  void latenciesAsTextAreADashWhenThereAreNone() {
    assertEquals("-", TierStats.millisText(Double.NaN, 1));
    assertEquals("86.8", TierStats.millisText(86.84, 1));
    assertEquals("87", TierStats.millisText(86.84, 0));
  }

  @Test
  void statusOfCodes() {
    assertEquals(Status.OK, Status.ofCode(200));
    assertEquals(Status.OK, Status.ofCode(204));
    assertEquals(Status.TOO_MANY_REQUESTS, Status.ofCode(429));
    assertEquals(Status.UNAVAILABLE, Status.ofCode(503));
    assertEquals(Status.OTHER, Status.ofCode(500));
    assertEquals(Status.OTHER, Status.ofCode(302));
  }
}
