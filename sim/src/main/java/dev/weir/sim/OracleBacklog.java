package dev.weir.sim;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A check on the yardstick, not a goal: where the oracle's best fixed limit lets the service's
 * backlog grow through the whole window of a steady scenario, the oracle counts as goodput work
 * that only the window's end keeps from timing out, and a longer run would lose. This reruns the
 * sweep's limits on each steady scenario, keeps those whose backlog holds, and scores Weir against
 * the oracle and against that stable oracle (docs/corpus.md, "The oracle's growing backlogs").
 *
 * <p>A backlog grows when the service's mean in-service count over the window's last four seconds
 * exceeds both 1.3 times that over its first four and 1.5 times the service's concurrency at full
 * use: well past the noise of a steady queue, and past what a fixed limit near the knee holds.
 */
final class OracleBacklog {
  /** Families whose load and capacity are steady: only there is a growing backlog unsustainable. */
  private static final Set<String> STEADY = Set.of("pool-lognormal", "pool-pareto",
      "pool-bimodal", "cpu", "mixed", "single-tier", "mixed-pareto");
  /** Growth past this ratio, end of the window over its start, is not a steady queue's noise. */
  private static final double GROWTH = 1.3;
  /** In service past this multiple of the concurrency at full use is a queue, not the work. */
  private static final double QUEUED = 1.5;
  private static final double SPAN = 4;

  private OracleBacklog() {}

  static String run(long stream) throws Exception {
    List<Corpus.Case> cases = Corpus.stream(Corpus.all(), stream);
    ExecutorService pool = Executors.newFixedThreadPool(Runtime.getRuntime().availableProcessors());
    List<Future<double[]>> futures = new ArrayList<>();
    for (Corpus.Case c : cases) {
      futures.add(pool.submit(() -> score(c)));
    }
    StringBuilder sb = new StringBuilder();
    double[] plain = new double[cases.size()];
    double[] stable = new double[cases.size()];
    int grew = 0;
    for (int i = 0; i < cases.size(); i++) {
      double[] r = futures.get(i).get(); // weir, oracle, stable oracle, best, stable best
      plain[i] = r[0] / r[1];
      stable[i] = r[0] / r[2];
      if (r[1] != r[2]) {
        grew++;
        sb.append(String.format(Locale.ROOT,
            "%-18s oracle limit %5d: %7.1f/s, its backlog grows; stable limit %5d: %7.1f/s;"
                + " weir %7.1f/s, %5.1f%% -> %5.1f%%%n",
            cases.get(i).scenario.name(), (int) r[3], r[1], (int) r[4], r[2], r[0],
            100 * plain[i], 100 * stable[i]));
      }
    }
    pool.shutdown();
    Arrays.sort(plain);
    Arrays.sort(stable);
    sb.append(String.format(Locale.ROOT, "%d scenarios, %d with a growing oracle backlog%n",
        cases.size(), grew));
    sb.append(String.format(Locale.ROOT,
        "weir against the oracle:        worst %5.1f%%  p10 %5.1f%%  median %5.1f%%%n",
        100 * plain[0], 100 * Scorecard.quantile(plain, 0.1), 100 * Scorecard.quantile(plain, 0.5)));
    sb.append(String.format(Locale.ROOT,
        "weir against the stable oracle: worst %5.1f%%  p10 %5.1f%%  median %5.1f%%%n",
        100 * stable[0], 100 * Scorecard.quantile(stable, 0.1),
        100 * Scorecard.quantile(stable, 0.5)));
    return sb.toString();
  }

  /** Weir's goodput, the oracle's, the stable oracle's, and their limits. */
  private static double[] score(Corpus.Case c) {
    Oracle.Sweep s = Oracle.sweep(c);
    double weir = Simulation.run(c.scenario, Guard.WEIR).report(Corpus.WARM, Corpus.END)
        .goodput(-1);
    double oracle = s.bestReport.goodput(-1);
    // The sweep keeps reports, not runs (its rows stay in memory for the whole corpus): the
    // samples need a run again.
    if (!STEADY.contains(c.family) || !grows(c, run(c, s.best, s.headroom))) {
      return new double[] {weir, oracle, oracle, s.best, s.best};
    }
    double best = -1;
    int bestLimit = 0;
    for (int limit : s.goodput.keySet()) {
      if (!grows(c, run(c, limit, Oracle.CUT)) && s.goodput.get(limit) > best) {
        best = s.goodput.get(limit);
        bestLimit = limit;
      }
    }
    return best < 0 ? new double[] {weir, oracle, oracle, s.best, s.best}
        : new double[] {weir, oracle, best, s.best, bestLimit};
  }

  private static SimResult run(Corpus.Case c, int limit, double headroom) {
    return Simulation.run(c.scenario, "oracle",
        (t, sc) -> Oracle.shedder(t, c, limit, headroom));
  }

  private static boolean grows(Corpus.Case c, SimResult r) {
    double early = Main.mean(r.inService(Corpus.WARM, Corpus.WARM + SPAN));
    double late = Main.mean(r.inService(Corpus.END - SPAN, Corpus.END));
    return late > GROWTH * early && late > QUEUED * c.scenario.model().concurrency();
  }
}
