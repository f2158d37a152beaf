package dev.weir.sim;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * How fast the service runs over time, as a multiple of its full speed: a step function (ramps are
 * steps of a quarter second). 0 is a stall: nothing progresses, as in a stop-the-world GC pause.
 */
public final class Speed {
  private static final double RAMP_STEP = 0.25;

  private final double[] at;
  private final double[] value;
  private final String description;

  private Speed(double[] at, double[] value, String description) {
    this.at = at;
    this.value = value;
    this.description = description;
  }

  /** Full speed throughout. */
  public static Speed constant() {
    return new Speed(new double[] {0}, new double[] {1}, "constant");
  }

  /** Full speed, {@code factor} from {@code down} to {@code up} seconds, then full speed. */
  public static Speed step(double down, double up, double factor) {
    return new Speed(new double[] {0, down, up}, new double[] {1, factor, 1},
        String.format(Locale.ROOT, "x%.2f from %.0f to %.0f s", factor, down, up));
  }

  /**
   * Full speed, a linear ramp down to {@code factor} from {@code t0} to {@code t1} seconds, held
   * until {@code t2}, a ramp back up to full speed by {@code t3}.
   */
  public static Speed ramp(double t0, double t1, double t2, double t3, double factor) {
    List<double[]> steps = new ArrayList<>();
    steps.add(new double[] {0, 1});
    for (double t = t0; t < t1 - 1e-9; t += RAMP_STEP) {
      steps.add(new double[] {t, 1 - (1 - factor) * (t - t0 + RAMP_STEP) / (t1 - t0)});
    }
    steps.add(new double[] {t1, factor});
    for (double t = t2; t < t3 - 1e-9; t += RAMP_STEP) {
      steps.add(new double[] {t, factor + (1 - factor) * (t - t2) / (t3 - t2)});
    }
    steps.add(new double[] {t3, 1});
    return of(steps, String.format(Locale.ROOT, "ramp to x%.2f over %.0f-%.0f s, back over "
        + "%.0f-%.0f s", factor, t0, t1, t2, t3));
  }

  /** Stalls of {@code length} seconds every {@code period} seconds from {@code first} until
   * {@code until}. */
  public static Speed stalls(double first, double period, double length, double until) {
    List<double[]> steps = new ArrayList<>();
    steps.add(new double[] {0, 1});
    for (double t = first; t < until; t += period) {
      steps.add(new double[] {t, 0});
      steps.add(new double[] {t + length, 1});
    }
    return of(steps, String.format(Locale.ROOT, "%.0f ms stalls every %.1f s", length * 1e3,
        period));
  }

  private static Speed of(List<double[]> steps, String description) {
    return new Speed(steps.stream().mapToDouble(s -> s[0]).toArray(),
        steps.stream().mapToDouble(s -> s[1]).toArray(), description);
  }

  /** The speed at {@code t} seconds. */
  public double at(double t) {
    int i = Arrays.binarySearch(at, t);
    if (i < 0) {
      i = -i - 2;
    }
    return value[Math.max(0, i)];
  }

  /** The mean speed over [from, to) seconds. */
  public double mean(double from, double to) {
    double sum = 0;
    for (int i = 0; i < at.length; i++) {
      double a = Math.max(from, at[i]);
      double b = Math.min(to, i + 1 < at.length ? at[i + 1] : Double.POSITIVE_INFINITY);
      if (b > a) {
        sum += (b - a) * value[i];
      }
    }
    return sum / (to - from);
  }

  /** The lowest speed at any time. */
  public double min() {
    return Arrays.stream(value).min().orElse(1);
  }

  /** Whether the speed never changes. */
  public boolean isConstant() {
    return at.length == 1;
  }

  /** The times at which the speed changes, in seconds (the first is 0). */
  double[] changes() {
    return at.clone();
  }

  @Override
  public String toString() {
    return description;
  }
}
