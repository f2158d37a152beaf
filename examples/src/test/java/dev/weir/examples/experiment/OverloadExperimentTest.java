package dev.weir.examples.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.examples.Status;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class OverloadExperimentTest {
  @Test
  void smokeRunsEveryGuardAtOneLoadAndReportsEach() throws Exception {
    OverloadExperiment.Settings s = OverloadExperiment.Settings.parse(new String[] {
        "--loads", "0.5", "--seconds", "1", "--warmup", "0", "--baseline", "0.3",
        "--html", "none"});
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    OverloadExperiment.Result r = OverloadExperiment.run(s,
        new PrintStream(bytes, true, StandardCharsets.UTF_8),
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    String out = bytes.toString(StandardCharsets.UTF_8);

    List<String> names = Guard.all().stream().map(Guard::name).toList();
    assertEquals(names, r.points().stream().map(Point::guard).toList());
    for (Point p : r.points()) {
      // Half the capacity for a second: about 200 requests, nearly all served; the margins
      // allow for a stalled CI box.
      assertTrue(p.offeredPerSecond() > 100, p.toString());
      assertEquals(1, Arrays.stream(p.statusShares()).sum(), 1e-9, p.toString());
      assertTrue(p.share(Status.OK) > 0.5, p.guard() + " served " + p.share(Status.OK));
      assertTrue(p.topP99Millis() >= 1, p.toString());
      assertTrue(out.lines().anyMatch(l -> l.startsWith("0.5x  " + p.guard() + " ")),
          p.guard() + " has a row in\n" + out);
    }
    assertTrue(out.contains(OverloadExperiment.header()), out);
    assertEquals(0.3, r.baseline().load());
    // Only the P99 goal is decidable at 0.5x.
    assertEquals(1, r.goals().size(), r.goals().toString());
    assertTrue(r.repeats().isEmpty(), "0.5x is not a goal's load: one run each");
    assertFalse(out.contains("every guard ran"), out);
    HtmlReportTest.parse(r.html());
  }

  @Test
  void atAGoalsLoadEveryGuardRunsAgainOnTheNextSeedAndTheGoalsPairTheRuns() throws Exception {
    OverloadExperiment.Settings s = OverloadExperiment.Settings.parse(new String[] {
        "--loads", "0.5,1.5", "--guards", "jetty-qos,weir", "--runs", "2", "--seconds", "1",
        "--warmup", "0", "--baseline", "0", "--html", "none", "--seed", "7"});
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    OverloadExperiment.Result r = OverloadExperiment.run(s,
        new PrintStream(bytes, true, StandardCharsets.UTF_8),
        new PrintStream(log, true, StandardCharsets.UTF_8));
    String out = bytes.toString(StandardCharsets.UTF_8);

    assertEquals(4, r.points().size(), "the table: both guards at both loads, once");
    assertEquals(List.of("jetty-qos", "weir"),
        r.repeats().stream().map(Point::guard).toList(), "run 2: 1.5x only, guards in turn");
    assertTrue(r.repeats().stream().allMatch(p -> p.load() == 1.5), r.repeats().toString());
    assertTrue(log.toString(StandardCharsets.UTF_8).contains("running weir, run 2 of 2 at 1.5x"),
        log.toString(StandardCharsets.UTF_8));
    assertTrue(out.contains("At 1.5x every guard ran 2 times, the i-th run on seed 7 + i - 1"),
        out);
    assertTrue(out.contains("Every run at 1.5x (run 1 is the table's):"), out);
    assertTrue(out.lines().anyMatch(l -> l.startsWith("1.5x  weir ") && l.contains("total/s")),
        out);
    assertEquals(2, r.goals().size(), r.goals().toString());
    for (Goals.Goal g : r.goals()) {
      assertTrue(g.evidence().startsWith("means of 2 paired runs: weir "), g.toString());
    }
  }

  @Test
  void rejectsBadOptionsNamingThem() {
    String[][] bad = {
        {"--loads", "1,x"}, {"--loads", "1,1"}, {"--loads", "0"}, {"--seconds", "0"},
        {"--guards", "weir,nginx"}, {"--bogus", "1"}, {"--seconds"}, {"stray"},
        {"--loads", "100", "--service-ms", "1"}, {"--help=yes"}, {"--runs", "0"},
        {"--runs", "21"}};
    for (String[] args : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> OverloadExperiment.Settings.parse(args), String.join(" ", args));
      String option = args[0].startsWith("--") ? args[0].split("=")[0] : args[0];
      assertTrue(e.getMessage().contains(option),
          e.getMessage() + " names " + option);
    }
    assertNull(OverloadExperiment.Settings.parse(new String[] {"--help"}));
    OverloadExperiment.Settings s = OverloadExperiment.Settings.parse(
        new String[] {"--guards", "weir,none", "--loads=2,0.5", "--html", "none"});
    assertEquals(List.of("weir", "none"), s.guards.stream().map(Guard::name).toList());
    assertEquals(List.of(2.0, 0.5), s.loads);
    assertNull(s.html);
  }
}
