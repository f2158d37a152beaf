package dev.weir.examples.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A two-second run of the cold-start bench, on real server JVMs pinned to one core. */
class ColdStartBenchTest {

  @Test
  void eachGuardRunsOnAFreshPinnedServerAndWeirsLimitIsReadAtTheEnd() throws Exception {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buf, true, StandardCharsets.UTF_8);
    // Half of 100 req/s: far below any core's capacity, so both guards serve it all.
    ByteArrayOutputStream logBuf = new ByteArrayOutputStream();
    // Two seconds of load, traced every second.
    int lastCore = Runtime.getRuntime().availableProcessors() - 1;
    ColdStartBench.run(out, new PrintStream(logBuf, true, StandardCharsets.UTF_8), lastCore,
        List.of(Guard.WEIR, Guard.NONE), 1, 0.5, 100, 1, 1, 7, "", 1);
    String text = buf.toString(StandardCharsets.UTF_8);
    String log = logBuf.toString(StandardCharsets.UTF_8);
    assertTrue(log.matches("(?s).*trace weir seed 7 at +1 s: limit \\d+, in flight \\d+, queued"
        + " \\d+, cutoff \\d+, succeeded [0-9.]+/s, shed 0\\.0/s.*"),
        "Weir's first traced second: " + log);
    assertFalse(log.contains("trace none"), "no guard, no status to trace: " + log);
    assertTrue(text.contains("at 0.50x of 100.0 req/s = 50.0 req/s"), text);
    assertTrue(text.contains("the server's JVM on core " + lastCore + ")"), text);
    String[] weir = row(text, "| weir | 7 |");
    String[] none = row(text, "| none | 7 |");
    assertTrue(Double.parseDouble(weir[3].trim()) > 0, "Weir served: " + text);
    assertEquals("100.0%", weir[4].trim(), "tier 1 all served: " + text);
    assertTrue(Integer.parseInt(weir[7].trim()) >= 1, "the limit read from /weir/status: " + text);
    assertEquals("-", none[7].trim(), "no guard, no limit: " + text);
    assertEquals(" 1 ", row(text, "| weir | 1 |")[2], "one run, in the summary: " + text);
    // Collapsed means under 60% of what could be served: here the offered 50 req/s, not capacity.
    assertTrue(text.contains("collapsed (under 30.0 req/s)"), text);
    assertEquals(" 0 ", row(text, "| weir | 1 |")[3], "not collapsed: " + text);
  }

  private static String[] row(String text, String prefix) {
    return Arrays.stream(text.split("\n")).filter(l -> l.startsWith(prefix)).findFirst()
        .orElseThrow(() -> new AssertionError("no row " + prefix + ": " + text)).split("\\|");
  }
}
