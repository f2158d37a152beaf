package dev.weir.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.LoadShedder;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The simulator, and the engine with a fixed limit and no rejector, in virtual time. */
class SimulatorTest {
  private static final long MS = 1_000_000L;

  private static Scenario overload() {
    return Scenario.builder("fixed-overload").servers(20).meanServiceSeconds(t -> 0.020)
        .arrivalsPerSecond(t -> 2000).tierMix(1, 1, 1, 1, 1, 1).duration(20).build();
  }

  private static LoadShedder fixed(dev.weir.Timer timer, Scenario s) {
    return LoadShedder.builder().timer(timer).limit(() -> Limits.fixed(20)).rejector(Rejectors::none)
        .requestTimeout(Duration.ofSeconds(1)).build();
  }

  @Test
  void underOverloadEachMoreImportantTierWaitsLessThanTheOneBelow() {
    SimResult r = Simulation.run(overload(), "fixed", SimulatorTest::fixed);
    double previous = -1;
    for (int tier = 0; tier < 6; tier++) {
      double wait = r.meanQueueWaitNanos(tier, 2, 20);
      if (Double.isNaN(wait)) {
        // Nothing of this tier was admitted: it waited longer than anything, in effect.
        assertTrue(tier >= 3, "tier " + tier + " was never admitted");
        continue;
      }
      assertTrue(wait > previous, "tier " + tier + " waited " + wait / MS + " ms on average, tier "
          + (tier - 1) + " " + previous / MS + " ms");
      previous = wait;
    }
  }

  @Test
  void noAdmittedRequestWaitsLongerThanItsQueueTimeout() {
    SimResult r = Simulation.run(overload(), "fixed", SimulatorTest::fixed);
    assertTrue(r.report().count(-1, Answer.QUEUE_TIMEOUT) > 0, "the test needs queue timeouts");
    long queueTimeout = 1000 * MS / 3;
    assertTrue(r.maxQueueWaitNanos() <= queueTimeout,
        "waited " + r.maxQueueWaitNanos() / MS + " ms");
  }

  @Test
  void shutdownAnswersEverything() {
    Scenario s = overload().toBuilder().closeAt(10).duration(15).build();
    SimResult r = Simulation.run(s, "fixed", SimulatorTest::fixed);
    Report all = r.report();
    assertEquals(0, all.count(-1, Answer.PENDING), all.table());
    assertTrue(r.report(10.001, 15).count(-1, Answer.SHUTDOWN) == r.report(10.001, 15).offered(-1),
        "every request after the close is answered 'shutting down'");
    assertTrue(r.report(0, 10).count(-1, Answer.SHUTDOWN) > 0,
        "requests queued at the close are answered 'shutting down'");
  }

  @Test
  void theSameSeedGivesTheSameReportAndAnotherSeedAnotherOne() {
    String a = Simulation.run(Scenarios.s2().withDuration(20), Guard.WEIR).report().table();
    String b = Simulation.run(Scenarios.s2().withDuration(20), Guard.WEIR).report().table();
    String c = Simulation.run(Scenarios.s2().withDuration(20).withSeed(2), Guard.WEIR).report()
        .table();
    assertEquals(a, b);
    assertNotEquals(a, c);
  }

  @Test
  void withoutAGuardAnOverloadedServiceCollapses() {
    Report r = Simulation.run(Scenarios.s2().withDuration(20), Guard.NONE).report(10, 20);
    assertTrue(r.goodput(-1) < 0.1 * Scenarios.CAPACITY, r.table());
  }

  @Test
  void aSixtySecondScenarioRunsInWellUnderASecond() {
    // Warm up the JIT first: the claim is about the simulator, not class loading.
    Simulation.run(Scenarios.s2().withDuration(10), Guard.WEIR);
    long start = System.nanoTime();
    SimResult r = Simulation.run(Scenarios.s2(), Guard.WEIR);
    double seconds = (System.nanoTime() - start) / 1e9;
    assertTrue(r.requests() > 80_000);
    // Not a performance assertion: a loose sanity bound so a pathological slowdown shows.
    assertTrue(seconds < 10, "took " + seconds + " s");
  }

  @Test
  void theCliChecksEveryScenario() {
    String report = Main.check();
    for (String name : new String[] {"S1", "S2", "S3", "S4", "S5", "S6", "S7-20krps", "S7-50rps",
        "S8", "S9"}) {
      assertTrue(report.contains("\n" + name + " "), name + " missing from:\n" + report);
    }
    assertTrue(!report.contains("NaN"), report);
  }

  @Test
  void theCliComparesEveryGuard() {
    String table = Main.compare();
    for (Guard g : Guard.values()) {
      assertTrue(table.contains(g.label()), table);
    }
    assertTrue(table.contains("S2") && table.contains("S3") && table.contains("S4"), table);
  }
}
