package dev.weir.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class OverloadDemoTest {
  private static TierStats stats(int tier, long ok, long tooMany, long timeout, long... millis) {
    long[] nanos = new long[millis.length];
    for (int i = 0; i < millis.length; i++) {
      nanos[i] = millis[i] * 1_000_000;
    }
    return new TierStats(tier, 10, new long[] {ok, tooMany, 0, timeout, 0}, nanos);
  }

  @Test
  void tablePutsEachTierWithoutAndWithWeirSideBySide() {
    LoadReport without = new LoadReport(10, List.of(
        stats(1, 500, 0, 5500, 900, 950), stats(5, 400, 0, 5600, 910, 990)), 0);
    LoadReport with = new LoadReport(10, List.of(
        stats(1, 3900, 100, 0, 20, 60), stats(5, 100, 5900, 0, 30, 70)), 0);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    OverloadDemo.printComparison(new PrintStream(bytes, true, StandardCharsets.UTF_8), 1.5, 600,
        without, with);
    List<String> lines = List.of(bytes.toString(StandardCharsets.UTF_8).split("\n"));

    assertEquals("Offered load 1.5x capacity (600 req/s), 10 s measured", lines.get(0));
    assertEquals(OverloadDemo.header(), lines.get(1));
    assertTrue(lines.get(2).matches("1 +without Weir +600\\.0 +50\\.0 +8\\.3% .*"), lines.get(2));
    assertTrue(lines.get(3).matches("1 +with Weir +400\\.0 +390\\.0 +97\\.5% +2\\.5% .*"),
        lines.get(3));
    assertTrue(
        lines.get(5).matches("5 +with Weir +600\\.0 +10\\.0 +1\\.7% +98\\.3% .* 30\\.0 +70\\.0"),
        lines.get(5));
    assertTrue(lines.get(6).startsWith("all   without Weir"), lines.get(6));
    assertTrue(lines.get(7).matches("all +with Weir +1000\\.0 +400\\.0 .*"), lines.get(7));
    // Columns line up with the header.
    for (int i = 2; i <= 7; i++) {
      assertEquals(lines.get(1).length(), lines.get(i).length(), "row " + i);
    }
  }
}
