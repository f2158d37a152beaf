package dev.weir.examples;

import java.util.ArrayList;
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
      java.util.Arrays.fill(latencies, 10_000_000L);
      tiers.add(new TierStats((int) tierAndOk[i], seconds, counts, latencies));
    }
    return new LoadReport(seconds, tiers, 0);
  }
}
