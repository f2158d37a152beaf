package dev.weir.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

class RouteKeysTest {
  @Test
  void knownMethodsKeepTheirNameAndAnyOtherIsOther() {
    assertEquals("GET /orders/*", RouteKeys.of("GET", "/orders/*"));
    assertEquals("PATCH /a", RouteKeys.of("PATCH", "/a"));
    assertEquals("OTHER /a", RouteKeys.of("BREW", "/a"));
    assertEquals("OTHER /a", RouteKeys.of("get", "/a")); // methods are case-sensitive
    assertEquals("OTHER /a", RouteKeys.of(null, "/a"));
    assertEquals("OTHER", RouteKeys.knownMethod("PROPFIND"));
  }

  @Test
  void keysAreInternedPerRoute() {
    assertSame(RouteKeys.of("POST", "/interned"), RouteKeys.of("POST", "/interned"));
  }
}
