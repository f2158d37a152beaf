package dev.weir.example.war;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * {@code GET /work}: holds its thread for 500 ms, as a JDBC call or a blocking client would, so
 * the container's threads bound its capacity (200 threads: about 400 req/s).
 */
public final class WorkServlet extends HttpServlet {
  private static final long serialVersionUID = 1L;

  @Override
  protected void doGet(HttpServletRequest req, HttpServletResponse res) throws IOException {
    try {
      Thread.sleep(500);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    res.getWriter().print("ok");
  }
}
