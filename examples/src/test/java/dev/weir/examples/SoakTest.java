package dev.weir.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The chaos soak in its short mode, on each container: every route ends with nothing held and
 * nothing queued.
 */
class SoakTest {
  @ParameterizedTest
  @EnumSource(SoakServer.Container.class)
  void shortChaosSoakEndsCleanOnEveryRoute(SoakServer.Container container) throws Exception {
    assertClean(Soak.run(Duration.ofSeconds(4), container, true, true));
  }

  @Test
  void shortChaosSoakInTheDefaultModeEndsClean() throws Exception {
    assertClean(Soak.run(Duration.ofSeconds(4), SoakServer.Container.JETTY, false, true));
  }

  private static void assertClean(Soak.Summary s) {
    assertTrue(s.routes().containsKey("GET /work"), s.routes().toString());
    assertTrue(s.routes().size() >= 5, s.routes().toString());
    // /work is offered more than its fixed limit serves: its queue and its cut were exercised.
    assertTrue(s.routes().get("GET /work").turnedAway() > 0, s.routes().toString());
    s.routes().forEach((k, r) -> {
      assertTrue(r.inflight() == 0 && r.queued() == 0, k + " " + r);
      assertTrue(r.admitted() == r.released(), k + " " + r);
    });
    assertTrue(s.clean());
  }

  @Test
  void aSoakThatAdmittedNothingIsNotClean() {
    List<long[]> none = List.of();
    assertFalse(new Soak.Summary(Map.of(), none, 0, Map.of()).clean(), "no route at all");
    assertFalse(new Soak.Summary(Map.of("GET /work", new Soak.Route(0, 0, 0, 0, 0)), none, 0,
        Map.of()).clean(), "nothing admitted");
    assertTrue(new Soak.Summary(Map.of("GET /work", new Soak.Route(3, 3, 0, 0, 0),
        "GET /junk", new Soak.Route(0, 0, 0, 0, 0)), none, 3, Map.of()).clean());
  }

  @Test
  void theDurationParsesLikeTheOtherToolsAndIsAtLeastASecond() {
    assertEquals(Duration.ofMinutes(3), duration());
    assertEquals(Duration.ofSeconds(90), duration("--duration", "90s"));
    assertEquals(Duration.ofSeconds(90), duration("--duration=1m30s"));
    assertEquals(Duration.ofMinutes(2), duration("--duration", "2M"));
    assertEquals(Duration.ofHours(1), duration("--duration", "1h"));
    assertEquals(Duration.ofMillis(1500), duration("--duration", "1500ms"));
    assertEquals(Duration.ofSeconds(5), duration("--duration", "PT5S"));
    assertNull(Soak.parse(new String[] {"--help"}));
    assertEquals(SoakServer.Container.JETTY, Soak.parse(new String[0]).container());
    assertEquals(SoakServer.Container.UNDERTOW,
        Soak.parse(new String[] {"--container", "Undertow"}).container());
    IllegalArgumentException c = assertThrows(IllegalArgumentException.class,
        () -> Soak.parse(new String[] {"--container", "netty"}));
    assertTrue(c.getMessage().startsWith("--container "), c.getMessage());
    assertTrue(Soak.parse(new String[0]).bounded());
    assertFalse(Soak.parse(new String[] {"--mode", "default"}).bounded());
    IllegalArgumentException m = assertThrows(IllegalArgumentException.class,
        () -> Soak.parse(new String[] {"--mode", "fast"}));
    assertTrue(m.getMessage().startsWith("--mode "), m.getMessage());
    String[][] bad = {{"--duration", "abc"}, {"--duration", "90"}, {"--duration", "0s"},
        {"--duration", "-5s"}, {"--duration", "999ms"}, {"--duration", ""}, {"--duration"},
        {"--duration", "PT-5S"}, {"--duration", "1e9h"}};
    for (String[] args : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Soak.parse(args), String.join(" ", args));
      assertTrue(e.getMessage().startsWith("--duration "), e.getMessage());
    }
    assertThrows(IllegalArgumentException.class,
        () -> Soak.parse(new String[] {"--duration", "3m", "extra"}));
    assertThrows(IllegalArgumentException.class, () -> Soak.parse(new String[] {"--bogus"}));
  }

  private static Duration duration(String... args) {
    return Soak.parse(args).duration();
  }
}
