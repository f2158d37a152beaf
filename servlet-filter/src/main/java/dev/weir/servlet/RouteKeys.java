package dev.weir.servlet;

import jakarta.servlet.http.HttpServletMapping;
import jakarta.servlet.http.HttpServletRequest;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The default route key: a known HTTP method (any other method is {@code OTHER}) and the pattern
 * of the servlet mapping that matched ({@code HttpServletRequest.getHttpServletMapping()}), for
 * example {@code "GET /orders/*"}. Both come from a bounded vocabulary, the methods of RFC 9110
 * and PATCH, and the application's own mappings, so no client can make up new keys: a junk path
 * lands on the pattern that serves it (the default servlet's {@code "/"} for a 404).
 *
 * <p>Keys are interned per pattern, so that a request's key costs two lookups and no allocation.
 */
final class RouteKeys {
  static final String[] METHODS = {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS",
      "TRACE", "CONNECT", "OTHER"};
  private static final int OTHER = METHODS.length - 1;
  // Patterns come from the deployment; the bound only guards against a container that does not.
  private static final int MAX_PATTERNS = 1024;
  private static final ConcurrentHashMap<String, String[]> BY_PATTERN = new ConcurrentHashMap<>();

  private RouteKeys() {}

  static String of(HttpServletRequest request) {
    HttpServletMapping mapping = request.getHttpServletMapping();
    String pattern = mapping == null ? null : mapping.getPattern();
    if (pattern == null || pattern.isEmpty()) {
      pattern = "/";
    }
    int m = methodIndex(request.getMethod());
    String[] keys = BY_PATTERN.get(pattern);
    if (keys == null) {
      if (BY_PATTERN.size() >= MAX_PATTERNS) {
        return METHODS[m] + " " + pattern;
      }
      keys = BY_PATTERN.computeIfAbsent(pattern, RouteKeys::keysFor);
    }
    return keys[m];
  }

  private static String[] keysFor(String pattern) {
    String[] keys = new String[METHODS.length];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = METHODS[i] + " " + pattern;
    }
    return keys;
  }

  static int methodIndex(String method) {
    if (method == null) {
      return OTHER;
    }
    switch (method) {
      case "GET": return 0;
      case "HEAD": return 1;
      case "POST": return 2;
      case "PUT": return 3;
      case "DELETE": return 4;
      case "PATCH": return 5;
      case "OPTIONS": return 6;
      case "TRACE": return 7;
      case "CONNECT": return 8;
      default: return OTHER;
    }
  }
}
