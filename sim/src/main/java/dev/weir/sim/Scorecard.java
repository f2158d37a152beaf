package dev.weir.sim;

import dev.weir.LoadShedder;
import dev.weir.Timer;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Collections;
import java.util.Comparator;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BiFunction;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Runs corpus scenarios behind each guard and the {@link Oracle}, and summarises them against the
 * goals: goodput at least 95% of the oracle's in the worst decile and 99% at the median; top-tier
 * success within 0.5 points of the oracle's in 95% of the scenarios where the top tier fits, and
 * top-tier P99 at most 2x unloaded in 95% of them; at 0.8x load or below nothing shed, from the
 * service's start (the first {@value Corpus#WARM} s, outside the measured window, are scored for
 * this alone), and top-tier P99 within 10% of no guard's. A guard that answers none of the top
 * tier has no P99 and misses both P99 goals; where the unguarded run answers none of it, there is
 * no P99 to be within 10% of, and the scenario is left out of that count.
 *
 * <p>Under each block's rows, a line says where the P99 goal is within reach of a fixed limit at
 * all: in how many scenarios where the top tier fits some limit of the oracle's sweep kept its P99
 * within 2x unloaded with goodput within 1% of the oracle's, and how often each contender met the
 * goal there. Goal 4 is still judged over every scenario where the top tier fits.
 */
public final class Scorecard {
  /** The goodput, as a share of the oracle's, at which a P99 within 2x counts as reachable. */
  static final double REACHABLE_GOODPUT = 0.99;

  /** A guard the scorecard compares: a label and a shedder factory (null result: no guard). */
  public static final class Contender {
    final String label;
    final BiFunction<Timer, Scenario, LoadShedder> factory;

    public Contender(String label, BiFunction<Timer, Scenario, LoadShedder> factory) {
      this.label = label;
      this.factory = factory;
    }
  }

  /** Weir as Guard.WEIR builds it, the priority-blind adaptive limit, and no guard. */
  public static List<Contender> standard() {
    return List.of(of(Guard.WEIR), of(Guard.BLIND_ADAPTIVE), of(Guard.NONE));
  }

  static Contender of(Guard g) {
    return new Contender(g.label(), g::shedder);
  }

  /** What one guard got on one scenario, over the measured window, and shed before it. */
  public static final class Metrics {
    public final double goodput;
    public final double topSuccess;
    public final double topP99Ms;
    public final double late;
    public final long shed;
    /**
     * The share of the requests that arrived before the measured window (the service's first
     * {@value Corpus#WARM} s, and the guard's) that were shed: a restart's cost, which the window
     * leaves out.
     */
    public final double startShed;

    Metrics(Report r, Report start, int top) {
      goodput = r.goodput(-1);
      topSuccess = r.successRatio(top);
      topP99Ms = r.latencyQuantileNanos(top, 0.99) / 1e6;
      long offered = r.offered(-1);
      late = offered == 0 ? 0 : (double) (r.count(-1, Answer.QUEUE_TIMEOUT)
          + r.count(-1, Answer.DEADLINE) + r.count(-1, Answer.CLIENT_TIMEOUT)
          + r.count(-1, Answer.PENDING)) / offered;
      shed = shed(r);
      long startOffered = start.offered(-1);
      startShed = startOffered == 0 ? 0 : (double) shed(start) / startOffered;
    }

    /** Whether any of the top tier was answered OK: without that its P99 means nothing. */
    public boolean answeredTop() {
      return topSuccess > 0;
    }

    private static long shed(Report r) {
      return r.count(-1, Answer.SHED) + r.count(-1, Answer.QUEUE_FULL)
          + r.count(-1, Answer.QUEUE_TIMEOUT);
    }
  }

  /** One scenario's results: the oracle's, each contender's, and the references. */
  public static final class Row {
    public final Corpus.Case c;
    public final int oracleLimit;
    public final Metrics oracle;
    public final Map<String, Metrics> guards = new LinkedHashMap<>();
    public final double unloadedP99Ms;
    public final boolean topFits;
    public final boolean lowLoad;
    /**
     * Whether some limit of the oracle's sweep, behind the ideal cut, kept the top tier's P99
     * within 2x unloaded with goodput within 1% of the oracle's: whether a fixed limit could meet
     * the P99 goal here without giving up the goodput goal's median.
     */
    public final boolean p99Reachable;
    public final Oracle.Sweep sweep;
    /** CPU time this row took, seconds (not part of the scorecard: it varies run to run). */
    public double cpuSeconds;

    Row(Corpus.Case c, Oracle.Sweep sweep, double unloadedP99Ms) {
      this.c = c;
      this.sweep = sweep;
      this.oracleLimit = sweep.best;
      this.oracle = new Metrics(sweep.bestReport, sweep.bestStart, c.topTier());
      this.unloadedP99Ms = unloadedP99Ms;
      this.topFits = c.topTierFits();
      this.lowLoad = c.lowLoad();
      this.p99Reachable = sweep.goodput.entrySet().stream()
          .anyMatch(e -> e.getValue() >= REACHABLE_GOODPUT * oracle.goodput
              && sweep.topP99Ms.get(e.getKey()) <= 2 * unloadedP99Ms);
    }

    /** Whether {@code label} answered some of the top tier, with a P99 within 2x unloaded. */
    boolean p99WithinTwice(String label) {
      Metrics m = get(label);
      return m.answeredTop() && m.topP99Ms <= 2 * unloadedP99Ms;
    }

    /** {@code label}'s metrics, "oracle" included. */
    public Metrics get(String label) {
      return label.equals("oracle") ? oracle : guards.get(label);
    }

    public double goodputShare(String label) {
      return oracle.goodput == 0 ? 1 : get(label).goodput / oracle.goodput;
    }
  }

  private Scorecard() {}

  /** Runs every case on every contender, on {@code threads} threads; rows in the cases' order. */
  public static List<Row> run(List<Corpus.Case> cases, List<Contender> contenders, int threads) {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      // The costliest first, so that no big scenario starts last; the results return in order.
      List<Integer> order = new ArrayList<>();
      for (int i = 0; i < cases.size(); i++) {
        order.add(i);
      }
      order.sort(Comparator.comparingDouble((Integer i) -> -cost(cases.get(i))));
      List<Future<Row>> futures = new ArrayList<>(Collections.nCopies(cases.size(), null));
      for (int i : order) {
        futures.set(i, pool.submit(() -> row(cases.get(i), contenders)));
      }
      List<Row> rows = new ArrayList<>();
      for (Future<Row> f : futures) {
        rows.add(f.get());
      }
      return rows;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    } finally {
      pool.shutdownNow();
    }
  }

  /** About how many requests one run of {@code c} simulates. */
  static double cost(Corpus.Case c) {
    double n = 0;
    for (double t = 0; t < c.scenario.durationSeconds(); t += 0.5) {
      n += 0.5 * c.scenario.arrivalsAt(t);
    }
    return n;
  }

  /** One case: the oracle's sweep, the unloaded reference, each contender. */
  public static Row row(Corpus.Case c, List<Contender> contenders) {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long start = threads.getCurrentThreadCpuTime();
    Oracle.Sweep sweep = Oracle.sweep(c);
    Row row = new Row(c, sweep, unloadedP99Ms(c));
    for (Contender g : contenders) {
      SimResult run = Simulation.run(c.scenario, g.label, g.factory);
      row.guards.put(g.label, new Metrics(run.report(Corpus.WARM, Corpus.END),
          run.report(0, Corpus.WARM), c.topTier()));
    }
    row.cpuSeconds = (threads.getCurrentThreadCpuTime() - start) / 1e9;
    return row;
  }

  /**
   * The top tier's P99 with no guard at 0.3 of the capacity, the speed averaged over the slowest
   * second (same service, same speed changes, but warm): the latency a guard should not much
   * exceed. Warm, because a service that starts cold is overloaded at 0.3 of its warm capacity
   * and, unguarded, may never warm: its reference would be a collapse's P99, or of no success.
   */
  static double unloadedP99Ms(Corpus.Case c) {
    Scenario s = c.scenario;
    double slowest = 1;
    for (double t = 0.5; t < s.durationSeconds() - 0.5; t += 0.1) {
      slowest = Math.min(slowest, c.smoothedSpeed(t));
    }
    double rate = 0.3 * s.model().capacity() * Math.max(0.05, slowest);
    Scenario unloaded = s.toBuilder().service(s.model().warm()).arrivalsPerSecond(t -> rate)
        .build();
    return Simulation.run(unloaded, Guard.NONE).report(Corpus.WARM, Corpus.END)
        .latencyQuantileNanos(c.topTier(), 0.99) / 1e6;
  }

  /** The scorecard: per family, overall, and held out, for the oracle and each contender. */
  public static String format(List<Row> rows, List<Contender> contenders, boolean perFamily) {
    List<String> labels = new ArrayList<>();
    labels.add("oracle");
    contenders.forEach(g -> labels.add(g.label));
    StringBuilder sb = new StringBuilder();
    sb.append(header());
    if (perFamily) {
      for (String f : Corpus.families(rows.stream().map(r -> r.c).collect(Collectors.toList()))) {
        block(sb, "family " + f, rows, r -> r.c.family.equals(f), labels);
      }
    }
    block(sb, "overall, tuning set (not held out)", rows, r -> !r.c.heldOut, labels);
    block(sb, "held out", rows, r -> r.c.heldOut, labels);
    block(sb, "all", rows, r -> true, labels);
    return sb.toString();
  }

  private static String header() {
    return String.format(Locale.ROOT, "%-12s %21s | %25s | %8s | %6s | %s%n", "",
        "goodput / oracle's", "top-tier ok, pts vs oracle", "top P99", "late", "<= 0.8x load")
        + String.format(Locale.ROOT, "%-12s %6s %6s %7s | %7s %7s %9s | %8s | %6s | %5s %11s %9s  %s%n",
        "guard", "worst", "p10", "median", "median", "worst", "in 0.5", "<= 2x", "mean",
        "shed", "start shed", "p99 1.1x", "goals 1 2 3 4 5");
  }

  private static void block(StringBuilder sb, String title, List<Row> all, Predicate<Row> which,
      List<String> labels) {
    List<Row> rows = all.stream().filter(which).collect(Collectors.toList());
    if (rows.isEmpty()) {
      return;
    }
    long fits = rows.stream().filter(r -> r.topFits).count();
    long low = rows.stream().filter(r -> r.lowLoad).count();
    // The low-load P99 is judged against the unguarded run's: only where it answered the top tier.
    List<Row> lowJudged = rows.stream().filter(r -> r.lowLoad)
        .filter(r -> r.guards.get("none").answeredTop()).collect(Collectors.toList());
    sb.append(String.format(Locale.ROOT, "%n%s: %d scenarios, top tier fits in %d, %d at <= 0.8x "
        + "load%n", title, rows.size(), fits, low));
    for (String g : labels) {
      double[] share = rows.stream().mapToDouble(r -> r.goodputShare(g)).sorted().toArray();
      double[] pts = rows.stream().filter(r -> r.topFits)
          .mapToDouble(r -> 100 * (r.get(g).topSuccess - r.oracle.topSuccess)).sorted().toArray();
      double within = fits == 0 ? Double.NaN
          : (double) Arrays.stream(pts).filter(p -> p >= -0.5).count() / fits;
      double p99ok = fits == 0 ? Double.NaN : (double) rows.stream().filter(r -> r.topFits)
          .filter(r -> r.p99WithinTwice(g)).count() / fits;
      double late = rows.stream().mapToDouble(r -> r.get(g).late).average().orElse(0);
      long shedLow = rows.stream().filter(r -> r.lowLoad).filter(r -> r.get(g).shed > 0).count();
      long startLow =
          rows.stream().filter(r -> r.lowLoad).filter(r -> r.get(g).startShed > 0).count();
      double startShare = rows.stream().filter(r -> r.lowLoad)
          .mapToDouble(r -> r.get(g).startShed).average().orElse(0);
      double p99Low = lowJudged.isEmpty() ? Double.NaN : (double) lowJudged.stream()
          .filter(r -> r.get(g).answeredTop()
              && r.get(g).topP99Ms <= 1.1 * r.guards.get("none").topP99Ms).count()
          / lowJudged.size();
      double p10 = quantile(share, 0.1);
      double median = quantile(share, 0.5);
      String goals = String.join(" ", mark(p10 >= 0.95), mark(median >= 0.99),
          mark(fits == 0 || within >= 0.95), mark(fits == 0 || p99ok >= 0.95),
          mark(low == 0 || (shedLow == 0 && startLow == 0
              && (lowJudged.isEmpty() || p99Low >= 1))));
      sb.append(String.format(Locale.ROOT,
          "%-12s %5.1f%% %5.1f%% %6.1f%% | %+7.2f %+7.2f %8.0f%% | %7.0f%% | %5.2f%% | %2d/%-2d "
              + "%3d %6.1f%% %8.0f%%        %s%n",
          g, 100 * share[0], 100 * p10, 100 * median, quantile(pts, 0.5), pts.length == 0
              ? Double.NaN : pts[0], 100 * within, 100 * p99ok, 100 * late, shedLow, low,
          startLow, 100 * startShare, 100 * p99Low, goals));
    }
    if (fits > 0) {
      List<Row> reachable = rows.stream().filter(r -> r.topFits && r.p99Reachable)
          .collect(Collectors.toList());
      sb.append(String.format(Locale.ROOT, "top P99 <= 2x reachable by a fixed limit with "
          + "goodput within %.0f%% of the oracle's: %d of %d; met there by",
          100 * (1 - REACHABLE_GOODPUT), reachable.size(), fits));
      for (String g : labels) {
        sb.append(String.format(Locale.ROOT, " %s %.0f%%", g, reachable.isEmpty() ? Double.NaN
            : 100.0 * reachable.stream().filter(r -> r.p99WithinTwice(g)).count()
                / reachable.size()));
      }
      sb.append(String.format(Locale.ROOT, "%n"));
    }
  }

  private static String mark(boolean met) {
    return met ? "y" : "-";
  }

  /** The nearest-rank quantile of sorted values; NaN if none. */
  static double quantile(double[] sorted, double q) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    int i = (int) Math.ceil(q * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
  }

  /** One line per scenario: the oracle's limit, and each guard's numbers. */
  public static String listing(List<Row> rows, List<Contender> contenders) {
    StringBuilder sb = new StringBuilder();
    for (Row r : rows) {
      sb.append(String.format(Locale.ROOT, "%s%n  oracle limit %d (of %s), cut at %.2fx capacity; "
              + "unloaded top-tier P99 %.1f ms; top tier %d %s; %s; %.2f s of CPU%n", r.c,
          r.oracleLimit, r.sweep.goodput.keySet(), r.sweep.headroom,
          r.unloadedP99Ms, r.c.topTier(), !r.topFits ? "does not fit"
              : r.p99Reachable ? "fits (P99 within 2x reachable)" : "fits",
          r.lowLoad ? "low load" : String.format(Locale.ROOT, "peak %.2fx",
              r.c.peakUtilisation()), r.cpuSeconds));
      List<String> labels = new ArrayList<>();
      labels.add("oracle");
      contenders.forEach(g -> labels.add(g.label));
      for (String g : labels) {
        Metrics m = r.get(g);
        sb.append(String.format(Locale.ROOT, "  %-12s goodput %8.1f/s (%5.1f%%)  top ok %6.2f%%  "
                + "top P99 %8s ms  late %5.2f%%  shed %d  start shed %.1f%%%n", g, m.goodput,
            100 * r.goodputShare(g), 100 * m.topSuccess, m.answeredTop()
                ? String.format(Locale.ROOT, "%.1f", m.topP99Ms) : "-", 100 * m.late, m.shed,
            100 * m.startShed));
      }
    }
    return sb.toString();
  }
}
