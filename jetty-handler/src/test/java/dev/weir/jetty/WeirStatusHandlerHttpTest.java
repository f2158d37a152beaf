package dev.weir.jetty;

import static dev.weir.jetty.Support.body;
import static dev.weir.jetty.Support.get;
import static dev.weir.jetty.Support.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.http.StatusPage;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.server.handler.ContextHandler;
import org.eclipse.jetty.server.handler.ContextHandlerCollection;
import org.junit.jupiter.api.Test;

/** The status handler beside a WeirHandler on a real Jetty 12 server, over HTTP/1.1. */
class WeirStatusHandlerHttpTest {

  @Test
  void servesTheJsonOfTheHandlersShedders_andThePageOnRequest() throws Exception {
    WeirHandler weir = WeirHandler.builder().handler(ok("hello"))
        .routeKey(r -> "hello").build();
    ContextHandler status = new ContextHandler(new WeirStatusHandler(weir), "/weir/status");
    status.setAllowNullPathInContext(true); // "/weir/status" itself, not a redirect to ".../"
    ContextHandler app = new ContextHandler(weir, "/");
    try (TestServer s = TestServer.start(new ContextHandlerCollection(status, app))) {
      HttpClient client = Support.Protocol.HTTP1.client();
      client.setFollowRedirects(false);
      try {
        for (int i = 0; i < 5; i++) {
          assertEquals(200, get(client, s.uri("/x"), "X-Weir-Tier", "1").getStatus());
        }
        ContentResponse json = get(client, s.uri("/weir/status"));
        assertEquals(200, json.getStatus());
        assertTrue(json.getHeaders().get("Content-Type").startsWith(StatusPage.JSON_CONTENT_TYPE));
        String text = body(json);
        // The route's shedder, five admitted tier-1 requests; the status polls are not counted.
        assertTrue(text.contains("\"GET hello\":{"), text);
        assertTrue(text.contains("\"admitted\":[0,5,0,0,0,0]"), text);

        ContentResponse page = get(client, s.uri("/weir/status?view=html"));
        assertEquals(200, page.getStatus());
        assertTrue(page.getHeaders().get("Content-Type").startsWith("text/html"));
        assertEquals(new String(StatusPage.html(), java.nio.charset.StandardCharsets.UTF_8),
            body(page));

        ContentResponse post = client.newRequest(s.uri("/weir/status")).method(HttpMethod.POST)
            .send();
        assertEquals(405, post.getStatus());
      } finally {
        client.stop();
      }
    }
  }
}
