package dev.weir.servlet;

import static dev.weir.servlet.Support.servlet;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.LoadShedder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A context stopped and started again (a redeploy): Jetty calls {@code destroy()} and then {@code
 * init()} on a filter registered as an instance, and makes a new instance of one registered by
 * class. Either way the filter serves again, on fresh shedders, and the old ones stay closed.
 */
class ContextRestartHttpTest {
  private static final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();

  private static HttpResponse<String> get(TestServer s) throws Exception {
    return client.send(HttpRequest.newBuilder(s.uri("/hello")).timeout(Duration.ofSeconds(20))
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  private static void assertServed(HttpResponse<String> r) {
    assertEquals(200, r.statusCode(), () -> r.statusCode() + " "
        + r.headers().firstValue("X-Weir-Outcome").orElse("") + " " + r.body());
    assertEquals("hello", r.body());
  }

  @Test
  void aFilterRegisteredAsAnInstanceServesAgainAfterItsContextRestarts() throws Exception {
    // With a registry: destroy() removes every meter, so init() finds the registry free again.
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    WeirFilter filter = WeirFilter.builder().meterRegistry(registry).build();
    try (TestServer s = TestServer.with(filter)
        .servlet("/hello", servlet((req, res) -> res.getWriter().print("hello"))).start()) {
      for (int restart = 0; restart < 3; restart++) {
        assertServed(get(s));
        LoadShedder before = filter.shedders().values().iterator().next();
        s.server.getHandler().stop(); // destroy()
        assertTrue(before.isClosed(), "destroy() closes the shedders");
        s.server.getHandler().start(); // init() on the same instance
        assertServed(get(s));
        LoadShedder after = filter.shedders().values().iterator().next();
        assertNotSame(before, after);
        assertTrue(before.isClosed(), "the old shedders stay closed");
        assertEquals(1.0, registry.find("weir.requests").tags("shedder", "GET /hello",
            "outcome", "admitted").functionCounters().stream()
            .mapToDouble(io.micrometer.core.instrument.FunctionCounter::count).sum(),
            "the new shedders' meters, counting from the restart");
      }
    }
  }

  @Test
  void aFilterRegisteredByClassServesAgainAfterItsContextRestarts() throws Exception {
    try (TestServer s = TestServer.withClass(Map.of("weir.requestTimeout", "2s"))
        .servlet("/hello", servlet((req, res) -> res.getWriter().print("hello"))).start()) {
      assertServed(get(s));
      s.server.getHandler().stop();
      s.server.getHandler().start();
      assertServed(get(s));
    }
  }
}
