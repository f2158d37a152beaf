package dev.weir.servlet;

import jakarta.servlet.http.HttpServletMapping;
import jakarta.servlet.http.HttpServletRequest;

/**
 * The default route key: a known HTTP method (any other method is {@code OTHER}) and the pattern
 * of the servlet mapping that matched ({@code HttpServletRequest.getHttpServletMapping()}), for
 * example {@code "GET /orders/*"}. Both come from a bounded vocabulary, the methods of RFC 9110
 * and PATCH, and the application's own mappings, so no client can make up new keys: a junk path
 * lands on the pattern that serves it (the default servlet's {@code "/"} for a 404). The keys are
 * {@link dev.weir.http.RouteKeys}', shared with the Jetty handler.
 */
final class RouteKeys {
  private RouteKeys() {}

  static String of(HttpServletRequest request) {
    HttpServletMapping mapping = request.getHttpServletMapping();
    String pattern = mapping == null ? null : mapping.getPattern();
    if (pattern == null || pattern.isEmpty()) {
      pattern = "/";
    }
    return dev.weir.http.RouteKeys.of(request.getMethod(), pattern);
  }
}
