package dev.weir.examples.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A one-second run of the closed-loop bench, on real server JVMs and the real client. */
class ClosedLoopBenchTest {

  @Test
  void measuresEachGuardOnItsOwnServerInAlternatingSlicesTheShedPathAnswers429AndTheQueuedOne200()
      throws Exception {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buf, true, StandardCharsets.UTF_8);
    ClosedLoopBench.run(out, new PrintStream(new ByteArrayOutputStream()),
        List.of(Guard.NONE, OverheadServer.PASS_FILTER, OverheadServer.WEIR_SHED,
            OverheadServer.WEIR_QUEUED), 2, 1, 0, 0, 1, 2, "");
    String text = buf.toString(StandardCharsets.UTF_8);
    String none = row(text, Guard.NONE);
    String shed = row(text, OverheadServer.WEIR_SHED);
    assertEquals("100.0%", column(none, 4), text);
    assertEquals("100.0%", column(row(text, OverheadServer.PASS_FILTER), 4), text);
    assertEquals("0.0%", column(shed, 4), "every request shed: " + text);
    // A limit of one and two connections: a request that finds the permit taken waits and is
    // resumed, and every one is answered.
    assertEquals("100.0%", column(row(text, OverheadServer.WEIR_QUEUED), 4), text);
    assertTrue(Double.parseDouble(column(none, 1)) > 0, text);
    assertTrue(Double.parseDouble(column(shed, 9)) > 0, "bytes per request measured: " + text);
    // Two slices each, alternating: each guard is compared with none's slice of the same cycle.
    assertEquals("+0.0%", column(none, 2), "none against itself: " + text);
    assertEquals("0.00%", column(none, 3), "no spread against itself: " + text);
    assertTrue(text.contains("means over 2 cycles"), text);
  }

  @Test
  void theErrorCountsTheRoundsWhenFreshJvmsDifferMoreThanTheirCycles() {
    ClosedLoopBench.Estimate cycles =
        new ClosedLoopBench.Estimate(List.of(0.01, 0.02, 0.01, 0.02));
    ClosedLoopBench.Estimate rounds = new ClosedLoopBench.Estimate(List.of(-0.05, 0.05));
    assertEquals(0.015, cycles.mean, 1e-12);
    assertEquals(Math.sqrt(0.0001 / 3 / 4), cycles.standardError, 1e-12);
    assertEquals(0.05, rounds.standardError, 1e-12);
    assertEquals(0.05, ClosedLoopBench.larger(cycles, rounds), 1e-12);
    assertEquals(cycles.standardError, ClosedLoopBench.larger(cycles,
        new ClosedLoopBench.Estimate(List.of(0.3))), 0, "one round: the cycles' alone");
  }

  @Test
  void theWarmUpGoesOnInStepsWhileTheServersJitCompilesWithinTheSettleBound() throws Exception {
    // A fresh JVM compiles throughout its first seconds of traffic: no step is quiet this early,
    // so the warm-up takes whole steps until the bound is past.
    Duration d = Duration.ofSeconds(60);
    ClosedLoopBench.Run r = ClosedLoopBench.measure(Guard.NONE, 1, 0, 1, 2, "", d);
    assertTrue(r.warmupSeconds >= JitWarmup.STEP_SECONDS && r.warmupSeconds < 3 * 2 + 1,
        "at least one step, at most the bound and one step: " + r.warmupSeconds);
    assertTrue(r.jitMillis >= 0, "HotSpot reports its compilation time: " + r.jitMillis);
    ClosedLoopBench.Run fixed = ClosedLoopBench.measure(Guard.NONE, 1, 0, 0, 2, "", d);
    assertTrue(fixed.warmupSeconds < 1, "no settling asked: " + fixed.warmupSeconds);
  }

  @Test
  void rejectsUnknownGuardsAndOptions() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ClosedLoopBench.options(new String[] {"--rate", "5"}));
    assertTrue(e.getMessage().contains("--rate"), e.getMessage());
    assertTrue(ClosedLoopBench.guardNames().containsAll(
        List.of(Guard.NONE, Guard.WEIR, OverheadServer.WEIR_SHED, OverheadServer.WEIR_QUEUED,
            OverheadServer.PASS_FILTER)));
  }

  @Test
  void guardsAreTrimmedAndListedOnce() {
    assertEquals(List.of(Guard.NONE, Guard.WEIR), ClosedLoopBench.guards(" none , weir"));
    assertEquals(ClosedLoopBench.guardNames(), ClosedLoopBench.guards(null));
    for (String bad : List.of("none,none", "none, none", "none,nginx", "none,", "")) {
      assertThrows(IllegalArgumentException.class, () -> ClosedLoopBench.guards(bad), bad);
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ClosedLoopBench.guards("weir, none ,weir"));
    assertTrue(e.getMessage().contains("--guards lists weir twice"), e.getMessage());
    assertTrue(ClosedLoopBench.USAGE.contains("--jvm-args=--"), ClosedLoopBench.USAGE);
  }

  @Test
  void aServerJvmThatDoesNotStartIsReportedWithItsExit() {
    IOException e = assertThrows(IOException.class,
        () -> ClosedLoopBench.measure(Guard.NONE, 1, 0, 0, 1, "-Xbogus", Duration.ofSeconds(60)));
    assertTrue(e.getMessage().contains("server JVM for none exited with status 1 before it"
        + " printed its port"), e.getMessage());
    assertTrue(e.getMessage().contains("-Xbogus"), "the command is named: " + e.getMessage());
  }

  @Test
  void aServerJvmThatHangsIsStoppedAtTheDeadline() {
    // Suspended until a debugger attaches, which none does: it never prints its port.
    long start = System.nanoTime();
    IOException e = assertThrows(IOException.class, () -> ClosedLoopBench.measure(Guard.NONE, 1, 0,
        0, 1, "-agentlib:jdwp=transport=dt_socket,server=y,suspend=y,address=127.0.0.1:0",
        Duration.ofSeconds(2)));
    assertTrue(e.getMessage().contains("printed no port within 2 s"), e.getMessage());
    assertTrue(e.getMessage().contains("Listening for transport"),
        "what it printed is shown: " + e.getMessage());
    assertTrue(System.nanoTime() - start < 20e9, "stopped promptly");
  }

  private static String row(String text, String guard) {
    return Arrays.stream(text.split("\n")).filter(l -> l.startsWith(guard + " "))
        .findFirst().orElseThrow(() -> new AssertionError("no row for " + guard + ": " + text));
  }

  private static String column(String row, int i) {
    return row.trim().split("\\s+")[i];
  }
}
