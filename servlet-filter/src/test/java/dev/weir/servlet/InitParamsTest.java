package dev.weir.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.LoadShedder;
import dev.weir.Priority;
import dev.weir.http.RejectionFormat;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class InitParamsTest {
  private static FilterConfig config(String... pairs) {
    Map<String, String> params = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      params.put(pairs[i], pairs[i + 1]);
    }
    return Support.filterConfig(params);
  }

  private static WeirFilter init(String... pairs) throws ServletException {
    WeirFilter f = new WeirFilter();
    f.init(config(pairs));
    return f;
  }

  @Test
  void defaultsWithoutInitParams() throws Exception {
    WeirFilter f = init();
    WeirFilter.Builder s = f.settings();
    assertEquals(429, s.answers.shedStatus());
    assertEquals(503, s.answers.unavailableStatus());
    assertEquals(1, s.answers.retryAfterSeconds());
    assertEquals(RejectionFormat.TEXT, s.answers.format());
    assertEquals(64, s.maxShedders);
    assertEquals(1 << 20, s.maxBufferedBytes);
    assertEquals(Duration.ofMinutes(5), s.routeIdleTimeout);
    assertEquals(null, s.bodyReadTimeout); // the request timeout
    assertEquals(Priority.of(3, 64), s.priorityHeaders.defaultPriority());
    LoadShedder shedder = s.shedder.copy().name("x").build();
    assertEquals(TimeUnit.SECONDS.toNanos(3), shedder.requestTimeoutNanos());
    assertEquals(TimeUnit.SECONDS.toNanos(1), shedder.queueTimeoutNanos());
    shedder.close();
    f.destroy();
  }

  @Test
  void initParamsApply() throws Exception {
    WeirFilter f = init("weir.requestTimeout", "2s", "weir.queueTimeout", "PT0.5S",
        "weir.limit", "7", "weir.rejector", "none", "weir.shedStatus", "503",
        "weir.retryAfter", "5s", "weir.rejectionFormat", "json", "weir.maxShedders", "3",
        "weir.containerThreads", "200", "weir.defaultTier", "1", "weir.callerTiers", "checkout=0, batch=5",
        "weir.boundedResponseTime", "true", "weir.routes", "single");
    WeirFilter.Builder s = f.settings();
    LoadShedder shedder = s.shedder.copy().name("x").build();
    assertEquals(TimeUnit.SECONDS.toNanos(2), shedder.requestTimeoutNanos());
    assertEquals(TimeUnit.MILLISECONDS.toNanos(500), shedder.queueTimeoutNanos());
    assertEquals(7, shedder.limit());
    shedder.close();
    assertEquals(503, s.answers.shedStatus());
    assertEquals(5, s.answers.retryAfterSeconds());
    assertEquals(RejectionFormat.JSON, s.answers.format());
    assertEquals(3, s.maxShedders);
    assertEquals(200, s.containerThreads);
    assertEquals(Priority.of(1, 64), s.priorityHeaders.defaultPriority());
    assertTrue(s.boundedResponseTime);
    assertEquals(0, Priority.tier(s.priorityHeaders.priority(
        FakeRequests.withHeaders("X-Weir-Caller", "checkout"), WeirFilter.HEADERS)));
    assertEquals(1, Priority.tier(s.priorityHeaders.priority(FakeRequests.withHeaders(),
        WeirFilter.HEADERS)));
    f.destroy();
  }

  @Test
  void badValuesFailNamingTheInitParam() {
    String[][] bad = {
        {"weir.requestTimeout", "soon"},
        {"weir.requestTimeout", "-3s"},
        {"weir.queueTimeout", "0ms"},
        {"weir.queueCapacity", "0"},
        {"weir.queueCapacity", "lots"},
        {"weir.limit", "0"},
        {"weir.limit", "fast"},
        {"weir.rejector", "maybe"},
        {"weir.routes", "some"},
        {"weir.maxShedders", "0"},
        {"weir.containerThreads", "-1"},
        {"weir.containerThreads", "many"},
        {"weir.boundedResponseTime", "yes"},
        {"weir.shedStatus", "200"},
        {"weir.unavailableStatus", "99999999999"},
        {"weir.retryAfter", "-1s"},
        {"weir.retryAfter", "500ms"},
        {"weir.rejectionFormat", "xml"},
        {"weir.defaultTier", "6"},
        {"weir.tierHeader", "bad header"},
        {"weir.callerTiers", "checkout"},
        {"weir.callerTiers", "checkout=9"},
        {"weir.callerTiers", "checkout=0, checkout=5"},
        {"weir.cohortRotation", "10ms"},
        {"weir.maxHeaderLength", "-5"},
        {"weir.maxBufferedBytes", "-1"},
        {"weir.maxBufferedBytes", "67108865"},
        {"weir.routeIdleTimeout", "99ms"},
        {"weir.routeIdleTimeout", "8761h"},
        {"weir.bodyReadTimeout", "8761h"},
        {"weir.routeIdleTimeout", "PT8761H"},
        {"weir.bodyReadTimeout", "0ms"},
        {"weir.bodyReadTimeout", "never"},
    };
    for (String[] p : bad) {
      ServletException e = assertThrows(ServletException.class, () -> init(p), p[0] + "=" + p[1]);
      assertTrue(e.getMessage().contains(p[0]), e.getMessage());
    }
  }

  @Test
  void unknownAndInconsistentInitParamsFail() {
    ServletException typo = assertThrows(ServletException.class,
        () -> init("weir.requestTimeot", "1s"));
    assertTrue(typo.getMessage().contains("unknown init-param weir.requestTimeot"),
        typo.getMessage());
    ServletException inconsistent = assertThrows(ServletException.class,
        () -> init("weir.requestTimeout", "1s", "weir.queueTimeout", "2s"));
    assertTrue(inconsistent.getMessage().contains("queueTimeout"), inconsistent.getMessage());
  }

  @Test
  void builderRejectsNonsenseNamingTheSetting() {
    WeirFilter.Builder b = WeirFilter.builder();
    for (Runnable r : new Runnable[] {() -> b.maxShedders(0), () -> b.maxShedders(10_001),
        () -> b.maxBufferedBytes(-1), () -> b.routeIdleTimeout(Duration.ZERO),
        () -> b.bodyReadTimeout(Duration.ofSeconds(-1))}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, r::run);
      assertTrue(e.getMessage().matches("^[a-zA-Z]+ must .*"), e.getMessage());
    }
    // The shedder template is checked as a whole when the filter is built, not on a request.
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> WeirFilter.builder().shedder(LoadShedder.builder()
            .requestTimeout(Duration.ofSeconds(1)).queueTimeout(Duration.ofSeconds(2))).build());
    assertTrue(e.getMessage().contains("queueTimeout"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> WeirFilter.builder()
        .shedder(LoadShedder.builder().limit(() -> null)).build());
    assertTrue(e.getMessage().startsWith("limit"), e.getMessage());
  }

  @Test
  void durations() {
    assertEquals(Duration.ofMillis(250), InitParams.duration("250ms"));
    assertEquals(Duration.ofSeconds(3), InitParams.duration("3s"));
    assertEquals(Duration.ofMinutes(2), InitParams.duration("2m"));
    assertEquals(Duration.ofHours(1), InitParams.duration("1h"));
    assertEquals(Duration.ofSeconds(3), InitParams.duration("PT3S"));
    assertEquals(Duration.ZERO, InitParams.duration("0"), "zero needs no unit");
    for (String bad : new String[] {"", "s", "ms", "3", "3d", "3 s s", "P", "9".repeat(40) + "s"}) {
      assertThrows(IllegalArgumentException.class, () -> InitParams.duration(bad), bad);
    }
  }
}
