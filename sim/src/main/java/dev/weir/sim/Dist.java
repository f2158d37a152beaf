package dev.weir.sim;

import java.util.Locale;
import java.util.SplittableRandom;

/** A distribution of work (seconds at full speed) per request. */
public abstract class Dist {
  private static final double Z99 = 2.326;
  private Dist() {}

  /** One draw, in seconds. */
  abstract double sample(SplittableRandom r);

  /** The mean, in seconds. */
  public abstract double mean();

  /** The 99th percentile, in seconds (approximate for the bimodal). */
  public abstract double p99();

  /** The same shape scaled to another mean. */
  public abstract Dist withMean(double mean);

  /** Lognormal with {@code mean} and {@code sigma} (0: constant). */
  public static Dist lognormal(double mean, double sigma) {
    return new Dist() {
      final double mu = Math.log(mean) - sigma * sigma / 2;

      @Override
      double sample(SplittableRandom r) {
        return sigma == 0 ? mean : Math.exp(mu + sigma * gaussian(r));
      }

      @Override
      public double mean() {
        return mean;
      }

      @Override
      public double p99() {
        return sigma == 0 ? mean : Math.exp(mu + Z99 * sigma);
      }

      @Override
      public Dist withMean(double m) {
        return lognormal(m, sigma);
      }

      @Override
      public String toString() {
        return String.format(Locale.ROOT, "lognormal(%s, s=%.2f)", ms(mean), sigma);
      }
    };
  }

  /**
   * Pareto with shape {@code alpha}, truncated at 100 times the untruncated mean: heavy-tailed,
   * and for alpha below 2 of infinite variance up to the truncation. {@code mean} is the
   * untruncated mean; {@link #mean()} is the truncated one, a little lower.
   */
  public static Dist pareto(double mean, double alpha) {
    if (!(alpha > 1)) {
      throw new IllegalArgumentException("alpha must be > 1, was " + alpha);
    }
    double xm = mean * (alpha - 1) / alpha;
    double cap = 100 * mean;
    // E[min(X, H)] = E[X] - E[(X - H)+], and E[(X - H)+] = xm^a H^(1-a) / (a - 1).
    double truncatedMean = mean - Math.pow(xm, alpha) * Math.pow(cap, 1 - alpha) / (alpha - 1);
    return new Dist() {
      @Override
      double sample(SplittableRandom r) {
        double u = 1 - r.nextDouble();
        return Math.min(cap, xm / Math.pow(u, 1 / alpha));
      }

      @Override
      public double mean() {
        return truncatedMean;
      }

      @Override
      public double p99() {
        return Math.min(cap, xm / Math.pow(0.01, 1 / alpha));
      }

      @Override
      public Dist withMean(double m) {
        return pareto(m * mean / truncatedMean, alpha);
      }

      @Override
      public String toString() {
        return String.format(Locale.ROOT, "pareto(%s, a=%.1f)", ms(truncatedMean), alpha);
      }
    };
  }

  /**
   * Bimodal, as a cache makes it: a hit with probability {@code hitShare} takes about {@code hit},
   * a miss about {@code miss} (each lognormal with sigma 0.25).
   */
  public static Dist bimodal(double hitShare, double hit, double miss) {
    Dist h = lognormal(hit, 0.25);
    Dist m = lognormal(miss, 0.25);
    double mean = hitShare * hit + (1 - hitShare) * miss;
    return new Dist() {
      @Override
      double sample(SplittableRandom r) {
        return r.nextDouble() < hitShare ? h.sample(r) : m.sample(r);
      }

      @Override
      public double mean() {
        return mean;
      }

      @Override
      public double p99() {
        return hitShare >= 0.99 ? h.p99() : m.p99();
      }

      @Override
      public Dist withMean(double mm) {
        double k = mm / mean;
        return bimodal(hitShare, hit * k, miss * k);
      }

      @Override
      public String toString() {
        return String.format(Locale.ROOT, "bimodal(%.0f%% %s, miss %s)", 100 * hitShare, ms(hit),
            ms(miss));
      }
    };
  }

  static String ms(double seconds) {
    return seconds >= 0.1 ? String.format(Locale.ROOT, "%.2f s", seconds)
        : String.format(Locale.ROOT, "%.2f ms", seconds * 1e3);
  }

  static double gaussian(SplittableRandom r) {
    double u1 = 1 - r.nextDouble();
    double u2 = r.nextDouble();
    return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  }
}
