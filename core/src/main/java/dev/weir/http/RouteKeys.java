package dev.weir.http;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Route keys from a bounded vocabulary: a known HTTP method (the methods of RFC 9110 and PATCH;
 * any other method is {@code OTHER}) and a route the application names, for example {@code
 * "GET /orders/*"}. The adapters key their per-route shedders by it, so that no client can make
 * up new keys with a method of its own; the route must come from the application (a servlet
 * mapping's pattern, a router's template), never from the raw path.
 *
 * <p>Keys are interned per route, so that a request's key costs two lookups and no allocation once
 * its route was seen. Thread-safe.
 */
public final class RouteKeys {
  private static final String[] METHODS = {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH",
      "OPTIONS", "TRACE", "CONNECT", "OTHER"};
  private static final int OTHER = METHODS.length - 1;
  /** Routes interned at most; routes come from the application, the bound guards against one that does not. */
  private static final int MAX_ROUTES = 1024;
  private static final ConcurrentHashMap<String, String[]> BY_ROUTE = new ConcurrentHashMap<>();

  private RouteKeys() {}

  /**
   * The key of {@code method} on {@code route}: {@code "METHOD route"}, the method replaced by
   * {@code OTHER} unless it is a known one.
   *
   * @param method the request's method, or null (read as {@code OTHER})
   * @param route the application's name for the route, not null
   */
  public static String of(String method, String route) {
    int m = methodIndex(method);
    String[] keys = BY_ROUTE.get(route);
    if (keys == null) {
      if (BY_ROUTE.size() >= MAX_ROUTES) {
        return METHODS[m] + " " + route;
      }
      keys = BY_ROUTE.computeIfAbsent(route, RouteKeys::keysFor);
    }
    return keys[m];
  }

  /** {@code method} if it is a known one, else {@code "OTHER"}. */
  public static String knownMethod(String method) {
    return METHODS[methodIndex(method)];
  }

  private static String[] keysFor(String route) {
    String[] keys = new String[METHODS.length];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = METHODS[i] + " " + route;
    }
    return keys;
  }

  private static int methodIndex(String method) {
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
