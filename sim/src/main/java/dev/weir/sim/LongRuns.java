package dev.weir.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Steady overload held for a quarter of an hour, which the corpus's 20-second runs cannot show:
 * whether Weir's operating point stays where it settled or drifts as its baseline's horizon (60 s)
 * slides. Nine services, each at a fixed multiple of its capacity with tiers 1 and 5 half and
 * half, behind Weir alone; each row is one period of {@value #PERIOD} s: the mean limit, goodput
 * as a share of capacity, the top tier's success, and its P99 as a multiple of the unloaded P99,
 * the corpus's reference: the service at 0.3x, unguarded (docs/corpus.md, "Fifteen minutes of
 * steady overload").
 */
final class LongRuns {
  /** Simulated seconds a run lasts. */
  static final double DURATION = 900;
  /** Seconds a row covers: three horizons of the baseline, so a drift shows between rows. */
  static final double PERIOD = 180;

  /** A service, its label and the load it is offered. */
  record Service(String label, ServiceModel model, double load) {}

  /** The services, chosen to span the corpus's shapes: cores, pools, spreads, loads. */
  static List<Service> services() {
    return List.of(
        new Service("PS 1 core, lognormal 4 ms s=0.5, 1.5x",
            ServiceModel.cpu(1, Dist.lognormal(0.004, 0.5)), 1.5),
        new Service("PS 2 cores, lognormal 4 ms s=0.5, 1.5x",
            ServiceModel.cpu(2, Dist.lognormal(0.004, 0.5)), 1.5),
        new Service("PS 2 cores, lognormal 4 ms s=1, 1.5x",
            ServiceModel.cpu(2, Dist.lognormal(0.004, 1.0)), 1.5),
        new Service("PS 8 cores, lognormal 13 ms s=1, 1.5x",
            ServiceModel.cpu(8, Dist.lognormal(0.013, 1.0)), 1.5),
        new Service("PS 8 cores, lognormal 13 ms s=0.3, 3x",
            ServiceModel.cpu(8, Dist.lognormal(0.013, 0.3)), 3),
        new Service("pool 50, lognormal 20 ms s=0.5, 1.5x",
            ServiceModel.pool(50, Dist.lognormal(0.020, 0.5)), 1.5),
        new Service("pool 50, lognormal 20 ms s=1, 3x",
            ServiceModel.pool(50, Dist.lognormal(0.020, 1.0)), 3),
        new Service("pool 20, pareto 50 ms a=1.5, 1.5x",
            ServiceModel.pool(20, Dist.pareto(0.050, 1.5)), 1.5),
        new Service("2 cores 2 ms, then pool 20 of 20 ms, 1.5x",
            ServiceModel.mixed(2, Dist.lognormal(0.002, 0.5), 20, Dist.lognormal(0.020, 0.5)),
            1.5));
  }

  private LongRuns() {}

  /** The table for every service, its runs' seeds offset by {@code stream}. */
  static String run(long stream) throws Exception {
    List<Service> services = services();
    ExecutorService pool = Executors.newFixedThreadPool(Runtime.getRuntime().availableProcessors());
    List<Future<String>> rows = new ArrayList<>();
    for (Service s : services) {
      rows.add(pool.submit(() -> rows(s, 1 + stream)));
    }
    StringBuilder sb = new StringBuilder(String.format(Locale.ROOT,
        "Weir at steady overload for %.0f s, by periods of %.0f s (tiers 1 and 5, half each)%n",
        DURATION, PERIOD));
    for (Future<String> f : rows) {
      sb.append(f.get());
    }
    pool.shutdown();
    return sb.toString();
  }

  /** One service's block: a heading, then a row per period. */
  static String rows(Service s, long seed) {
    ServiceModel m = s.model();
    double capacity = m.capacity();
    double load = s.load() * capacity;
    double timeout = Corpus.timeoutSeconds(m);
    Scenario scenario = Scenario.builder(s.label()).service(m).arrivalsPerSecond(t -> load)
        .tierMix(Corpus.TWO_TIERS).requestTimeout(timeout).duration(DURATION).seed(seed).build();
    SimResult r = Simulation.run(scenario, Guard.WEIR);
    // The corpus's reference, from a run as long as the corpus's window.
    double unloadedP99Ms = Scorecard.unloadedP99Ms(
        new Corpus.Case(scenario.withDuration(Corpus.END), "long", false, s.load()));
    StringBuilder sb = new StringBuilder(String.format(Locale.ROOT,
        "%s: capacity %.0f/s, unloaded P99 %.1f ms, timeout %.1f s%n", s.label(), capacity,
        unloadedP99Ms, timeout));
    for (double from = 0; from + PERIOD <= DURATION; from += PERIOD) {
      Report rep = r.report(from, from + PERIOD);
      double limit = java.util.Arrays.stream(r.limits(from, from + PERIOD)).average().orElse(0);
      long p99 = rep.latencyQuantileNanos(1, 0.99);
      sb.append(String.format(Locale.ROOT,
          "  %4.0f-%4.0f s  limit %6.1f  goodput %5.1f%%  top ok %6.2f%%  top P99 %5.2fx%n",
          from, from + PERIOD, limit, 100 * (rep.goodput(1) + rep.goodput(5)) / capacity,
          100 * rep.successRatio(1), p99 / 1e6 / unloadedP99Ms));
    }
    return sb.toString();
  }
}
