package dev.weir.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The chaos soak in its short mode: every route ends with nothing held and nothing queued. */
class SoakTest {
  @Test
  void shortChaosSoakEndsCleanOnEveryRoute() throws Exception {
    Soak.Summary s = Soak.run(Duration.ofSeconds(4), true);
    assertTrue(s.routes().containsKey("GET /work"), s.routes().toString());
    assertTrue(s.routes().size() >= 5, s.routes().toString());
    s.routes().forEach((k, r) -> {
      assertTrue(r.inflight() == 0 && r.queued() == 0, k + " " + r);
      assertTrue(r.admitted() == r.released(), k + " " + r);
    });
    assertTrue(s.clean());
  }
}
