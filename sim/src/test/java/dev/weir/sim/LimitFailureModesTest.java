package dev.weir.sim;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.LoadShedder;
import dev.weir.Timer;
import dev.weir.control.PidRejector;
import dev.weir.control.VegasLimit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The ways adaptive limits are known to fail (Netflix's Vegas and Gradient2, Envoy's adaptive
 * concurrency), each reproduced in simulation against Weir's {@link VegasLimit}.
 */
class LimitFailureModesTest {
  private static final long MS = 1_000_000L;

  private static final class Built {
    VegasLimit limit;
  }

  private static java.util.function.BiFunction<Timer, Scenario, LoadShedder> weir(Built into) {
    return (timer, s) -> {
      into.limit = VegasLimit.builder().build();
      return LoadShedder.builder().timer(timer).limit(() -> into.limit)
          .rejector(() -> PidRejector.builder().build())
          .requestTimeout(Duration.ofNanos((long) (s.requestTimeoutSeconds * 1e9))).build();
    };
  }

  @Test
  void theBaselineDoesNotDriftUpDuringALongOverload() {
    Built b = new Built();
    SimResult r = Simulation.run(Scenarios.s9(), "weir", weir(b));
    // The lognormal service time's median: mean x exp(-sigma^2 / 2).
    double median = Scenarios.SERVICE * 1e9 * Math.exp(-0.5 * 0.5 / 2);
    assertTrue(b.limit.baselineNanos() <= 1.2 * median,
        "baseline " + b.limit.baselineNanos() / MS + " ms after 10 minutes of 4x overload; the "
            + "service's median is " + median / MS + " ms");
    assertTrue(r.report(540, 600).goodput(-1) >= 0.93 * Scenarios.CAPACITY);
  }

  /**
   * On a processor-shared service latency grows with every request in flight, so a probe at a fixed
   * 0.8 of the limit reads 0.8 of the operating point's latency, above the baseline once the target
   * queue is over a fifth of the limit, as the noise floor makes it on a service this noisy; each
   * time the baseline's horizon slid, the baseline rose to that reading and the limit with it: on
   * this service from 9 to 44 in 15 minutes, the top tier's P99 from 4.7 to 19.5 times unloaded
   * (docs/corpus.md, "Fifteen minutes of steady overload").
   */
  @Test
  void theLimitDoesNotClimbOverMinutesOnANoisyProcessorSharedService() {
    double capacity = noisyProcessorShared(2).capacity();
    for (long seed = 1; seed <= 3; seed++) {
      SimResult r = atSteadyOverload(noisyProcessorShared(2), 1.5, 900, seed);
      double early = Arrays.stream(r.limits(60, 180)).average().orElseThrow();
      double late = Arrays.stream(r.limits(720, 900)).average().orElseThrow();
      Report last = r.report(720, 900);
      String where = "seed " + seed + ": mean limit " + early + " at 1-3 min, " + late
          + " at 12-15 min";
      assertTrue(late <= 1.5 * early, where);
      assertTrue(last.latencyQuantileNanos(1, 0.99) <= 200 * MS,
          where + "; top tier's P99 " + last.latencyQuantileNanos(1, 0.99) / MS + " ms");
      assertTrue((last.goodput(1) + last.goodput(5)) >= 0.9 * capacity, where + "; goodput "
          + (last.goodput(1) + last.goodput(5)));
    }
  }

  /**
   * On a processor-shared service every answer's latency follows the concurrency over its whole
   * life, so latency keeps rising for a round trip after the limit grew, and a cut that meets it
   * reads as a slower service. Rebased to that latency, Vegas read no queue and grew the limit
   * again, and each such rebase ratcheted it up: at 1.2x over five minutes, 2 cores' limit reached
   * 12 (top tier's P99 162 ms) and 4 cores' 15 (94 ms), where the knee is the cores plus a few
   * (docs/corpus.md, "A rebase that follows neither reading").
   */
  @Test
  void aCutThatMeetsLaggingLatencyDoesNotRatchetTheLimitUp() {
    for (int cores : new int[] {2, 4}) {
      for (long seed = 1; seed <= 3; seed++) {
        SimResult r = atSteadyOverload(noisyProcessorShared(cores), 1.2, 300, seed);
        double late = Arrays.stream(r.limits(240, 300)).average().orElseThrow();
        assertTrue(late <= 2 * cores + 4,
            cores + " cores, seed " + seed + ": mean limit " + late + " in the fifth minute");
      }
    }
  }

  /** CPU-bound work of lognormal 4 ms, sigma 1, shared by {@code cores} cores. */
  private static ServiceModel noisyProcessorShared(int cores) {
    return ServiceModel.cpu(cores, Dist.lognormal(0.004, 1.0));
  }

  /** {@code m} behind Weir at {@code load} times its capacity, tiers 1 and 5, a 1-s timeout. */
  private static SimResult atSteadyOverload(ServiceModel m, double load, double seconds,
      long seed) {
    double capacity = m.capacity();
    Scenario s = Scenario.builder("noisy-ps").service(m)
        .arrivalsPerSecond(t -> load * capacity).tierMix(Corpus.TWO_TIERS).requestTimeout(1)
        .duration(seconds).seed(seed).build();
    return Simulation.run(s, Guard.WEIR);
  }

  /**
   * Slow start overshoots the knee by up to a doubling. Judged against latency measured at wherever
   * it restarts, the limit stays above the knee, and every admitted request queues inside the
   * service behind the excess: on the overload experiment's 8 servers at 3x the limit settled at 14
   * in one seed of three, and on 20 servers at 33 and 39 in two, with tier-1 P99s 20-40% over the
   * bound. Judged against the start-up windows below the knee, it settles just above it.
   */
  @Test
  void theLimitSettlesJustAboveTheKneeAfterSlowStartOvershoots() {
    for (int servers : new int[] {8, 20}) {
      for (long seed = 1; seed <= 3; seed++) {
        Scenario s = Scenario.builder("knee").servers(servers)
            .meanServiceSeconds(t -> Scenarios.SERVICE)
            .arrivalsPerSecond(t -> 3 * servers / Scenarios.SERVICE).duration(60).seed(seed)
            .build();
        SimResult r = Simulation.run(s, Guard.WEIR);
        double mean = Arrays.stream(r.limits(10, 60)).average().orElseThrow();
        String where = servers + " servers, seed " + seed + ": mean limit " + mean;
        assertTrue(mean >= servers, where + ", below the knee");
        assertTrue(mean <= 1.25 * servers + 1, where + ", well above the knee");
      }
    }
  }

  /**
   * The start-up baseline rules the first seconds after slow start, so a low one holds the limit
   * below the knee all that time: judged from one first window of 20 samples, 2 seeds in 100
   * started below the knee on 8 servers (mean limit 7.4 over seconds 1-8 in the worst), and in
   * the overload experiment one seed in 12 lost 30% of its goodput that way. Judged from every
   * start-up window pooled, about one seed in 1,500 restarts a step below the knee and climbs back
   * within seconds (7.9-8.0 over seconds 1-8), so one seed in 100 may fall just short, none far
   * short.
   */
  @Test
  void anUnluckyFirstSampleDoesNotHoldTheLimitBelowTheKnee() {
    int servers = 8;
    List<String> below = new ArrayList<>();
    for (long seed = 1; seed <= 100; seed++) {
      Scenario s = Scenario.builder("start").servers(servers)
          .meanServiceSeconds(t -> Scenarios.SERVICE)
          .arrivalsPerSecond(t -> 1.5 * servers / Scenarios.SERVICE).duration(10).seed(seed)
          .build();
      double mean = Arrays.stream(Simulation.run(s, Guard.WEIR).limits(1, 8)).average()
          .orElseThrow();
      String where = "seed " + seed + ": mean limit " + mean + " over seconds 1-8";
      assertTrue(mean >= 0.95 * servers, where);
      if (mean < servers) {
        below.add(where);
      }
    }
    assertTrue(below.size() <= 1, "below the knee: " + below);
  }

  /**
   * On a heavy-tailed service the median of a window is noisy (about 12% at lognormal sigma 1.0
   * and 100 samples), and the baseline, the lowest of many such medians, reads low by more than
   * the target's slack: the limit read a queue where none stood and held a pool of 32 at 12-17 with
   * nothing waiting inside it (the corpus's `pool-lognormal-13`: 42% of the oracle's goodput).
   */
  @Test
  void noiseInTheLatencyIsNotReadAsQueueing() {
    int servers = 32;
    double mean = 0.08;
    for (long seed = 1; seed <= 3; seed++) {
      Scenario s = Scenario.builder("noisy").servers(servers).meanServiceSeconds(t -> mean)
          .serviceSigma(1.0).arrivalsPerSecond(t -> 2 * servers / mean).duration(20)
          .seed(seed).build();
      double limit = Arrays.stream(Simulation.run(s, Guard.WEIR).limits(5, 20)).average()
          .orElseThrow();
      assertTrue(limit >= servers, "seed " + seed + ": mean limit " + limit + " over seconds 5-20 "
          + "on " + servers + " servers with nothing queued inside them below " + servers);
    }
  }

  @Test
  void theLimitDoesNotCollapseAtLowTraffic() {
    SimResult r = Simulation.run(Scenarios.s6(), Guard.WEIR);
    int min = Arrays.stream(r.limits(0, 600)).min().getAsInt();
    assertTrue(min >= 2, "the limit fell to " + min + " at 5 RPS");
  }

  @Test
  void theLimitDoesNotClimbWhenEverySampleIsADrop() {
    // Every request takes 2 s against a 1 s timeout: every release is a drop.
    Scenario s = Scenario.builder("all-drops").servers(50).meanServiceSeconds(t -> 2.0)
        .serviceSigma(0.1).arrivalsPerSecond(t -> 100).duration(60).build();
    Built b = new Built();
    SimResult r = Simulation.run(s, "weir", weir(b));
    int max = Arrays.stream(r.limits(5, 60)).max().getAsInt();
    assertTrue(max <= VegasLimit.builder().build().initialLimit(),
        "the limit climbed to " + max + " on drops alone");
  }

  @Test
  void theLimitDoesNotGrowWhenTheApplicationNeverUsesIt() {
    // 0.05x of a 20,000 RPS service: about 20 requests in flight, against a maximum of 1000.
    Scenario s = Scenarios.s7Large().toBuilder().arrivalsPerSecond(t -> 1000).duration(60)
        .build();
    SimResult r = Simulation.run(s, Guard.WEIR);
    int peakInService = Arrays.stream(r.inService(0, 60)).max().getAsInt();
    int late = Arrays.stream(r.limits(30, 60)).max().getAsInt();
    assertTrue(late <= Math.max(8, 3 * peakInService),
        "the limit is " + late + " while at most " + peakInService + " requests were in flight");
  }

  @Test
  void theLimitFollowsAServiceThatGetsSlowerInsteadOfCollapsing() {
    // S4's service time doubles for good at 30 s: the old baseline is no longer reachable.
    SimResult r = Simulation.run(Scenarios.s4(), Guard.WEIR);
    int min = Arrays.stream(r.limits(30, 60)).min().getAsInt();
    assertTrue(min >= Scenarios.SERVERS / 2,
        "the limit fell to " + min + " for a service of " + Scenarios.SERVERS + " servers");
  }
}
