package dev.weir.sim;

import java.util.List;
import java.util.Locale;

/**
 * The simulator's command line.
 *
 * <pre>
 *   Main                      the comparison table for S2, S3 and S4, every guard
 *   Main S3 [guard]           one scenario's per-tier table (guard: weir, fixed-ideal,
 *                             vegas-only, none; default weir)
 *   Main list                 the scenarios
 * </pre>
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    if (args.length == 0 || args[0].equals("compare")) {
      System.out.print(compare());
      return;
    }
    if (args[0].equals("list")) {
      Scenarios.all().values().forEach(s -> System.out.println(s));
      return;
    }
    Scenario s = Scenarios.all().get(args[0].toLowerCase(Locale.ROOT));
    if (s == null) {
      System.err.println("unknown scenario '" + args[0] + "'; try: list");
      System.exit(2);
    }
    Guard g = args.length > 1 ? Guard.parse(args[1]) : Guard.WEIR;
    long start = System.nanoTime();
    SimResult r = Simulation.run(s, g);
    double wall = (System.nanoTime() - start) / 1e9;
    System.out.println(s);
    System.out.print(r.report(Math.min(10, s.durationSeconds() / 2), s.durationSeconds()).table());
    if (r.finalSnapshot() != null) {
      System.out.println("final: " + r.finalSnapshot());
    }
    System.out.printf(Locale.ROOT, "%d requests, %.0f simulated seconds in %.2f s of wall time%n",
        r.requests(), s.durationSeconds(), wall);
  }

  /** Every guard on S2, S3 and S4, in one run: the comparison in the README. */
  public static String compare() {
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(Locale.ROOT,
        "Capacity %.0f RPS (%d servers x %.0f ms, lognormal); client timeout 1 s; "
            + "measured from 10 s (S4: from 40 s, after the change)%n%n",
        Scenarios.CAPACITY, Scenarios.SERVERS, Scenarios.SERVICE * 1000));
    sb.append(String.format(Locale.ROOT, "%-4s %-12s %10s %9s %9s %9s %9s %9s%n", "", "guard",
        "goodput/s", "of cap.", "tier1 ok%", "t1 p50ms", "t1 p99ms", "timeouts"));
    for (Scenario s : List.of(Scenarios.s2(), Scenarios.s3(), Scenarios.s4())) {
      double from = s.name().equals("S4") ? 40 : 10;
      double capacity = s.capacityAt(s.durationSeconds() - 1);
      for (Guard g : Guard.values()) {
        Report r = Simulation.run(s, g).report(from, s.durationSeconds());
        long late = r.count(-1, Answer.QUEUE_TIMEOUT) + r.count(-1, Answer.DEADLINE)
            + r.count(-1, Answer.CLIENT_TIMEOUT) + r.count(-1, Answer.PENDING);
        sb.append(String.format(Locale.ROOT, "%-4s %-12s %10.1f %8.1f%% %9.2f %9.1f %9.1f %8.1f%%%n",
            s.name(), g.label(), r.goodput(-1), 100 * r.goodput(-1) / capacity,
            100 * r.successRatio(1), r.latencyQuantileNanos(1, 0.5) / 1e6,
            r.latencyQuantileNanos(1, 0.99) / 1e6, 100.0 * late / r.offered(-1)));
      }
    }
    return sb.toString();
  }
}
