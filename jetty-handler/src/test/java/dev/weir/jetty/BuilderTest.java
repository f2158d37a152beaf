package dev.weir.jetty;

import static dev.weir.jetty.Support.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.LoadShedder;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Bad settings fail at once, naming the setting; a handler that builds serves. */
class BuilderTest {
  private static void assertNames(String setting, Runnable r) {
    RuntimeException e = assertThrows(RuntimeException.class, r::run);
    assertTrue(String.valueOf(e.getMessage()).contains(setting), e.getMessage());
  }

  @Test
  void badSettingsAreNamed() {
    assertNames("maxShedders", () -> WeirHandler.builder().maxShedders(0));
    assertNames("routeIdleTimeout", () -> WeirHandler.builder()
        .routeIdleTimeout(Duration.ofMillis(10)));
    assertNames("routeIdleTimeout", () -> WeirHandler.builder().routeIdleTimeout(null));
    assertNames("shedder", () -> WeirHandler.builder().shedder(null));
    assertNames("routeKey", () -> WeirHandler.builder().routeKey(null));
    assertNames("handler", () -> WeirHandler.builder().handler(null));
    assertNames("queueTimeout", () -> WeirHandler.builder().shedder(LoadShedder.builder()
        .requestTimeout(Duration.ofMillis(100)).queueTimeout(Duration.ofSeconds(1))).build());
  }

  @Test
  void aTemplateThatCannotBuildFailsAtBuildOrStartNamingIt() {
    assertNames("limit", () -> WeirHandler.builder()
        .shedder(LoadShedder.builder().limit(() -> null)).build());
    // Builds once (the validation), then not: the start fails.
    java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
    WeirHandler weir = WeirHandler.builder().shedder(LoadShedder.builder().limit(
        () -> calls.incrementAndGet() == 1 ? dev.weir.control.Limits.fixed(1) : null))
        .handler(ok("x")).build();
    Exception e = assertThrows(Exception.class, () -> TestServer.start(weir).close());
    Throwable t = e;
    while (!(t instanceof IllegalArgumentException) && t.getCause() != null) {
      t = t.getCause();
    }
    assertTrue(String.valueOf(t.getMessage()).startsWith("shedder:"), String.valueOf(t));
  }

  @Test
  void zeroConfigurationHasNoShedderUntilStarted() {
    WeirHandler weir = new WeirHandler();
    assertEquals(0, weir.shedders().size());
    assertEquals(429, weir.answers().shedStatus());
  }
}
