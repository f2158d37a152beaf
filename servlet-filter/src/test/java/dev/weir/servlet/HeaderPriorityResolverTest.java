package dev.weir.servlet;

import static dev.weir.servlet.FakeRequests.withHeaders;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.Cohorts;
import dev.weir.Priority;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class HeaderPriorityResolverTest {
  private final HeaderPriorityResolver defaults = HeaderPriorityResolver.defaults();
  /** A priority with {@code tier} and a cohort from no key: random, so only its range is fixed. */
  private static void assertKeyless(int tier, int priority, String... message) {
    assertEquals(tier, Priority.tier(priority), String.join("", message));
    assertTrue(Priority.isValid(priority));
  }

  private int resolve(String... headers) {
    return defaults.resolve(withHeaders(headers));
  }

  @Test
  void nothingGivesTheDefaultTierAndARandomCohort() {
    assertKeyless(3, resolve());
  }

  @Test
  void tierHeaderWithAndWithoutCohort() {
    assertKeyless(1, resolve("X-Weir-Tier", "1"));
    assertEquals(Priority.of(1, 40), resolve("x-weir-tier", "1:40"));
    assertEquals(Priority.of(0, 0), resolve("X-Weir-Tier", " 0:0 "));
    assertEquals(Priority.of(5, 127), resolve("X-Weir-Tier", "5:127"));
  }

  @Test
  void malformedTierHeadersAreIgnored() {
    for (String bad : new String[] {"", " ", "-1", "6", "1:128", "1:-1", "a", "1:x", "1:2:3",
        ":", "1:", ":5", "99999999999999999999999999", "1 2", "０", "1".repeat(100_000)}) {
      assertKeyless(3, resolve("X-Weir-Tier", bad), "'" + bad.substring(0,
          Math.min(bad.length(), 20)) + "'");
    }
  }

  @Test
  void repeatedTierHeaderIsIgnored() {
    assertKeyless(3, resolve("X-Weir-Tier", "0", "X-Weir-Tier", "0"));
  }

  @Test
  void baggageEntries() {
    assertKeyless(2, resolve("baggage", "weir-tier=2"));
    assertEquals(Priority.of(1, 5), resolve("baggage", "a=b, weir-tier=1;p=q , weir-cohort=5"));
    assertEquals(Priority.of(1, 5), resolve("baggage", "weir-tier=1", "baggage", "weir-cohort=5"));
    assertEquals(Priority.of(3, 5), resolve("baggage", "weir-tier=x,weir-cohort=5"));
    assertKeyless(3, resolve("baggage", "weir-tier=7,weir-cohort=128"));
    assertKeyless(3, resolve("baggage", ",,,;;;===,weir-tier,=1,weir-tier=,weir-cohort= "));
    assertKeyless(3, resolve("baggage", "x=" + "y".repeat(9000) + ",weir-tier=1"));
    // The explicit header wins; a cohort it does not give can come from baggage.
    assertEquals(Priority.of(0, 9), resolve("X-Weir-Tier", "0", "baggage",
        "weir-tier=4,weir-cohort=9"));
    assertEquals(Priority.of(0, 1), resolve("X-Weir-Tier", "0:1", "baggage", "weir-cohort=9"));
  }

  @Test
  void callerMapsToATierAndUserKeyToACohort() {
    Cohorts cohorts = Cohorts.rotating(Duration.ofHours(1));
    HeaderPriorityResolver r = HeaderPriorityResolver.builder()
        .callerTier("checkout", 0).callerTier("batch", 5).defaultTier(2)
        .userKeyHeader("X-User").cohorts(cohorts).build();
    assertEquals(0, Priority.tier(r.resolve(withHeaders("X-Weir-Caller", "checkout"))));
    assertEquals(5, Priority.tier(r.resolve(withHeaders("X-Weir-Caller", " batch "))));
    assertEquals(2, Priority.tier(r.resolve(withHeaders("X-Weir-Caller", "unknown"))));
    assertEquals(1, Priority.tier(r.resolve(withHeaders("X-Weir-Caller", "batch",
        "X-Weir-Tier", "1"))));
    int p = r.resolve(withHeaders("X-User", "alice"));
    int expected = cohorts.cohort("alice");
    int again = cohorts.cohort("alice");
    assertTrue(Priority.cohort(p) == expected || Priority.cohort(p) == again); // hour boundary
    assertEquals(2, Priority.tier(p));
    assertEquals(7, Priority.cohort(r.resolve(withHeaders("X-User", "alice", "X-Weir-Tier",
        "2:7"))));
  }

  @Test
  void builderRejectsNonsenseNamingTheSetting() {
    HeaderPriorityResolver.Builder b = HeaderPriorityResolver.builder();
    assertMessage("defaultTier", assertThrows(IllegalArgumentException.class,
        () -> b.defaultTier(6)));
    assertMessage("callerTier", assertThrows(IllegalArgumentException.class,
        () -> b.callerTier("x", -1)));
    assertMessage("tierHeader", assertThrows(IllegalArgumentException.class,
        () -> b.tierHeader("bad header")));
    assertMessage("maxHeaderLength", assertThrows(IllegalArgumentException.class,
        () -> b.maxHeaderLength(0)));
  }

  private static void assertMessage(String setting, Exception e) {
    assertTrue(e.getMessage().contains(setting), e.getMessage());
  }
}
