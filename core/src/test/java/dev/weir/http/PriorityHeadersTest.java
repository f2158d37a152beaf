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

  /** Header fields as a list of name-value pairs, read by index. */
  private static final HeaderFields<java.util.List<String[]>> FIELDS =
      new HeaderFields<java.util.List<String[]>>() {
        @Override
        public int size(java.util.List<String[]> fields) {
          return fields.size();
        }

        @Override
        public String name(java.util.List<String[]> fields, int index) {
          return fields.get(index)[0];
        }

        @Override
        public String value(java.util.List<String[]> fields, int index) {
          return fields.get(index)[1];
        }
      };

  /** The same fields read by name, as a servlet container presents them: repeats joined. */
  private static final HeaderLookup<java.util.List<String[]>> BY_NAME = (fields, name) -> {
    String joined = null;
    for (String[] f : fields) {
      if (f[0].equalsIgnoreCase(name)) {
        String v = f[1] == null ? "" : f[1];
        joined = joined == null ? v : joined + "," + v;
      }
    }
    return joined;
  };

  /**
   * Reading the fields in one pass gives what reading them by name gives, on random requests
   * mixing every header the contract reads (in any case, repeated, absent, hostile or too long)
   * with others, for the default settings and for caller tiers with the baggage off. A request
   * with no usable cohort gets a random one; so each way is read five times: both must be
   * deterministic, or both random (five equal random cohorts: one chance in 2^28), and then give
   * the same tier, and the same cohort when deterministic.
   */
  @Test
  void onePassOverTheFieldsReadsWhatLookupsRead() {
    PriorityHeaders[] settings = {
        PriorityHeaders.defaults(),
        PriorityHeaders.builder().readBaggage(false).callerTier("billing", 1)
            .callerTier("batch", 5).userKeyHeader(null).maxHeaderLength(8).build()};
    String[] names = {"X-Weir-Tier", "x-weir-tier", "BAGGAGE", "baggage", "X-Weir-User",
        "x-weir-caller", "Host", "Accept", "x-weir-tie", "baggages"};
    String[] values = {"1", "2:40", " 0 : 127 ", "1:999", "", null, "weir-tier=4",
        "weir-cohort=9,weir-tier=2", "weir-tier=1,weir-tier=2", "alice", "billing", "batch",
        "a-very-long-user-key", "x".repeat(9000), "5:", ","};
    Random random = new Random(7);
    for (int i = 0; i < 20_000; i++) {
      java.util.List<String[]> fields = new java.util.ArrayList<>();
      for (int n = random.nextInt(6); n > 0; n--) {
        fields.add(new String[] {names[random.nextInt(names.length)],
            values[random.nextInt(values.length)]});
      }
      String request = fields.stream().map(java.util.Arrays::toString)
          .collect(java.util.stream.Collectors.joining(" "));
      for (PriorityHeaders h : settings) {
        java.util.Set<Integer> byName = new java.util.HashSet<>();
        java.util.Set<Integer> onePass = new java.util.HashSet<>();
        for (int k = 0; k < 5; k++) {
          byName.add(h.priority(fields, BY_NAME));
          onePass.add(h.priorityFromFields(fields, FIELDS));
        }
        assertEquals(byName.size() == 1, onePass.size() == 1, "deterministic: " + request);
        assertEquals(byName.stream().map(Priority::tier).collect(java.util.stream.Collectors.toSet()),
            onePass.stream().map(Priority::tier).collect(java.util.stream.Collectors.toSet()),
            request);
        if (byName.size() == 1) {
          assertEquals(byName, onePass, request);
        }
      }
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
        () -> a.retryAfter(java.time.Duration.ofSeconds(-1)),
        () -> a.retryAfter(java.time.Duration.ofMillis(500)), () -> a.format(null)}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, r::run);
      assertTrue(e.getMessage().matches("^[a-zA-Z]+ must .*"), e.getMessage());
    }
    assertEquals(1, a.retryAfter(java.time.Duration.ofMillis(1500)).build().retryAfterSeconds(),
        "a second or more is rounded down to whole seconds");
    assertEquals(0, a.retryAfter(java.time.Duration.ZERO).build().retryAfterSeconds());
  }
  /**
   * A caller header longer than {@code maxHeaderLength} is ignored, so a caller-to-tier entry
   * longer than that could never apply: accepted, it would silently leave that caller's requests
   * at the default tier. The clash is refused when the settings are built, naming callerTier.
   */
  @Test
  void aCallerLongerThanTheLongestHeaderReadIsRefusedAtBuild() {
    for (PriorityHeaders.Builder b : new PriorityHeaders.Builder[] {
        PriorityHeaders.builder().callerTier("c".repeat(300), 0),
        PriorityHeaders.builder().callerTier("checkout", 0).maxHeaderLength(4),
        PriorityHeaders.builder().maxHeaderLength(4).callerTier("checkout", 0)}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
      assertTrue(e.getMessage().startsWith("callerTier"), e.getMessage());
      assertTrue(e.getMessage().contains("maxHeaderLength"), e.getMessage());
    }
    // At the bound it is read, and applies.
    PriorityHeaders p = PriorityHeaders.builder().callerTier("abcd", 0).maxHeaderLength(4).build();
    assertEquals(0, Priority.tier(p.priority(Map.of("x-weir-caller", "abcd"),
        ContractCasesTest.MAP)));
  }
}
