package dev.weir.jetty;

import static dev.weir.jetty.Support.get;
import static dev.weir.jetty.Support.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.Snapshot;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.server.handler.ContextHandler;
import org.eclipse.jetty.server.handler.ContextHandlerCollection;
import org.junit.jupiter.api.Test;

/** The handler's meters on a real Jetty, across a restart and with a registry that refuses. */
class MetersHttpTest {
  private static double admitted(SimpleMeterRegistry registry, String... tags) {
    return registry.find("weir.requests").tags("shedder", "all", "outcome", "admitted").tags(tags)
        .functionCounters().stream().mapToDouble(FunctionCounter::count).sum();
  }

  @Test
  void twoHandlersWithTheSameRoutesOnOneRegistryAreToldApartByTheirTags() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    WeirHandler one = WeirHandler.builder().meterRegistry(registry, Tags.of("app", "one"))
        .handler(ok("one")).build();
    WeirHandler two = WeirHandler.builder().meterRegistry(registry, Tags.of("app", "two"))
        .handler(ok("two")).build();
    try (TestServer s = TestServer.start(new ContextHandlerCollection(
        new ContextHandler(one, "/one"), new ContextHandler(two, "/two")))) {
      HttpClient c = Support.Protocol.HTTP1.client();
      try {
        assertEquals(200, get(c, s.uri("/one/x")).getStatus());
        for (int i = 0; i < 2; i++) {
          assertEquals(200, get(c, s.uri("/two/x")).getStatus());
        }
        assertEquals(2, two.shedders().get("all").snapshot().total(Snapshot.Counter.ADMITTED));
        assertEquals(1.0, admitted(registry, "app", "one"), 0.0);
        assertEquals(2.0, admitted(registry, "app", "two"), 0.0);
        one.stop();
        assertEquals(0.0, admitted(registry, "app", "one"), 0.0, "one's meters went with it");
        assertEquals(2.0, admitted(registry, "app", "two"), 0.0, "two's stayed");
      } finally {
        c.stop();
      }
    }
  }

  @Test
  void aSecondHandlerWithTheSameTagsOnOneRegistryFailsToStartNamingTheSetting() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    WeirHandler one = WeirHandler.builder().meterRegistry(registry).handler(ok("one")).build();
    WeirHandler two = WeirHandler.builder().meterRegistry(registry).handler(ok("two")).build();
    one.start();
    try {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, two::start);
      assertTrue(e.getMessage().startsWith("meterRegistry"), e.getMessage());
      one.stop();
      two.start(); // free again once the first stopped
      two.stop();
    } finally {
      one.stop();
    }
  }

  @Test
  void aTagNamedAsTheMetersOwnIsRefusedNamingTheSetting() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> WeirHandler.builder().meterRegistry(new SimpleMeterRegistry(), Tags.of("tier", "x")));
    assertTrue(e.getMessage().startsWith("meterRegistry"), e.getMessage());
  }

  @Test
  void stoppingRemovesTheMetersAndARestartPublishesTheNewShedders() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    WeirHandler weir = WeirHandler.builder().meterRegistry(registry).handler(ok("ok")).build();
    try (TestServer s = TestServer.start(weir)) {
      HttpClient c = Support.Protocol.HTTP1.client();
      try {
        assertEquals(200, get(c, s.uri("/")).getStatus());
        assertEquals(1.0, admitted(registry), 0.0);
        weir.stop();
        assertEquals(0, registry.find("weir.limit").meters().size(), "no meter of a stopped handler");
        weir.start();
        for (int i = 0; i < 3; i++) {
          assertEquals(200, get(c, s.uri("/")).getStatus());
        }
        assertEquals(3.0, admitted(registry), 0.0, "the meters read the running shedder");
      } finally {
        c.stop();
      }
    }
  }

  @Test
  void aRegistryThatRefusesTheMetersCostsNoRequest() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    registry.config().meterFilter(new MeterFilter() {
      @Override
      public Meter.Id map(Meter.Id id) {
        throw new IllegalStateException("refused " + id.getName());
      }
    });
    WeirHandler weir = WeirHandler.builder().meterRegistry(registry).handler(ok("ok")).build();
    try (TestServer s = TestServer.start(weir)) {
      HttpClient c = Support.Protocol.HTTP1.client();
      try {
        assertEquals(200, get(c, s.uri("/")).getStatus(), "served, without meters");
      } finally {
        c.stop();
      }
    }
  }
}
