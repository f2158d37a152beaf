package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CohortsTest {
  private static final long HOUR = Duration.ofHours(1).toMillis();
  /** A fixed wall-clock instant, 2026-01-01T00:30:00Z, so results do not depend on today. */
  private static final long T = 1_767_227_400_000L;

  private final Cohorts cohorts = Cohorts.rotating();

  @Test
  void everyCohortIsInRange() {
    for (int i = 0; i < 100_000; i++) {
      int c = cohorts.cohort("user-" + i, T + i * 7_919L * HOUR);
      assertTrue(c >= 0 && c < Priority.COHORTS, "cohort " + c);
    }
    for (String odd : new String[] {"\u0000", "\uffff", "é", "🙂", " ", "x".repeat(100_000)}) {
      int c = cohorts.cohort(odd, T);
      assertTrue(c >= 0 && c < Priority.COHORTS);
    }
    assertTrue(cohorts.cohort("user-1") >= 0 && cohorts.cohort("user-1") < Priority.COHORTS);
    // Negative epoch (before 1970) still maps in range.
    int c = cohorts.cohort("user-1", -123_456_789L);
    assertTrue(c >= 0 && c < Priority.COHORTS);
  }

  @Test
  void aMissingKeyGetsARandomCohortSoATierCanBeShedInPart() {
    java.util.Set<Integer> seen = new java.util.HashSet<>();
    for (int i = 0; i < 2_000; i++) {
      int a = cohorts.cohort(null, T);
      int b = cohorts.cohort("", T);
      assertTrue(a >= 0 && a < Priority.COHORTS && b >= 0 && b < Priority.COHORTS);
      seen.add(a);
      seen.add(b);
    }
    assertTrue(seen.size() > 120, "only " + seen.size() + " cohorts for keyless requests");
  }

  @Test
  void stableForTheSameKeyWithinAPeriod() {
    for (int i = 0; i < 1_000; i++) {
      String key = "user-" + i;
      int c = cohorts.cohort(key, T);
      // Anywhere in the same hour, and for an equal key built differently.
      assertEquals(c, cohorts.cohort(key, T - 30 * 60_000L));
      assertEquals(c, cohorts.cohort(key, T + 29 * 60_000L + 59_999));
      assertEquals(c, cohorts.cohort(new StringBuilder("user-").append(i), T));
    }
  }

  @Test
  void mostKeysMoveWhenThePeriodRotates() {
    int keys = 10_000;
    int moved = 0;
    for (int i = 0; i < keys; i++) {
      String key = "user-" + i;
      if (cohorts.cohort(key, T) != cohorts.cohort(key, T + HOUR)) {
        moved++;
      }
    }
    // An independent reshuffle keeps 1/128 of keys in place by chance; demand at least 95% move.
    assertTrue(moved > keys * 95 / 100, moved + " of " + keys + " moved");
  }

  @Test
  void aKeyVisitsManyCohortsOverManyPeriods() {
    Set<Integer> seen = new HashSet<>();
    for (int period = 0; period < 1_000; period++) {
      seen.add(cohorts.cohort("always-the-same-user", T + period * HOUR));
    }
    // 1000 draws from 128 cohorts miss any given cohort with probability (127/128)^1000 ~ 0.04%.
    assertTrue(seen.size() > 120, "visited only " + seen.size() + " cohorts");
  }

  @Test
  void roughlyUniformOverTheCohorts() {
    int keys = 128_000;
    int[] counts = new int[Priority.COHORTS];
    for (int i = 0; i < keys; i++) {
      counts[cohorts.cohort("user-" + i, T)]++;
    }
    double expected = (double) keys / Priority.COHORTS;
    double chi2 = 0;
    for (int c : counts) {
      chi2 += (c - expected) * (c - expected) / expected;
    }
    // 127 degrees of freedom: mean 127, sd ~16; 250 is far beyond any honest hash's fluctuation
    // and far below a skewed one's (a hash using only 64 cohorts scores ~128,000).
    assertTrue(chi2 < 250, "chi-square " + chi2);
    for (int c : counts) {
      assertTrue(c > expected / 2 && c < expected * 2, "cohort count " + c);
    }
  }

  @Test
  void sequentialNumericKeysAreSpreadToo() {
    // Numeric ids hash to consecutive String hash codes; the mixing must still spread them.
    int[] counts = new int[Priority.COHORTS];
    for (int i = 0; i < 12_800; i++) {
      counts[cohorts.cohort(Integer.toString(i), T)]++;
    }
    for (int c : counts) {
      assertTrue(c > 40 && c < 200, "cohort count " + c);
    }
  }

  @Test
  void independentInstancesWithTheSamePeriodAgree() {
    Cohorts a = Cohorts.rotating(Duration.ofMinutes(10));
    Cohorts b = Cohorts.rotating(Duration.ofMinutes(10));
    Cohorts hourly = Cohorts.rotating(Duration.ofHours(1));
    int differ = 0;
    for (int i = 0; i < 1_000; i++) {
      String key = "k" + i;
      long t = T + i * 600_000L;
      assertEquals(a.cohort(key, t), b.cohort(key, t));
      if (a.cohort(key, t) != hourly.cohort(key, t)) {
        differ++;
      }
    }
    assertTrue(differ > 900, "different periods should give different mappings: " + differ);
    assertEquals(Cohorts.rotating().cohort("k", T), Cohorts.rotating(Cohorts.DEFAULT_ROTATION)
        .cohort("k", T));
  }

  @Test
  void theMappingIsAFixedFunctionOfKeyAndPeriod() {
    // Pinned: services on other JVMs, and later versions of this library, must agree, or users
    // shed by one service would be served by the next.
    int[] pinned = {10, 91, 86, 26, 92};
    for (int i = 0; i < pinned.length; i++) {
      assertEquals(pinned[i], Cohorts.rotating().cohort("user-" + i, T), "user-" + i);
    }
  }
}
