package dev.weir.examples.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.examples.LoadReport;
import dev.weir.examples.TestReports;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The recovery bench's reading of a run, and a short run on a real server. */
class RecoveryBenchTest {
  /** Two seconds before, two of overload, four after. */
  private static final RecoveryBench.Plan PLAN = RecoveryBench.Plan.work(List.of(Guard.WEIR),
      List.of(RecoveryBench.Event.BURST), 0.5, 3, 3, 0, 2, 2, 4, 1, 1);

  @Test
  void recoveryIsTheFirstSecondFromWhichEverySecondIsWhole() {
    List<LoadReport> seconds = new ArrayList<>();
    seconds.add(TestReports.second(100, 0, 10, 100, 0));
    seconds.add(TestReports.second(100, 0, 10, 100, 0));
    seconds.add(TestReports.second(200, 100, 40, 0, 300)); // the overload
    seconds.add(TestReports.second(200, 100, 40, 0, 300));
    seconds.add(TestReports.second(100, 0, 10, 95, 5));    // tier 5 not yet all served
    seconds.add(TestReports.second(100, 0, 25, 100, 0));   // tier 1's P99 above twice 10 ms
    seconds.add(TestReports.second(100, 0, 20, 100, 0));   // twice is still whole
    seconds.add(TestReports.second(100, 0, 10, 99, 1));    // 99% is whole

    RecoveryBench.Summary s = RecoveryBench.summarize(PLAN, seconds);

    assertEquals(10, s.p99Before(), 1e-9);
    assertEquals(200, s.goodputDuring(), 1e-9, "successes a second during the overload");
    assertEquals(2.0 / 3, s.tier1During(), 1e-9);
    assertEquals(40, s.p99During(), 1e-9);
    assertEquals(2, s.recoveredAfter(), "whole from the third second after the overload");
    assertEquals(1, s.failedAfterRecovery(), "the one request failed from then on");
  }

  @Test
  void aLastSecondThatIsNotWholeIsNoRecovery() {
    List<LoadReport> seconds = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      seconds.add(TestReports.second(100, 0, 10, 100, 0));
    }
    seconds.add(TestReports.second(100, 0, 10, 90, 10));

    RecoveryBench.Summary s = RecoveryBench.summarize(PLAN, seconds);

    assertEquals(-1, s.recoveredAfter());
    assertEquals(0, s.failedAfterRecovery());
  }

  @Test
  void optionsParseToAPlanAndBadOnesAreNamed() {
    RecoveryBench.Plan work = RecoveryBench.parse(new String[0]);
    assertEquals(Endpoint.WORK, work.endpoint());
    assertEquals(400, work.capacity(), 1e-9, "8 connections of 20 ms");
    assertEquals(List.of(RecoveryBench.Event.BURST, RecoveryBench.Event.SLOWDOWN), work.events());
    assertEquals(List.of("none", "jetty-qos", "netflix-gradient2", "weir"), work.guards());
    RecoveryBench.Plan compute = RecoveryBench.parse(new String[] {"--endpoint", "compute",
        "--compute-capacity", "524", "--events", "slowdown", "--burst", "2"});
    assertEquals(Endpoint.COMPUTE, compute.endpoint());
    assertEquals(524, compute.capacity(), 1e-9);
    assertEquals(List.of(RecoveryBench.Event.SLOWDOWN), compute.events());
    assertEquals(0, RecoveryBench.parse(new String[] {"--endpoint", "compute"}).capacity(),
        "measured first");
    assertEquals(null, RecoveryBench.parse(new String[] {"--help"}));
    for (String[] bad : new String[][] {{"--endpoint", "hello"}, {"--compute-capacity", "500"},
        {"--events", "stall"}, {"--load", "1"}, {"--guards", "nginx"}}) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> RecoveryBench.parse(bad));
      assertTrue(e.getMessage().startsWith(bad[0]), e.getMessage());
    }
  }

  @Test
  void eachEventRunsSecondBySecondOnAFreshServer() throws Exception {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    // One second before, one of overload, one after, at a tenth of /work's capacity: the same
    // load both ways, so the bench's machinery, not the guard, is what is checked.
    RecoveryBench.run(RecoveryBench.Plan.work(List.of(Guard.WEIR),
        List.of(RecoveryBench.Event.BURST, RecoveryBench.Event.SLOWDOWN), 0.1, 1, 1, 0, 1, 1, 1, 1,
        7), new PrintStream(buf, true, StandardCharsets.UTF_8));
    String text = buf.toString(StandardCharsets.UTF_8);
    assertTrue(text.contains("a burst, seed 7"), text);
    assertTrue(text.contains("a slower downstream, seed 7"), text);
    for (String row : new String[] {"  0 ", "  1*", "  2 "}) {
      assertEquals(2, text.lines().filter(l -> l.startsWith(row)).count(), row + ": " + text);
    }
    assertEquals(2, text.lines().filter(l -> l.matches("(burst|slowdown) +weir .*")).count(), text);
    assertFalse(text.contains("NaN"), text);
  }
}
