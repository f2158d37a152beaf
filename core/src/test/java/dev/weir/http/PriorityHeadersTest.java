package dev.weir.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.Priority;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class PriorityHeadersTest {
  private static final PriorityHeaders DEFAULTS = PriorityHeaders.defaults();

  private static int resolve(String... pairs) {
    Map<String, String> m = new java.util.HashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      m.put(pairs[i], pairs[i + 1]);
    }
    return DEFAULTS.priority(m, ContractCasesTest.MAP);
  }

  @Test
  void baggageIsReadInLinearTime() {
    // Many members and no '=' after them: the old reader scanned to the end of the header for
    // each member's '=', about 33 million characters per request at 8 KB. Linear is 8192.
    String dense = "a,".repeat(4096);
    String noComma = "a".repeat(8192);
    String semis = "weir-tier=1,".repeat(682);
    String huge = "k=v1234,".repeat(15_000) + "weir-tier=1";
    long start = System.nanoTime();
    for (int i = 0; i < 5_000; i++) {
      assertEquals(3, Priority.tier(resolve("baggage", dense)));
      assertEquals(3, Priority.tier(resolve("baggage", noComma)));
      assertEquals(3, Priority.tier(resolve("baggage", semis))); // a duplicate key
      assertEquals(3, Priority.tier(resolve("baggage", huge)));
    }
    long ms = (System.nanoTime() - start) / 1_000_000;
    // Linear: about 20 000 passes over 8 KB, well under a second; quadratic would take minutes.
    assertTrue(ms < 10_000, "took " + ms + " ms");
  }

  @Test
  void neverThrowsOnRandomInput() {
    Random random = new Random(42);
    String alphabet = "0123456789:,;= \tweir-tiercohort\u0663\uffff";
    for (int i = 0; i < 20_000; i++) {
      StringBuilder b = new StringBuilder();
      int n = random.nextInt(40);
      for (int j = 0; j < n; j++) {
        b.append(alphabet.charAt(random.nextInt(alphabet.length())));
      }
      String v = b.toString();
      assertTrue(Priority.isValid(resolve("x-weir-tier", v, "baggage", v, "x-weir-user", v)), v);
    }
  }

  @Test
  void unicodeDigitsAreNotDigits() {
    assertEquals(3, Priority.tier(resolve("x-weir-tier", "\u0663")));
    assertEquals(3, Priority.tier(resolve("x-weir-tier", "\uff10")));
  }

  @Test
  void namesAreLookedUpInLowerCase() {
    PriorityHeaders p = PriorityHeaders.builder().tierHeader("X-Prio").userKeyHeader(null)
        .build();
    assertEquals("x-prio", p.tierHeader());
    assertEquals(Priority.of(2, 3), p.priority(Map.of("x-prio", "2:3"), ContractCasesTest.MAP));
    assertEquals(Priority.of(3, 64), p.defaultPriority());
  }

  @Test
  void settingsAreCheckedNamingThem() {
    PriorityHeaders.Builder b = PriorityHeaders.builder();
    for (Runnable r : new Runnable[] {() -> b.defaultTier(6), () -> b.callerTier("x", -1),
        () -> b.callerTier(" ", 1), () -> b.callerTier("a,b", 1), () -> b.tierHeader("bad header"),
        () -> b.maxHeaderLength(0), () -> b.maxHeaderLength(8193), () -> b.cohorts(null)}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, r::run);
      assertTrue(e.getMessage().matches("^[a-zA-Z]+:? .*"), e.getMessage());
    }
    HttpAnswers.Builder a = HttpAnswers.builder();
    for (Runnable r : new Runnable[] {() -> a.shedStatus(399), () -> a.unavailableStatus(600),
        () -> a.retryAfter(java.time.Duration.ofSeconds(-1)), () -> a.format(null)}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, r::run);
      assertTrue(e.getMessage().matches("^[a-zA-Z]+ must .*"), e.getMessage());
    }
  }
}
