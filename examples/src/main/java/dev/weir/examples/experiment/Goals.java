package dev.weir.examples.experiment;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The experiment's goals for Weir, checked against what was measured, never tuned for: at 1.5x
 * and 3x capacity Weir's top-tier success and total goodput are the best of all guards, and its
 * top-tier P99 stays within twice the unloaded P99 at every load, in every run.
 *
 * <p><b>Best, when measured more than once.</b> At the key loads the experiment can run every
 * guard several times, the i-th runs of all guards sharing a seed. Weir is then the best unless
 * some other guard is <em>measurably</em> better: its mean lead over Weir across the paired runs
 * is more than twice the standard error of that lead. A guard that leads in every run by the same
 * margin is measurably better however small the margin; one that leads in some runs and trails in
 * others by as much is not. With one run each, this is a plain comparison, and a tie counts as
 * best. The pairing matters: different seeds move every guard's goodput together by more than the
 * guards differ, and the differences within a seed cancel that out.
 */
final class Goals {
  /** The loads at which Weir should beat every other guard. */
  static final List<Double> KEY_LOADS = List.of(1.5, 3.0);
  /** How far the top tier's P99 may rise over the unloaded P99. */
  static final double P99_FACTOR = 2.0;
  /** How many standard errors another guard's mean lead must exceed to count as better. */
  static final double STANDARD_ERRORS = 2.0;

  /**
   * One goal and whether it was met.
   *
   * @param goal the goal in words
   * @param met whether the measurements meet it
   * @param evidence the numbers that decide it
   */
  record Goal(String goal, boolean met, String evidence) {}

  private Goals() {}

  /**
   * Checks the goals that the points can decide; a goal whose load or guard was not run, or with
   * no baseline, is left out.
   *
   * @param points every run; the runs of one guard at one load are in run order, and at any load
   *     every guard has the same number of runs, the i-th of each sharing a seed
   * @param baseline the unloaded point, or null if none was measured
   * @throws IllegalArgumentException if two guards have different numbers of runs at a load
   */
  static List<Goal> check(List<Point> points, Point baseline) {
    List<Goal> goals = new ArrayList<>();
    for (double load : KEY_LOADS) {
      List<Point> weir = runs(points, Guard.WEIR, load);
      Map<String, List<Point>> others = new LinkedHashMap<>();
      for (Point p : points) {
        // Weir's handler is Weir too: the goals compare Weir with the other guards.
        if (p.load() == load && !p.guard().equals(Guard.WEIR)
            && !p.guard().equals(Guard.WEIR_HANDLER)) {
          others.computeIfAbsent(p.guard(), g -> new ArrayList<>()).add(p);
        }
      }
      if (weir.isEmpty() || others.isEmpty()) {
        continue;
      }
      for (List<Point> runs : others.values()) {
        if (runs.size() != weir.size()) {
          throw new IllegalArgumentException(String.format(Locale.ROOT,
              "at %sx %s has %d runs and weir %d; the runs are compared in pairs", fmt(load),
              runs.get(0).guard(), runs.size(), weir.size()));
        }
      }
      goals.add(best(load, String.format(Locale.ROOT, "weir's tier-%d success",
          weir.get(0).topTier()), weir, others, p -> 100 * p.topSuccess(), "%.1f", "%"));
      goals.add(best(load, "weir's total goodput", weir, others, Point::totalGoodput, "%.0f",
          "/s"));
    }
    List<Point> weirPoints = points.stream().filter(p -> p.guard().equals(Guard.WEIR)).toList();
    if (baseline != null && !Double.isNaN(baseline.topP99Millis()) && !weirPoints.isEmpty()) {
      double bound = P99_FACTOR * baseline.topP99Millis();
      List<String> over = new ArrayList<>();
      double worst = 0;
      double worstLoad = 0;
      for (Point p : weirPoints) {
        double p99 = p.topP99Millis();
        if (Double.isNaN(p99) || p99 > bound) {
          over.add(String.format(Locale.ROOT, "%sx: %.0f ms", fmt(p.load()), p99));
        }
        if (!(p99 <= worst)) {
          worst = p99;
          worstLoad = p.load();
        }
      }
      goals.add(new Goal(String.format(Locale.ROOT,
          "weir's tier-%d P99 stays within %.0fx the unloaded P99 (%.1f ms at %sx, no guard)"
          + " at every load, in every run", baseline.topTier(), P99_FACTOR, baseline.topP99Millis(),
          fmt(baseline.load())), over.isEmpty(), over.isEmpty()
              ? String.format(Locale.ROOT, "worst %.1f ms at %sx, bound %.1f ms", worst,
                  fmt(worstLoad), bound)
              : String.format(Locale.ROOT, "bound %.1f ms; over it at %s", bound,
                  String.join(", ", over))));
    }
    return goals;
  }

  /**
   * Whether no other guard is measurably better than Weir at {@code load} by {@code metric}. The
   * evidence compares Weir with the other guard of the highest mean, or with the guard that beat
   * it if one did.
   *
   * @param number how to print one value, such as {@code %.0f}
   * @param unit what follows a printed value, such as {@code /s}
   */
  private static Goal best(double load, String what, List<Point> weir,
      Map<String, List<Point>> others, ToDoubleFunction<Point> metric, String number,
      String unit) {
    String highest = null;
    double highestMean = Double.NEGATIVE_INFINITY;
    String better = null;
    double worstExcess = 0;
    Map<String, double[]> leads = new LinkedHashMap<>();
    for (Map.Entry<String, List<Point>> e : others.entrySet()) {
      double mean = mean(e.getValue(), metric);
      if (highest == null || mean > highestMean) {
        highest = e.getKey();
        highestMean = mean;
      }
      double[] lead = leads(e.getValue(), weir, metric);
      leads.put(e.getKey(), lead);
      double excess = mean(lead) - STANDARD_ERRORS * standardError(lead);
      if (excess > worstExcess) {
        worstExcess = excess;
        better = e.getKey();
      }
    }
    boolean met = better == null;
    String shown = met ? highest : better;
    List<Point> other = others.get(shown);
    String goal = String.format(Locale.ROOT, "at %sx, %s is the best of all guards", fmt(load),
        what);
    if (weir.size() == 1) {
      return new Goal(goal, met, String.format(Locale.ROOT, "weir %s, best other %s %s",
          value(metric.applyAsDouble(weir.get(0)), number, unit), shown,
          value(metric.applyAsDouble(other.get(0)), number, unit)));
    }
    double[] lead = leads.get(shown);
    return new Goal(goal, met, String.format(Locale.ROOT,
        "means of %d paired runs: weir %s, %s %s; its lead over weir %s, standard error %s: %s",
        weir.size(), listed(weir, metric, number, unit), shown, listed(other, metric, number, unit),
        value(mean(lead), "%+.1f", unit), value(standardError(lead), "%.1f", unit),
        met ? "not measurably better" : "measurably better"));
  }

  /** How far each of {@code other}'s runs was above weir's run with the same seed. */
  private static double[] leads(List<Point> other, List<Point> weir,
      ToDoubleFunction<Point> metric) {
    double[] lead = new double[weir.size()];
    for (int i = 0; i < lead.length; i++) {
      lead[i] = metric.applyAsDouble(other.get(i)) - metric.applyAsDouble(weir.get(i));
    }
    return lead;
  }

  private static String value(double v, String number, String unit) {
    return String.format(Locale.ROOT, number, v) + unit;
  }

  /** The mean, then each run: {@code 390.3/s (392, 389, 390)}. */
  private static String listed(List<Point> runs, ToDoubleFunction<Point> metric, String number,
      String unit) {
    StringBuilder b = new StringBuilder(value(mean(runs, metric), "%.1f", unit)).append(" (");
    for (int i = 0; i < runs.size(); i++) {
      b.append(i == 0 ? "" : ", ")
          .append(String.format(Locale.ROOT, number, metric.applyAsDouble(runs.get(i))));
    }
    return b.append(')').toString();
  }

  /** The mean of {@code metric} over {@code runs}; NaN for none. */
  static double mean(List<Point> runs, ToDoubleFunction<Point> metric) {
    return runs.stream().mapToDouble(metric).average().orElse(Double.NaN);
  }

  /** The mean of {@code xs}; NaN for none. */
  static double mean(double[] xs) {
    double sum = 0;
    for (double x : xs) {
      sum += x;
    }
    return sum / xs.length;
  }

  /** The standard error of the mean: 0 for one value, where there is no spread to go by. */
  static double standardError(double[] xs) {
    if (xs.length < 2) {
      return 0;
    }
    double m = mean(xs);
    double squares = 0;
    for (double x : xs) {
      squares += (x - m) * (x - m);
    }
    return Math.sqrt(squares / (xs.length - 1) / xs.length);
  }

  /** The runs of {@code guard} at {@code load}, in run order. */
  static List<Point> runs(List<Point> points, String guard, double load) {
    return points.stream().filter(p -> p.guard().equals(guard) && p.load() == load).toList();
  }

  /** A load such as {@code 1.5} or {@code 3}, without a trailing {@code .0}. */
  static String fmt(double load) {
    return load == Math.rint(load) ? String.valueOf((long) load) : String.valueOf(load);
  }
}
