package dev.weir.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.ControlWindow;
import dev.weir.Limit;
import dev.weir.LoadShedder;
import dev.weir.Priority;
import dev.weir.control.Rejectors;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The corpus covers what it claims to, is deterministic, and its oracle is a sweep's best. */
class CorpusTest {
  @Test
  void atLeast200ScenariosAcrossTheFamilies() {
    List<Corpus.Case> all = Corpus.all();
    assertTrue(all.size() >= 200, all.size() + " scenarios");
    assertEquals(Set.copyOf(Corpus.FAMILIES), Corpus.families(all));
    assertEquals(all.size(), all.stream().map(c -> c.scenario.name()).distinct().count());
    Map<String, Long> heldOut = all.stream().filter(c -> c.heldOut)
        .collect(Collectors.groupingBy(c -> c.family, Collectors.counting()));
    assertEquals(Corpus.FAMILIES.size(), heldOut.size(), "every family holds some out");
    assertTrue(Corpus.family(Corpus.HELD_OUT_FAMILY).stream().allMatch(c -> c.heldOut));
    assertTrue(all.stream().filter(c -> !c.heldOut).count() >= 150);
  }

  @Test
  void theCorpusSpansServicesShapesSizesLoadsAndMixes() {
    List<Corpus.Case> all = Corpus.all();
    List<ServiceModel> models = all.stream().map(c -> c.scenario.model())
        .collect(Collectors.toList());
    assertTrue(models.stream().anyMatch(m -> m.hasCpu() && !m.hasPool()), "processor sharing");
    assertTrue(models.stream().anyMatch(m -> m.hasCpu() && m.hasPool()), "mixed");
    assertTrue(models.stream().anyMatch(m -> !m.hasCpu() && m.hasPool()), "pool");
    for (String shape : new String[] {"lognormal(", "pareto(", "bimodal("}) {
      assertTrue(models.stream().anyMatch(m -> m.toString().contains(shape)), shape);
    }
    for (String speed : new String[] {"from 8 to 14 s", "ramp to", "stalls every", "from 0 to"}) {
      assertTrue(models.stream().anyMatch(m -> m.toString().contains(speed)), speed);
    }
    assertTrue(models.stream().anyMatch(m -> m.workers() == 1 || m.cores() == 1), "size 1");
    assertTrue(models.stream().anyMatch(m -> m.workers() == 2 || m.cores() == 2), "size 2");
    assertTrue(models.stream().anyMatch(m -> m.workers() == 1000), "size 1000");
    assertTrue(all.stream().anyMatch(c -> c.load <= 0.5) && all.stream().anyMatch(c -> c.load >= 5));
    assertTrue(all.stream().anyMatch(c -> c.scenario.description().contains("bursts")));
    assertTrue(all.stream().anyMatch(c -> c.scenario.description().contains("ramp 0.3x")));
    assertTrue(all.stream().anyMatch(c -> c.scenario.tierShare(1) == 0.5
        && c.scenario.tierShare(5) == 0.5));
    assertTrue(all.stream().anyMatch(c -> c.scenario.tierShare(5) == 0.95));
    assertTrue(all.stream().anyMatch(c -> c.scenario.fixedPriority() < 0
        && c.scenario.tierShare(0) > 0.16 && c.scenario.tierShare(0) < 0.17), "6 tiers uniform");
    assertTrue(all.stream().anyMatch(c -> c.scenario.fixedPriority() == Corpus.DEFAULT_PRIORITY));
    assertTrue(all.stream().anyMatch(Corpus.Case::lowLoad));
    // Rates where a shedder samples the latency (past 5,120 immediate admissions a second), both
    // below capacity and over it.
    assertTrue(all.stream().anyMatch(c -> c.lowLoad() && c.scenario.arrivalsAt(10) > 6000));
    assertTrue(all.stream().anyMatch(c -> c.load > 1 && c.scenario.model().capacity() > 6000));
    // Cold starts belong to the cold-start family alone.
    assertTrue(Corpus.family("cold-start").stream().allMatch(c -> c.scenario.model().startsCold()));
    assertTrue(all.stream().filter(c -> !c.family.equals("cold-start"))
        .noneMatch(c -> c.scenario.model().startsCold()));
  }

  @Test
  void generationIsDeterministic() {
    List<String> a = Corpus.all().stream().map(Object::toString).collect(Collectors.toList());
    List<String> b = Corpus.all().stream().map(Object::toString).collect(Collectors.toList());
    assertEquals(a, b);
    List<Corpus.Case> some = sample();
    List<Scorecard.Contender> guards = Scorecard.standard();
    String first = Scorecard.format(Scorecard.run(some, guards, 2), guards, true);
    String second = Scorecard.format(Scorecard.run(some, guards, 1), guards, true);
    assertEquals(first, second);
  }

  @Test
  void theOracleIsAtLeastAsGoodAsAnyFixedLimitInItsSweep() {
    for (Corpus.Case c : sample()) {
      Oracle.Sweep s = Oracle.sweep(c);
      double best = s.bestReport.goodput(-1);
      assertTrue(s.goodput.size() >= 5, c + ": " + s.goodput);
      assertEquals(s.goodput.keySet(), s.topP99Ms.keySet());
      for (Map.Entry<Integer, Double> e : s.goodput.entrySet()) {
        // Within a thousandth the oracle takes the lower top-tier P99.
        assertTrue(best >= 0.999 * e.getValue(), c + ": limit " + e.getKey() + " had "
            + e.getValue() + "/s, the oracle " + best + "/s");
      }
    }
  }

  @Test
  void theOracleIsTheMostGoodputAndWithinAThousandthOfItTheLowestTopTierP99() {
    // cpu-07: run by run, each within a thousandth of the best before it, the sweep drifted to
    // 595.63/s where a limit had 596.25/s. cpu-04: it kept a run whose top-tier P99 was higher
    // than that of a run within a thousandth of the most.
    for (Corpus.Case c : List.of(Corpus.family("cpu").get(7), Corpus.family("cpu").get(4))) {
      Oracle.Sweep s = Oracle.sweep(c);
      double best = s.bestReport.goodput(-1);
      double bestP99 = s.bestReport.latencyQuantileNanos(c.topTier(), 0.99) / 1e6;
      double most = Math.max(best, s.goodput.values().stream().mapToDouble(g -> g).max()
          .orElseThrow());
      assertTrue(best >= 0.999 * most, c + ": the oracle " + best + "/s, a limit " + most + "/s");
      for (Map.Entry<Integer, Double> e : s.goodput.entrySet()) {
        if (e.getValue() >= 0.999 * most) {
          assertTrue(s.topP99Ms.get(e.getKey()) >= bestP99, c + ": limit " + e.getKey() + " had "
              + e.getValue() + "/s and a top-tier P99 of " + s.topP99Ms.get(e.getKey())
              + " ms, the oracle (limit " + s.best + ", cut " + s.headroom + ") " + best
              + "/s and " + bestP99 + " ms");
        }
      }
    }
  }

  @Test
  void aServiceOverloadedAtItsStartIsNotLowLoad() {
    // busy-start-01: 0.8x of its full-speed capacity, but at a tenth of its speed for the first
    // 2 s: 8x what it can serve then. Goal 5 asks a low-load scenario to shed nothing from the
    // start, "where no guard should shed"; here even the clairvoyant oracle must.
    Corpus.Case c = Corpus.family("busy-start").get(1);
    assertTrue(c.scenario.description().contains("speed x0.10 from 0 to 2 s; 0.8x"), c.toString());
    assertTrue(c.peakUtilisation() > 5, "peak " + c.peakUtilisation());
    assertFalse(c.lowLoad(), c.toString());
    // A steady service at 0.8x is low load from its start to the window's end.
    assertTrue(Corpus.family("cpu").get(17).lowLoad());
  }

  @Test
  void theIdealCutShedsExactlyTheLowestPrioritiesOverCapacity() {
    Scenario two = Corpus.family("pool-lognormal").get(0).scenario.toBuilder()
        .tierMix(Corpus.TWO_TIERS).build();
    assertEquals(Priority.LEVELS, Oracle.cutoff(two, 1000, 1000));
    // 750 of 1000: all of tier 1 (500), half of tier 5's cohorts.
    assertEquals(Priority.of(5, 64), Oracle.cutoff(two, 1000, 750));
    // 250 of 1000: half of tier 1.
    assertEquals(Priority.of(1, 64), Oracle.cutoff(two, 1000, 250));
    Scenario one = two.toBuilder().fixedPriority(Corpus.DEFAULT_PRIORITY).build();
    assertEquals(Priority.LEVELS, Oracle.cutoff(one, 1000, 250), "nothing to cut between");
  }

  @Test
  void aColdServiceIsJudgedAgainstItsWarmUnloadedLatency() {
    Corpus.Case c = Corpus.family("cold-start").stream()
        .filter(k -> k.scenario.description().contains("cold at 0.05x")).findFirst().orElseThrow();
    // Unguarded at 0.3 of its warm capacity, this service, cold at a twentieth of its speed,
    // never warms and answers nothing in time: no P99 to judge a guard against.
    Scenario cold = c.scenario.toBuilder()
        .arrivalsPerSecond(t -> 0.3 * c.scenario.model().capacity()).build();
    assertEquals(0, Simulation.run(cold, Guard.NONE).report(Corpus.WARM, Corpus.END).goodput(-1));
    Scenario warm = c.scenario.toBuilder().service(c.scenario.model().warm()).build();
    assertEquals(c.scenario.model().warm().toString(),
        c.scenario.model().toString().replaceFirst("; cold at .*? warm it", ""));
    double p99 = Scorecard.unloadedP99Ms(c);
    assertTrue(p99 > 0, "the reference is a warm service's P99: " + p99);
    assertEquals(p99, Scorecard.unloadedP99Ms(new Corpus.Case(warm, c.family, c.heldOut, c.load)));
  }

  @Test
  void aGuardThatAnswersNoneOfTheTopTierHasNoP99ToMeetAGoalWith() {
    // Closed from the start: every request is turned away, so no success has a latency.
    Scorecard.Contender closed = new Scorecard.Contender("closed", (timer, s) -> {
      LoadShedder shedder = LoadShedder.builder().timer(timer).build();
      shedder.close();
      return shedder;
    });
    List<Scorecard.Contender> guards = List.of(closed, Scorecard.of(Guard.NONE));
    Corpus.Case fits = Corpus.family("cpu").stream().filter(Corpus.Case::topTierFits)
        .filter(c -> !c.lowLoad()).findFirst().orElseThrow();
    Scorecard.Row row = Scorecard.row(fits, guards);
    assertEquals(0, row.get("closed").topSuccess);
    assertEquals(0, row.get("closed").topP99Ms, "a P99 of no success reads 0");
    assertEquals("0%", column(Scorecard.format(List.of(row), guards, false), "closed", 2),
        "not within 2x unloaded");

    // Unguarded, this low-load service, cold at first, never warms and answers none of its top
    // tier: there is no P99 of no guard's to be within 10% of, so the scenario is not judged.
    Corpus.Case cold = Corpus.family("cold-start").stream().filter(Corpus.Case::lowLoad)
        .findFirst().orElseThrow();
    Scorecard.Row coldRow = Scorecard.row(cold, guards);
    assertEquals(0, coldRow.get("none").topSuccess);
    String card = Scorecard.format(List.of(coldRow), guards, false);
    assertEquals("NaN%", column(card, "closed", 4).split(" +")[3], card);
  }

  @Test
  void aP99WithinTwiceUnloadedIsReachableOnlyAtALimitThatKeepsTheOraclesGoodput() {
    Corpus.Case c = Corpus.family("cpu").get(0);
    Report best = new Report(c.scenario, "oracle", Corpus.WARM, Corpus.END);
    for (int i = 0; i < 1000; i++) {
      best.add(c.topTier(), Answer.OK, 10_000_000L);
    }
    best.finish();
    Oracle.Sweep s = new Oracle.Sweep();
    s.best = 8;
    s.bestReport = best;
    s.bestStart = best;
    double g = best.goodput(-1);
    s.goodput.put(8, g);
    s.topP99Ms.put(8, 50.0); // the oracle's own limit: 5x the unloaded 10 ms
    s.goodput.put(4, 0.995 * g);
    s.topP99Ms.put(4, 30.0);
    s.goodput.put(2, 0.98 * g);
    s.topP99Ms.put(2, 15.0); // within 2x, but at 2% less goodput than the oracle's
    assertFalse(new Scorecard.Row(c, s, 10).p99Reachable);
    s.topP99Ms.put(4, 20.0);
    assertTrue(new Scorecard.Row(c, s, 10).p99Reachable, "within 1% of the goodput, at 2x");
    s.topP99Ms.put(4, Double.NaN);
    assertFalse(new Scorecard.Row(c, s, 10).p99Reachable, "no top-tier success has no P99");
  }

  /** The {@code index}-th '|'-separated column of {@code guard}'s overall line, trimmed. */
  private static String column(String card, String guard, int index) {
    String line = card.lines().filter(l -> l.startsWith(guard + " ")).reduce((a, b) -> b)
        .orElseThrow();
    return line.split("\\|")[index].trim();
  }

  /** A few cheap scenarios of different families. */
  private static List<Corpus.Case> sample() {
    return List.of(Corpus.family("cpu").get(0), Corpus.family("pool-bimodal").get(1),
        Corpus.family("gc-stall").get(2), Corpus.family("single-tier").get(3));
  }

  @Test
  void anotherStreamChangesOnlyTheRunsSeeds() {
    List<Corpus.Case> base = Corpus.all();
    assertSame(base, Corpus.stream(base, 0));
    List<Corpus.Case> other = Corpus.stream(base, 7);
    assertEquals(base.size(), other.size());
    for (int i = 0; i < base.size(); i++) {
      Corpus.Case a = base.get(i);
      Corpus.Case b = other.get(i);
      assertEquals(a.scenario.name, b.scenario.name);
      assertEquals(a.family, b.family);
      assertEquals(a.heldOut, b.heldOut);
      assertEquals(a.load, b.load);
      assertEquals(a.scenario.seed + 7, b.scenario.seed);
      assertEquals(a.toString(), b.toString());
    }
  }

  @Test
  void aLowLoadRunThatShedsOnlyAsItStartsMissesTheGoalOfNothingShed() {
    Corpus.Case c = Corpus.family("single-tier").stream().filter(Corpus.Case::lowLoad)
        .findFirst().orElseThrow();
    // One request at a time and a queue of one until the window opens; then room for everything.
    long opens = (long) (Corpus.WARM * 1e9);
    Scorecard.Contender startOnly = new Scorecard.Contender("start-only", (timer, s) ->
        LoadShedder.builder().timer(timer).requestTimeout(Duration.ofSeconds(60))
            .queueCapacity(1).rejector(Rejectors::none)
            .limit(() -> new Limit() {
              @Override
              public int initialLimit() {
                return 1;
              }

              @Override
              public int maxLimit() {
                return 100_000;
              }

              @Override
              public int update(ControlWindow w) {
                return w.nowNanos() < opens ? 1 : 100_000;
              }
            }).build());
    List<Scorecard.Contender> guards = List.of(startOnly, Scorecard.of(Guard.NONE));
    Scorecard.Row row = Scorecard.row(c, guards);

    Scorecard.Metrics m = row.get("start-only");
    assertEquals(0, m.shed, "nothing shed in the measured window");
    assertTrue(m.startShed > 0.5, "most of the start shed: " + m.startShed);
    assertEquals(0, row.get("none").startShed);
    String card = Scorecard.format(List.of(row), guards, false);
    String line = card.lines().filter(l -> l.startsWith("start-only")).findFirst().orElseThrow();
    assertTrue(line.endsWith("-"), "goal 5 missed: " + line);
    String none = card.lines().filter(l -> l.startsWith("none")).findFirst().orElseThrow();
    assertTrue(none.contains(" 0    0.0%"), "no guard sheds nothing at the start: " + none);
  }
}
