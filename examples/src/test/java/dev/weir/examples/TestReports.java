package dev.weir.examples;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Load-generator reports built from counts, for the tests of other packages. */
public final class TestReports {
  private TestReports() {}

  /**
   * A report of a {@code seconds} window in which each tier's requests all succeeded and ended in
   * it, one latency of 10 ms each.
   *
   * @param tierAndOk pairs of a tier and its successes, such as {@code 1, 4, 5, 6}
   */
  public static LoadReport allOk(double seconds, long... tierAndOk) {
    List<TierStats> tiers = new ArrayList<>();
    for (int i = 0; i < tierAndOk.length; i += 2) {
      long ok = tierAndOk[i + 1];
      long[] counts = new long[Status.values().length];
      counts[Status.OK.ordinal()] = ok;
      long[] latencies = new long[(int) ok];
      Arrays.fill(latencies, 10_000_000L);
      tiers.add(new TierStats((int) tierAndOk[i], seconds, counts, latencies));
    }
    return new LoadReport(seconds, tiers, 0);
  }

  /**
   * A one-second report of tiers 1 and 5: each tier's successes (all ended in the second, tier 1's
   * at {@code tier1Millis} each, tier 5's at 10 ms) and its requests that timed out.
   */
  public static LoadReport second(long tier1Ok, long tier1TimedOut, double tier1Millis,
      long tier5Ok, long tier5TimedOut) {
    List<TierStats> tiers = new ArrayList<>();
    long[][] okAndFailed = {{1, tier1Ok, tier1TimedOut}, {5, tier5Ok, tier5TimedOut}};
    for (long[] t : okAndFailed) {
      long[] counts = new long[Status.values().length];
      counts[Status.OK.ordinal()] = t[1];
      counts[Status.TIMEOUT.ordinal()] = t[2];
      long[] latencies = new long[(int) t[1]];
      java.util.Arrays.fill(latencies, t[0] == 1 ? (long) (tier1Millis * 1e6) : 10_000_000L);
      tiers.add(new TierStats((int) t[0], 1, counts, latencies));
    }
    return new LoadReport(1, tiers, 0);
  }
}
