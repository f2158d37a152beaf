package dev.weir.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.weir.Priority;
import dev.weir.http.PriorityHeaders;
import jakarta.servlet.Filter;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * On Jetty the filter reads the priority headers in one pass over Jetty's own fields: the request
 * a first filter sees is Jetty's, so the one-pass reader applies, and it reads what the Servlet
 * API lookups read, repeated headers included; a wrapped request falls back to the lookups.
 */
class JettyServletHeadersHttpTest {
  @Test
  void aFirstFilterSeesJettysRequestAndReadsItInOnePass() throws Exception {
    PriorityHeaders headers = PriorityHeaders.builder().userKeyHeader("X-User").build();
    // Runs where WeirFilter would, first in the chain, and reports both readings.
    Filter probe = (req, res, chain) -> {
      jakarta.servlet.http.HttpServletRequest r = (jakarta.servlet.http.HttpServletRequest) req;
      int onePass = JettyServletHeaders.priority(headers, r);
      int lookups = headers.priority(r, WeirFilter.HEADERS);
      int wrapped = JettyServletHeaders.priority(headers,
          new jakarta.servlet.http.HttpServletRequestWrapper(r));
      res.getWriter().print(Priority.toString(onePass) + " " + Priority.toString(lookups)
          + " " + wrapped);
    };
    try (TestServer s = TestServer.with(probe).start()) {
      HttpClient client = HttpClient.newHttpClient();
      HttpResponse<String> r = client.send(HttpRequest.newBuilder(s.uri("/any"))
          .header("x-weir-tier", "2").header("Baggage", "weir-tier=4")
          .header("baggage", "weir-cohort=17").header("X-User", "u").build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals("2:17 2:17 -1", r.body(), "tier header first, cohort from repeated baggage");
      r = client.send(HttpRequest.newBuilder(s.uri("/any")).header("X-Weir-Tier", "1:5")
          .header("X-Weir-Tier", "0:1").header("X-User", "u").build(),
          HttpResponse.BodyHandlers.ofString());
      String[] got = r.body().split(" ");
      assertEquals(got[0], got[1], "a repeated tier header is ignored either way: " + r.body());
      assertEquals("3", got[0].split(":")[0], "the default tier: " + r.body());
    }
  }
}
