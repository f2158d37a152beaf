package dev.weir.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.LoadShedder;
import dev.weir.Snapshot;
import dev.weir.servlet.WeirFilter;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.eclipse.jetty.util.ajax.JSON;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The live status page in a real headless Chromium, against the example server (real Jetty, the
 * filter, {@code WeirStatusServlet}) under real overload: the page loads, draws every chart from
 * the polled JSON, shows the server's final counts once the load has stopped, and reports no error
 * (no uncaught exception, {@code console.error} or failed load, seen both by the page's own
 * {@code window.onerror} and over the DevTools protocol).
 *
 * <p>Skipped (a JUnit assumption) when no Chromium binary is found ({@link HeadlessChromium#find}:
 * {@code $WEIR_CHROMIUM}, or {@code chromium}, {@code chromium-browser}, {@code google-chrome} on
 * the {@code PATH}), so that a build without a browser stays green.
 */
class StatusPageBrowserTest {
  private static final String ROUTE = "GET /work";
  /** Real network and a real browser on a shared machine: generous, only a failure waits it out. */
  private static final Duration PATIENCE = Duration.ofSeconds(60);

  @Test
  void thePageChartsLiveDataWithoutErrors() throws Exception {
    Path chromium = HeadlessChromium.find().orElse(null);
    Assumptions.assumeTrue(chromium != null, "no Chromium binary found; set WEIR_CHROMIUM");
    // Capacity 2 / 10 ms = 200 req/s; 300 req/s for 4 s overloads it, so some are shed.
    Downstream downstream = new Downstream(2, Duration.ofMillis(10), 7);
    WeirFilter filter = WeirFilter.builder().build();
    try (ExampleServer server = ExampleServer.start(downstream, filter);
        HeadlessChromium browser = HeadlessChromium.start(chromium, 1280, 900)) {
      LoadGenerator load = LoadGenerator.builder(server.workUri()).rate(300)
          .warmup(Duration.ZERO).duration(Duration.ofSeconds(4)).timeout(Duration.ofSeconds(2))
          .mix(TierMix.parse("0:10,1:20,2:20,3:20,4:15,5:15")).build();
      CompletableFuture<LoadReport> running = load.runInBackground();
      URI page = server.workUri().resolve(Observability.STATUS_PATH + "?view=html");
      browser.open(page);
      assertEquals("Weir status", browser.evaluate("document.title"));

      // While the load runs, every chart of the route draws at least two samples (a rate needs
      // two polls).
      Map<String, Object> during = await(browser, s -> s != null
          && ((Object[]) s.get("points")).length == 6
          && List.of((Object[]) s.get("points")).stream()
              .allMatch(p -> ((Number) p).intValue() >= 2), "every chart drawn twice");
      LoadReport report = running.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertTrue(report.total().sent() >= 300, "sent " + report.total().sent());

      // Once the load has stopped, the page shows the server's final counts.
      LoadShedder shedder = filter.shedders().get(ROUTE);
      assertNotNull(shedder, filter.shedders().keySet().toString());
      Snapshot end = shedder.snapshot();
      long admitted = end.total(Snapshot.Counter.ADMITTED);
      long rejected = end.total(Snapshot.Counter.SHED) + end.total(Snapshot.Counter.QUEUE_FULL);
      assertTrue(rejected > 0, "overload rejected nothing: " + end);
      Map<String, Object> after = await(browser, s -> s != null
          && ((Number) s.get("admitted")).longValue() == admitted
          && ((Number) s.get("shed")).longValue() + ((Number) s.get("queueFull")).longValue()
              == rejected, "the page shows admitted " + admitted + ", rejected " + rejected);
      assertTrue(((Number) after.get("polls")).intValue()
          > ((Number) during.get("polls")).intValue(), "polling went on: " + after);
      assertEquals(0L, ((Number) after.get("errors")).longValue(), "page errors: " + after);
      // /work answers during its dispatch, so its limit is capped by the budget of Jetty's
      // threads, which it shares with the status page's own route: the budget less what that
      // route holds at the poll, and at least half of it.
      int threads = shedder.concurrencyBudget().threads();
      String badge = (String) after.get("badge");
      assertTrue(badge.contains(" of at most "), "the badge shows no cap: " + badge);
      int shown = Integer.parseInt(badge.substring(badge.lastIndexOf(" of at most ") + 12));
      assertTrue(shown <= threads && shown >= threads / 2, badge + "; budget " + threads);
      assertEquals(List.of(), browser.errors(), "errors the browser reported");
    }
  }

  /**
   * Route keys come from the application and are used verbatim; the page keeps its shedders in a
   * map of its own, where these names must not find what every object inherits.
   */
  @Test
  void routesNamedLikeAnObjectsOwnPropertiesAreChartedToo() throws Exception {
    Path chromium = HeadlessChromium.find().orElse(null);
    Assumptions.assumeTrue(chromium != null, "no Chromium binary found; set WEIR_CHROMIUM");
    for (String route : List.of("constructor", "__proto__", "toString")) {
      WeirFilter filter = WeirFilter.builder().routeKey(r -> route).build();
      try (ExampleServer server = ExampleServer.start(new Downstream(2, Duration.ofMillis(1), 7),
              filter);
          HeadlessChromium browser = HeadlessChromium.start(chromium, 1280, 900)) {
        LoadReport report = LoadGenerator.builder(server.workUri()).rate(50)
            .warmup(Duration.ZERO).duration(Duration.ofSeconds(1)).timeout(Duration.ofSeconds(2))
            .mix(TierMix.parse("1:100")).build().runInBackground()
            .get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        assertTrue(report.total().sent() > 0);
        long admitted = filter.shedders().get(route).snapshot().total(Snapshot.Counter.ADMITTED);
        browser.open(server.workUri().resolve(Observability.STATUS_PATH + "?view=html"));
        // The page's own polls take the same route: its count only grows past the load's.
        Map<String, Object> shown = await(browser, route, s -> s != null
            && ((Number) s.get("admitted")).longValue() >= admitted, route + "'s section");
        assertEquals(0L, ((Number) shown.get("errors")).longValue(), route + ": " + shown);
        assertEquals(List.of(), browser.errors(), route + ": errors the browser reported");
      }
    }
  }

  /** A route's figures as the page shows them, or null before it shows the route. */
  private static String state(String route) {
    return STATE.replace(ROUTE, route);
  }

  /** {@link #ROUTE}'s figures as the page shows them, or null before it shows the route. */
  private static final String STATE = String.join("\n",
      "(function () {",
      "  var s = document.querySelector('section[data-shedder=\"" + ROUTE + "\"]');",
      "  if (!s) { return null; }",
      "  function total(row) {",
      "    var cells = s.querySelectorAll('tr[data-row=\"' + row + '\"] td');",
      "    return Number(cells[cells.length - 1].textContent);",
      "  }",
      "  return JSON.stringify({",
      "    polls: Number(document.body.getAttribute('data-polls')),",
      "    errors: Number(document.body.getAttribute('data-errors')),",
      "    errorText: document.getElementById('errors').textContent,",
      "    points: Array.prototype.map.call(s.querySelectorAll('canvas'),",
      "        function (c) { return Number(c.getAttribute('data-points')); }),",
      "    admitted: total('admitted'), shed: total('shed'), queueFull: total('queue_full'),",
      "    badge: s.querySelector('.badge').textContent});",
      "})()");

  private static Map<String, Object> await(HeadlessChromium browser,
      Predicate<Map<String, Object>> done, String what) throws Exception {
    return await(browser, ROUTE, done, what);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> await(HeadlessChromium browser, String route,
      Predicate<Map<String, Object>> done, String what) throws Exception {
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    Map<String, Object> state = null;
    while (System.nanoTime() < deadline) {
      Object json = browser.evaluate(state(route));
      state = json == null ? null : (Map<String, Object>) new JSON().fromJSON((String) json);
      if (state != null && ((Number) state.get("errors")).intValue() != 0) {
        throw new AssertionError("the page recorded errors: " + state.get("errorText"));
      }
      if (done.test(state)) {
        return state;
      }
      Thread.sleep(100); // polling a real browser's page for a real-network outcome, with a deadline
    }
    throw new AssertionError("timed out waiting until " + what + "; last state " + state
        + "; browser errors " + browser.errors());
  }
}
