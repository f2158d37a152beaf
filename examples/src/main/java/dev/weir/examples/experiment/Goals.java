package dev.weir.examples.experiment;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The experiment's goals for Weir, checked against what was measured, never tuned for: at 1.5x
 * and 3x capacity Weir's top-tier success and total goodput are the best of all guards (ties
 * count as best), and its top-tier P99 stays within twice the unloaded P99 at every load.
 */
final class Goals {
  /** The loads at which Weir should beat every other guard. */
  static final List<Double> KEY_LOADS = List.of(1.5, 3.0);
  /** How far the top tier's P99 may rise over the unloaded P99. */
  static final double P99_FACTOR = 2.0;

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
   * @param baseline the unloaded point, or null if none was measured
   */
  static List<Goal> check(List<Point> points, Point baseline) {
    List<Goal> goals = new ArrayList<>();
    for (double load : KEY_LOADS) {
      Optional<Point> weir = find(points, Guard.WEIR, load);
      List<Point> others = points.stream()
          .filter(p -> p.load() == load && !p.guard().equals(Guard.WEIR)).toList();
      if (weir.isEmpty() || others.isEmpty()) {
        continue;
      }
      Point w = weir.get();
      Point bestTop = others.stream()
          .max((a, b) -> Double.compare(a.topSuccess(), b.topSuccess())).orElseThrow();
      goals.add(new Goal(String.format(Locale.ROOT,
          "at %sx, weir's tier-%d success is the best of all guards", fmt(load), w.topTier()),
          w.topSuccess() >= bestTop.topSuccess(), String.format(Locale.ROOT,
              "weir %.1f%%, best other %s %.1f%%", 100 * w.topSuccess(), bestTop.guard(),
              100 * bestTop.topSuccess())));
      Point bestTotal = others.stream()
          .max((a, b) -> Double.compare(a.totalGoodput(), b.totalGoodput())).orElseThrow();
      goals.add(new Goal(String.format(Locale.ROOT,
          "at %sx, weir's total goodput is the best of all guards", fmt(load)),
          w.totalGoodput() >= bestTotal.totalGoodput(), String.format(Locale.ROOT,
              "weir %.0f/s, best other %s %.0f/s", w.totalGoodput(), bestTotal.guard(),
              bestTotal.totalGoodput())));
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
          + " at every load", baseline.topTier(), P99_FACTOR, baseline.topP99Millis(),
          fmt(baseline.load())), over.isEmpty(), over.isEmpty()
              ? String.format(Locale.ROOT, "worst %.1f ms at %sx, bound %.1f ms", worst,
                  fmt(worstLoad), bound)
              : String.format(Locale.ROOT, "bound %.1f ms; over it at %s", bound,
                  String.join(", ", over))));
    }
    return goals;
  }

  private static Optional<Point> find(List<Point> points, String guard, double load) {
    return points.stream().filter(p -> p.guard().equals(guard) && p.load() == load).findFirst();
  }

  /** A load such as {@code 1.5} or {@code 3}, without a trailing {@code .0}. */
  static String fmt(double load) {
    return load == Math.rint(load) ? String.valueOf((long) load) : String.valueOf(load);
  }
}
