package dev.weir.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The open-loop arrivals follow the scenario's rate as it changes over time. */
class ArrivalProcessTest {
  private static Scenario burst(long seed) {
    // 2 requests a second, then 1,000 a second from 1 s: the burst's first 200 ms should see
    // about 200 arrivals, whatever came before.
    return Scenario.builder("burst")
        .service(ServiceModel.pool(1000, Dist.lognormal(0.001, 0)))
        .arrivalsPerSecond(t -> t < 1 ? 2 : 1000).tierMix(1, 1, 1, 1, 1, 1)
        .duration(1.5).seed(seed).build();
  }

  @Test
  void aRateThatRisesTakesEffectWhenItRisesNotAfterTheLastGapAtTheOldRate() {
    long arrivals = 0;
    int seeds = 20;
    for (int seed = 1; seed <= seeds; seed++) {
      arrivals += Simulation.run(burst(seed), Guard.NONE).report(1, 1.2).offered(-1);
    }
    // Poisson at 1,000/s over 0.2 s on 20 seeds: 4,000, s.d. 63. A gap drawn at 2/s before the
    // rise (mean 0.5 s) delays the burst's first arrival past 1.2 s two times in three.
    assertEquals(4000, arrivals, 300, "arrivals in the burst's first 200 ms, 20 seeds");
  }

  @Test
  void noRequestArrivesWhileTheRateIsZero() {
    // No load until 1 s, then 1 a second: the first arrival is an exponential gap after 1 s, not
    // the first poll of the zero rate to find it positive.
    int atOnce = 0;
    for (int seed = 1; seed <= 20; seed++) {
      Scenario s = Scenario.builder("idle")
          .service(ServiceModel.pool(10, Dist.lognormal(0.001, 0)))
          .arrivalsPerSecond(t -> t < 1 ? 0 : 1).duration(3).seed(seed).build();
      SimResult r = Simulation.run(s, Guard.NONE);
      atOnce += (int) r.report(1, 1.011).offered(-1);
    }
    // P(an arrival in the first 11 ms at 1/s) is about 1.1%: on 20 seeds, almost surely none.
    assertEquals(0, atOnce, "runs with an arrival within 11 ms of the rate turning positive");
  }
}
