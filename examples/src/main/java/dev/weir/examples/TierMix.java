package dev.weir.examples;

import dev.weir.Priority;
import java.util.Arrays;
import java.util.Random;

/**
 * The share of requests in each tier, written {@code "1:50,5:50"} (tier:weight, weights relative).
 * Immutable.
 */
public final class TierMix {
  private final int[] tiers;
  private final double[] cumulative; // cumulative[i] = share of tiers[0..i], the last is 1

  private TierMix(int[] tiers, double[] weights) {
    this.tiers = tiers;
    this.cumulative = new double[weights.length];
    double total = Arrays.stream(weights).sum();
    double sum = 0;
    for (int i = 0; i < weights.length; i++) {
      sum += weights[i];
      cumulative[i] = sum / total;
    }
    cumulative[weights.length - 1] = 1.0;
  }

  /**
   * Parses {@code "tier:weight,tier:weight,..."}, such as {@code "1:50,5:50"}; tiers are 0..5,
   * each at most once, weights positive.
   *
   * @throws IllegalArgumentException with a message saying what is wrong
   */
  public static TierMix parse(String text) {
    String[] parts = text.split(",", -1);
    int[] tiers = new int[parts.length];
    double[] weights = new double[parts.length];
    boolean[] seen = new boolean[Priority.TIERS];
    for (int i = 0; i < parts.length; i++) {
      String[] tw = parts[i].split(":", -1);
      if (tw.length != 2) {
        throw new IllegalArgumentException("mix must be tier:weight pairs such as 1:50,5:50, was '"
            + text + "'");
      }
      int tier = (int) Args.parseDouble("mix tier", tw[0], 0, Priority.TIERS - 1);
      if (tier != Double.parseDouble(tw[0].trim())) {
        throw new IllegalArgumentException("mix tier must be an integer, was '" + tw[0] + "'");
      }
      if (seen[tier]) {
        throw new IllegalArgumentException("mix lists tier " + tier + " twice: '" + text + "'");
      }
      seen[tier] = true;
      tiers[i] = tier;
      weights[i] = Args.parseDouble("mix weight", tw[1], Double.MIN_VALUE, 1e9);
    }
    return new TierMix(tiers, weights);
  }

  /** Draws a tier. */
  public int sample(Random random) {
    double u = random.nextDouble();
    for (int i = 0; i < cumulative.length - 1; i++) {
      if (u < cumulative[i]) {
        return tiers[i];
      }
    }
    return tiers[tiers.length - 1];
  }

  /** The tiers, in the order given. */
  public int[] tiers() {
    return tiers.clone();
  }

  /** The share of {@code tier}, 0 if absent. */
  public double share(int tier) {
    for (int i = 0; i < tiers.length; i++) {
      if (tiers[i] == tier) {
        return cumulative[i] - (i == 0 ? 0 : cumulative[i - 1]);
      }
    }
    return 0;
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < tiers.length; i++) {
      sb.append(i == 0 ? "" : ", ").append(Math.round(share(tiers[i]) * 100))
          .append("% tier ").append(tiers[i]);
    }
    return sb.toString();
  }
}
