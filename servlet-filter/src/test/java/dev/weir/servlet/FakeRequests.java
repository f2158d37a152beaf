package dev.weir.servlet;

import jakarta.servlet.http.HttpServletRequest;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** A header-only HttpServletRequest for unit tests; every other method fails loudly. */
final class FakeRequests {
  private FakeRequests() {}

  /** Headers as name, value pairs; a name may repeat. */
  static HttpServletRequest withHeaders(String... pairs) {
    Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    for (int i = 0; i < pairs.length; i += 2) {
      headers.computeIfAbsent(pairs[i], k -> new ArrayList<>()).add(pairs[i + 1]);
    }
    return (HttpServletRequest) Proxy.newProxyInstance(FakeRequests.class.getClassLoader(),
        new Class<?>[] {HttpServletRequest.class}, (proxy, method, args) -> {
          switch (method.getName()) {
            case "getHeaders":
              return Collections.enumeration(headers.getOrDefault((String) args[0], List.of()));
            case "getHeader":
              List<String> v = headers.get((String) args[0]);
              return v == null ? null : v.get(0);
            case "toString":
              return "FakeRequest" + headers;
            default:
              throw new UnsupportedOperationException(method.getName());
          }
        });
  }
}
