package dev.weir.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.Priority;
import dev.weir.VirtualTime;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The service models behave as specified, in virtual time. */
class ServiceModelTest {
  private static final long MS = 1_000_000L;
  private static final long US = 1_000L;

  private final VirtualTime time = new VirtualTime();
  private final List<Long> done = new ArrayList<>();

  private Service.Job submit(Service s) {
    Service.Job j = s.job(() -> done.add(time.nanoTime()));
    s.start(j);
    return j;
  }

  private Service create(ServiceModel m) {
    return m.create(time, new SplittableRandom(1));
  }

  @Test
  void processorSharingOneRequestAloneTakesItsCpuTime() {
    Service s = create(ServiceModel.cpu(2, Dist.lognormal(0.004, 0)));
    submit(s);
    time.advanceTo(100 * MS);
    assertEquals(List.of(4 * MS), done);
  }

  @Test
  void processorSharingUpToKRequestsRunAtFullSpeed() {
    Service s = create(ServiceModel.cpu(2, Dist.lognormal(0.004, 0)));
    submit(s);
    submit(s);
    time.advanceTo(100 * MS);
    assertEquals(List.of(4 * MS, 4 * MS), done);
  }

  @Test
  void processorSharingMoreThanKRequestsShareTheCores() {
    // Four requests of 4 ms on 2 cores: each runs at half speed and all end at 8 ms.
    Service s = create(ServiceModel.cpu(2, Dist.lognormal(0.004, 0)));
    for (int i = 0; i < 4; i++) {
      submit(s);
    }
    time.advanceTo(6 * MS);
    // A fifth at 6 ms: the four have 1 ms left each; five share 2 cores (0.4 each) for 2.5 ms,
    // then the fifth, with 3 ms left, runs alone at full speed.
    submit(s);
    time.advanceTo(100 * MS);
    assertEquals(5, done.size());
    for (int i = 0; i < 4; i++) {
      assertEquals(8.5 * MS, done.get(i), 1_000, "request " + i);
    }
    assertEquals(11.5 * MS, done.get(4), 1_000);
  }

  @Test
  void aColdServiceRunsSlowUntilItsWarmUpHasHadItsCpu() {
    // One core at 0.1x until 0.5 s of CPU warm it. A 4 ms request at 0 shares the core with the
    // warm-up: both at 0.05, so it ends at 80 ms, the warm-up having done 4 ms of its 50 ms of
    // cold work; alone, the warm-up ends 0.46 s later. A request at 1 s runs warm.
    Service s = create(ServiceModel.cpu(1, Dist.lognormal(0.004, 0)).withColdStart(0.1, 0.5));
    assertEquals(0, s.inService(), "the warm-up is no request");
    submit(s);
    time.advanceTo(1000 * MS);
    submit(s);
    time.advanceTo(2000 * MS);
    assertEquals(80 * MS, done.get(0), US);
    assertEquals(1004 * MS, done.get(1), US);
  }

  @Test
  void workInServiceSlowsTheWarmUp() {
    // Nine 1 s requests beside the warm-up on one core at 0.1x: each of the ten jobs gets a tenth
    // of 0.1, so the warm-up's 0.05 of cold work takes 5 s, not 0.5; then the nine run warm, with
    // 1 - 5 * 0.01 = 0.95 s of work each left, sharing the core: 9 * 0.95 = 8.55 s more.
    Service s = create(ServiceModel.cpu(1, Dist.lognormal(1, 0)).withColdStart(0.1, 0.5));
    for (int i = 0; i < 9; i++) {
      submit(s);
    }
    time.advanceTo(20_000 * MS);
    assertEquals(9, done.size());
    assertEquals(13_550 * MS, done.get(0), 1 * MS);
  }

  @Test
  void aColdStartNeedsACpuStageAndAConstantSpeed() {
    ServiceModel pool = ServiceModel.pool(4, Dist.lognormal(0.02, 0));
    assertThrows(IllegalArgumentException.class, () -> pool.withColdStart(0.1, 1));
    ServiceModel cpu = ServiceModel.cpu(1, Dist.lognormal(0.004, 0));
    assertThrows(IllegalArgumentException.class, () -> cpu.withColdStart(1, 1));
    assertThrows(IllegalArgumentException.class, () -> cpu.withColdStart(0.1, 0));
    assertThrows(IllegalArgumentException.class,
        () -> cpu.withColdStart(0.1, 1).withSpeed(Speed.step(1, 2, 0.5)));
    assertThrows(IllegalArgumentException.class,
        () -> cpu.withSpeed(Speed.step(1, 2, 0.5)).withColdStart(0.1, 1));
    assertTrue(cpu.withColdStart(0.1, 1).toString().contains("cold at 0.10x until 1.0 s of CPU"));
  }

  @Test
  void aRejectionsCpuCostSlowsService() {
    // One core, a 4 ms request, and twenty rejections at 50 us each at the same time: the core
    // does 5 ms of work, the request's last.
    Service s = create(ServiceModel.cpu(1, Dist.lognormal(0.004, 0)));
    submit(s);
    for (int i = 0; i < 20; i++) {
      s.rejected();
    }
    time.advanceTo(100 * MS);
    assertEquals(5 * MS, done.get(0), US);
    assertEquals(50e-6, ServiceModel.cpu(1, Dist.lognormal(0.004, 0)).rejectCpu());
  }

  @Test
  void rejectionsCostNothingWithoutACpuStage() {
    Service s = create(ServiceModel.pool(1, Dist.lognormal(0.004, 0)));
    submit(s);
    for (int i = 0; i < 20; i++) {
      s.rejected();
    }
    time.advanceTo(100 * MS);
    assertEquals(List.of(4 * MS), done);
  }

  @Test
  void aPoolServesNAtATimeInArrivalOrder() {
    Service s = create(ServiceModel.pool(2, Dist.lognormal(0.010, 0)));
    for (int i = 0; i < 3; i++) {
      submit(s);
    }
    assertEquals(3, s.inService());
    time.advanceTo(100 * MS);
    assertEquals(List.of(10 * MS, 10 * MS, 20 * MS), done);
    assertEquals(0, s.inService());
  }

  @Test
  void aStallFreezesRunningWork() {
    // A 100 ms stall from 5 ms: a 10 ms request started at 0 ends at 110 ms.
    Service s = create(ServiceModel.pool(4, Dist.lognormal(0.010, 0))
        .withSpeed(Speed.stalls(0.005, 10, 0.1, 1)));
    submit(s);
    time.advanceTo(1000 * MS);
    assertEquals(110 * MS, done.get(0), US);
  }

  @Test
  void halfSpeedDoublesTheTimeLeft() {
    Service s = create(ServiceModel.cpu(1, Dist.lognormal(0.010, 0))
        .withSpeed(Speed.step(0.004, 10, 0.5)));
    submit(s);
    time.advanceTo(1000 * MS);
    // 4 ms at full speed, the remaining 6 ms of work at half speed: 12 ms more.
    assertEquals(16 * MS, done.get(0), US);
  }

  @Test
  void mixedRunsTheCpuStageThenThePool() {
    // One core of 4 ms, then one worker of 10 ms: two requests share the core until 8 ms, then
    // queue for the worker.
    Service s = create(ServiceModel.mixed(1, Dist.lognormal(0.004, 0), 1,
        Dist.lognormal(0.010, 0)));
    submit(s);
    submit(s);
    time.advanceTo(1000 * MS);
    assertEquals(18 * MS, done.get(0), US);
    assertEquals(28 * MS, done.get(1), US);
  }

  @Test
  void capacityAndAdmittableCountRejectionCpu() {
    ServiceModel m = ServiceModel.cpu(2, Dist.lognormal(0.004, 0.5));
    assertEquals(500, m.capacity(), 1e-9);
    assertEquals(400, m.admittable(400, 1), 1e-9);
    // 1000/s offered: a*4ms + (1000-a)*50us <= 2 s per second: a = 1.95 / 0.00395.
    assertEquals(1.95 / 0.00395, m.admittable(1000, 1), 1e-6);
    // Mixed: the smaller of the stages' capacities.
    assertEquals(4 / 0.002,
        ServiceModel.mixed(4, Dist.lognormal(0.002, 0), 1000, Dist.lognormal(0.2, 0)).capacity(),
        1e-9);
    assertEquals(100 / 0.2,
        ServiceModel.mixed(4, Dist.lognormal(0.002, 0), 100, Dist.lognormal(0.2, 0)).capacity(),
        1e-9);
  }

  @Test
  void distributionsHaveTheirStatedMeans() {
    SplittableRandom r = new SplittableRandom(7);
    for (Dist d : new Dist[] {Dist.lognormal(0.02, 0.5), Dist.lognormal(0.02, 1.0),
        Dist.bimodal(0.9, 0.01, 0.2), Dist.pareto(0.02, 2.5), Dist.pareto(0.02, 1.5)}) {
      double sum = 0;
      int n = 400_000;
      for (int i = 0; i < n; i++) {
        sum += d.sample(r);
      }
      double tolerance = d.toString().contains("pareto(") ? 0.06 : 0.02;
      assertEquals(d.mean(), sum / n, tolerance * d.mean(), d.toString());
      Dist scaled = d.withMean(1.0);
      assertEquals(1.0, scaled.mean(), 1e-9, scaled.toString());
    }
  }

  @Test
  void onePriorityForEveryRequest() {
    Scenario s = Scenario.builder("one").service(ServiceModel.cpu(2, Dist.lognormal(0.004, 0.5)))
        .arrivalsPerSecond(t -> 200).fixedPriority(Corpus.DEFAULT_PRIORITY).duration(5).build();
    Report r = Simulation.run(s, Guard.WEIR).report();
    assertTrue(r.offered(3) > 900, r.table());
    assertEquals(r.offered(3), r.offered(-1));
    assertEquals(3, Priority.tier(Corpus.DEFAULT_PRIORITY));
  }
}
