package dev.weir.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.weir.Priority;
import jakarta.servlet.ServletRequest;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.Map;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.junit.jupiter.api.Test;

class PriorityPropagationTest {
  private static ServletRequest withPriority(Object value) {
    Map<String, Object> attrs = value == null ? Map.of()
        : Map.of(WeirFilter.PRIORITY_ATTRIBUTE, value);
    return (ServletRequest) Proxy.newProxyInstance(getClassLoader(),
        new Class<?>[] {ServletRequest.class}, (p, m, args) -> {
          if (m.getName().equals("getAttribute")) {
            return attrs.get((String) args[0]);
          }
          throw new UnsupportedOperationException(m.getName());
        });
  }

  private static ClassLoader getClassLoader() {
    return PriorityPropagationTest.class.getClassLoader();
  }

  @Test
  void jdkClientGetsTheTierHeader() {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1/x"));
    PriorityPropagation.propagate(withPriority(Priority.of(2, 17)), b);
    assertEquals("2:17", b.build().headers().firstValue("X-Weir-Tier").orElse(null));

    HttpRequest.Builder none = HttpRequest.newBuilder(URI.create("http://127.0.0.1/x"));
    PriorityPropagation.propagate(withPriority(null), none);
    PriorityPropagation.propagate(withPriority("garbage"), none);
    PriorityPropagation.propagate(withPriority(99_999), none);
    assertFalse(none.build().headers().firstValue("X-Weir-Tier").isPresent());
    assertThrows(IllegalArgumentException.class, () -> PriorityPropagation.propagate(-1, none));
  }

  @Test
  void jettyClientGetsTheTierHeader() throws Exception {
    HttpClient client = new HttpClient();
    try {
      Request r = client.newRequest("http://127.0.0.1/x");
      JettyPriorityPropagation.propagate(withPriority(Priority.of(0, 3)), r);
      assertEquals("0:3", r.getHeaders().get("X-Weir-Tier"));
      Request none = client.newRequest("http://127.0.0.1/x");
      JettyPriorityPropagation.propagate(withPriority(null), none);
      assertEquals(null, none.getHeaders().get("X-Weir-Tier"));
    } finally {
      client.stop();
    }
  }
}
