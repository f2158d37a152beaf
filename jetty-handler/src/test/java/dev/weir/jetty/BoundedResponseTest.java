package dev.weir.jetty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.server.Response;
import org.junit.jupiter.api.Test;

/**
 * The application's view of a bounded response, on a stand-in for Jetty's response that has only
 * a status and headers. The HTTP behaviour is {@link BoundedParityHttpTest}'s.
 */
class BoundedResponseTest {

  /** A response whose status and headers are plain fields; every other call fails the test. */
  private static Response real(HttpFields.Mutable headers) {
    int[] status = {200};
    return (Response) Proxy.newProxyInstance(Response.class.getClassLoader(),
        new Class<?>[] {Response.class}, (proxy, m, args) -> switch (m.getName()) {
          case "getHeaders" -> headers;
          case "getStatus" -> status[0];
          case "setStatus" -> {
            status[0] = (Integer) args[0];
            yield null;
          }
          case "getTrailersSupplier" -> null;
          case "isCommitted" -> false;
          default -> throw new AssertionError("unexpected call: " + m.getName());
        });
  }

  /**
   * The deadline's answer writes the real headers on another thread once it has claimed the
   * response: whenever the application first asks, it must not read them then, or it reads a
   * structure being written (an ArrayIndexOutOfBoundsException on Jetty's fields, the permit
   * never released). It sees what outer handlers had set when it was admitted.
   */
  @Test
  void theApplicationsHeadersAreTakenBeforeTheDeadlineCanWrite() {
    HttpFields.Mutable headers = HttpFields.build().put("X-Outer", "1");
    BoundedResponse bounded = new BoundedResponse(null, real(headers));
    assertTrue(bounded.claimForDeadline());
    headers.put("Content-Type", "text/plain").put("Retry-After", "1"); // the deadline's answer

    HttpFields seen = bounded.getHeaders();
    assertEquals("1", seen.get("X-Outer"));
    assertNull(seen.get("Retry-After"));
    assertNull(seen.get("Content-Type"));
    assertTrue(bounded.isCommitted());
    assertFalse(bounded.claimForApp());
  }

  /** The application claims: its changes replace the real headers; untouched, they are left. */
  @Test
  void aClaimCopiesOnlyHeadersTheApplicationAskedFor() {
    HttpFields.Mutable headers = HttpFields.build().put("X-Outer", "1");
    BoundedResponse untouched = new BoundedResponse(null, real(headers));
    headers.put("X-Later", "1"); // an outer handler, after admission: kept, as without Weir
    assertTrue(untouched.claimForApp());
    assertEquals("1", headers.get("X-Later"));

    HttpFields.Mutable other = HttpFields.build().put("X-Outer", "1");
    BoundedResponse touched = new BoundedResponse(null, real(other));
    touched.getHeaders().remove("X-Outer").put("X-App", "2");
    touched.setStatus(201);
    assertTrue(touched.claimForApp());
    assertNull(other.get("X-Outer"));
    assertEquals("2", other.get("X-App"));
    assertEquals(201, touched.getStatus());
  }
}
