package dev.weir.sim;

import dev.weir.ControlWindow;
import dev.weir.LoadShedder;
import dev.weir.Priority;
import dev.weir.Rejector;
import dev.weir.Timer;
import dev.weir.control.Limits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * The yardstick for a corpus scenario: the best fixed inflight limit, found by a sweep, behind an
 * ideal priority cut.
 *
 * <p><b>The ideal cut</b> knows the scenario: the offered rate and tier mix at every moment, and
 * the capacity (the service model's, times its speed averaged over the second around the moment,
 * less the CPU that rejections cost). Every control tick it sets the cutoff that admits the highest
 * priorities up to {@code h} times that capacity and sheds the rest, cohort by cohort (cohorts are
 * uniform). {@code h} is 1.05 in the sweep over limits, so that a short queue keeps the service
 * busy between Poisson lulls; 1.0 and 1.15 are then tried at the best limit. Like any cutoff it
 * sheds only what would have to wait. With one priority for every request there is nothing to cut
 * between, and it sheds nothing: the fixed limit and the queue timeout decide.
 *
 * <p><b>The sweep</b> tries fixed limits at 0.5, 0.75, 1, 1.25, 1.6, 2.2 and 3.2 times the service's
 * concurrency at full use (capacity times unloaded latency, Little's law), on up by half while the
 * largest is best (three times at most), then the midpoints either side of the best. The oracle is
 * the (limit, h) with the most goodput in the measured window; within a thousandth of it, the one
 * with the lowest top-tier P99.
 *
 * <p>Its weaknesses: the cut is computed from averages, not from the arrivals that occurred, so
 * Poisson bursts are left to the limit and the queue; the limit is fixed over the whole run, so on a
 * capacity change it is a compromise a well-adapting guard can beat; the sweep is coarse (3 to
 * 14 runs), so the true best fixed limit may be a little better; it maximises goodput alone,
 * not top-tier latency, and may pick a limit with a long queue inside the service; and on one seed,
 * so a guard can beat it by luck of the draw.
 */
public final class Oracle {
  private static final double[] COARSE = {0.5, 0.75, 1, 1.25, 1.6, 2.2, 3.2};
  /** The cut admits this multiple of the capacity in the sweep over limits. */
  static final double CUT = 1.05;
  /** The other cuts tried at the best limit. */
  private static final double[] CUT_ALTERNATIVES = {1.0, 1.15};

  private Oracle() {}

  /** The result of a sweep: every limit tried, and its goodput. */
  public static final class Sweep {
    /** Goodput (requests per second in the window) by fixed limit. */
    public final TreeMap<Integer, Double> goodput = new TreeMap<>();
    /** The top tier's P99 in milliseconds by fixed limit; NaN where none of it was answered OK. */
    public final TreeMap<Integer, Double> topP99Ms = new TreeMap<>();
    public int best;
    /** The best cut's admitted load, as a multiple of the capacity. */
    public double headroom;
    public Report bestReport;
    /** The best run's first {@value Corpus#WARM} s: its start, which the window leaves out. */
    public Report bestStart;
    /** Every run, in the order tried, while the sweep runs. */
    private final List<Run> runs = new ArrayList<>();
  }

  /** The limits the coarse sweep tries for {@code c}. */
  static List<Integer> coarse(Corpus.Case c) {
    double base = c.scenario.model().concurrency();
    List<Integer> limits = new ArrayList<>();
    for (double m : COARSE) {
      int l = Math.max(1, (int) Math.round(base * m));
      if (!limits.contains(l)) {
        limits.add(l);
      }
    }
    return limits;
  }

  /** Sweeps fixed limits behind the ideal cut on {@code c}. */
  public static Sweep sweep(Corpus.Case c) {
    Sweep s = new Sweep();
    List<Integer> limits = coarse(c);
    for (int l : limits) {
      tryLimit(c, s, l, CUT);
    }
    // Best at the top of the range: go on up while it helps.
    for (int k = 0; k < 3 && s.best == limits.get(limits.size() - 1); k++) {
      int up = (int) Math.ceil(s.best * 1.5);
      limits.add(up);
      tryLimit(c, s, up, CUT);
    }
    int i = limits.indexOf(s.best);
    if (i > 0) {
      tryLimit(c, s, (limits.get(i - 1) + s.best) / 2, CUT);
    }
    if (i < limits.size() - 1) {
      tryLimit(c, s, (limits.get(i + 1) + s.best + 1) / 2, CUT);
    }
    int best = s.best;
    if (c.scenario.fixedPriority() < 0) {
      for (double h : CUT_ALTERNATIVES) {
        tryLimit(c, s, best, h);
      }
    }
    // The rows keep their sweeps for the whole corpus: not every run's reports.
    s.runs.clear();
    return s;
  }

  private static void tryLimit(Corpus.Case c, Sweep s, int limit, double headroom) {
    if (limit < 1 || (headroom == CUT && s.goodput.containsKey(limit))) {
      return;
    }
    SimResult run =
        Simulation.run(c.scenario, "oracle", (t, sc) -> shedder(t, c, limit, headroom));
    Report r = run.report(Corpus.WARM, Corpus.END);
    double g = r.goodput(-1);
    int top = c.topTier();
    if (headroom == CUT) {
      s.goodput.put(limit, g);
      s.topP99Ms.put(limit, r.successRatio(top) > 0
          ? r.latencyQuantileNanos(top, 0.99) / 1e6 : Double.NaN);
    }
    s.runs.add(new Run(limit, headroom, r, run.report(0, Corpus.WARM)));
    // The best of every run so far, judged afresh: comparing each run with the best before it
    // alone drifts (a run within a thousandth and faster replaces it, then another within a
    // thousandth of that one), and can miss a faster run within a thousandth of the most.
    double most = s.runs.stream().mapToDouble(x -> x.report().goodput(-1)).max().orElseThrow();
    Run best = null;
    for (Run x : s.runs) {
      if (x.report().goodput(-1) >= most * 0.999
          && (best == null || topP99(x.report(), top) < topP99(best.report(), top))) {
        best = x;
      }
    }
    s.best = best.limit();
    s.headroom = best.headroom();
    s.bestReport = best.report();
    s.bestStart = best.start();
  }

  /** The top tier's P99 in nanoseconds; with none of it answered OK, no P99 at all (infinite). */
  private static double topP99(Report r, int top) {
    return r.successRatio(top) > 0 ? r.latencyQuantileNanos(top, 0.99) : Double.POSITIVE_INFINITY;
  }

  /** One run of the sweep: a limit, a cut, and what it got. */
  private record Run(int limit, double headroom, Report report, Report start) {}

  /** A fixed limit of {@code limit} behind the ideal cut of {@code c}, on {@code timer}. */
  public static LoadShedder shedder(Timer timer, Corpus.Case c, int limit, double headroom) {
    Scenario s = c.scenario;
    return LoadShedder.builder().name("oracle").timer(timer)
        .requestTimeout(Duration.ofNanos((long) (s.requestTimeoutSeconds * 1e9)))
        .limit(() -> Limits.fixed(limit)).rejector(() -> new IdealCut(c, headroom)).build();
  }

  /**
   * The cutoff that admits {@code capacity} of {@code offered} requests per second, shedding the
   * lowest priorities of {@code s}'s mix first; {@link Priority#LEVELS} if all fit.
   */
  static int cutoff(Scenario s, double offered, double capacity) {
    if (capacity >= offered) {
      return Priority.LEVELS;
    }
    if (s.fixedPriority() >= 0) {
      return Priority.LEVELS;
    }
    double admitted = 0;
    for (int t = 0; t < Priority.TIERS; t++) {
      double rate = offered * s.tierShare(t);
      if (admitted + rate <= capacity) {
        admitted += rate;
        continue;
      }
      int cohorts = (int) Math.floor((capacity - admitted) / (rate / Priority.COHORTS));
      return Priority.of(t, 0) + Math.max(0, Math.min(Priority.COHORTS - 1, cohorts));
    }
    return Priority.LEVELS;
  }

  /** The clairvoyant rejector: the cutoff from the scenario's known load and capacity. */
  static final class IdealCut implements Rejector {
    private final Corpus.Case c;
    private final double headroom;
    private double ratio;
    private int cutoff = Priority.LEVELS;

    IdealCut(Corpus.Case c, double headroom) {
      this.c = c;
      this.headroom = headroom;
    }

    @Override
    public int update(ControlWindow window) {
      // The cutoff rules the next interval: judge it at that interval's middle.
      double t = (window.nowNanos() + window.intervalNanos() / 2) / 1e9;
      Scenario s = c.scenario;
      double offered = s.arrivalsAt(t);
      double capacity = headroom * s.model().admittable(offered, c.smoothedSpeed(t));
      cutoff = cutoff(s, offered, capacity);
      ratio = offered <= 0 ? 0 : Math.max(0, 1 - capacity / offered);
      return cutoff;
    }

    @Override
    public double ratio() {
      return ratio;
    }

    @Override
    public boolean overloaded() {
      return cutoff < Priority.LEVELS;
    }
  }
}
