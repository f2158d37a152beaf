package dev.weir.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletRequestWrapper;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.eclipse.jetty.ee10.servlet.ServletChannel;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;
import org.junit.jupiter.api.Test;

/**
 * The admitted request answers the attribute by which Jetty finds its own request under a wrapper
 * with the channel of the request underneath (which itself answers null to that name: the
 * attribute is a wrapper's to answer), and every other attribute as before.
 */
class JettyServletChannelHttpTest {
  @Test
  void theWrapperAnswersJettysChannelAttributeWithJettysOwnChannel() throws Exception {
    HttpServlet probe = new HttpServlet() {
      @Override
      protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        ServletRequest underneath = ((ServletRequestWrapper) req).getRequest();
        Object answered = req.getAttribute(ServletChannel.class.getName());
        Object jettys = underneath.getAttribute(ServletChannel.class.getName());
        Object direct = ServletContextRequest.getServletContextRequest(underneath)
            .getServletChannel();
        req.setAttribute("app", "value");
        resp.getWriter().print((req instanceof AdmittedRequest) + " "
            + (answered != null && answered == direct) + " " + jettys + " "
            + req.getAttribute("app") + " " + req.getAttribute("absent"));
      }
    };
    try (TestServer s = TestServer.with(new WeirFilter()).servlet("/probe", probe).start()) {
      HttpResponse<String> r = HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(s.uri("/probe")).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode());
      assertEquals("true true null value null", r.body());
    }
  }
}
