package dev.weir.servlet;

import dev.weir.http.StatusPage;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * A read-only view of a {@link WeirFilter}'s shedders, one entry per route key: JSON by default,
 *
 * <pre>{"shedders":{"GET /orders":{"limit":20,"inflight":3,"queued":0,"cutoff":768,
 *   "rejectionRatio":0.0,"overloaded":false,"admitted":[..per tier..],"shed":[..],...}},
 *   "time":..}</pre>
 *
 * <p>and, with {@code ?view=html}, a self-contained page that charts that JSON live (limit,
 * inflight and queue; rejection ratio and cutoff; admitted, shed and timed-out requests per second
 * and the mean queue wait, by tier). Both come from {@link StatusPage}, which documents the format.
 *
 * <p>Built with a filter, it shows that one; built with no arguments (web.xml), it shows the
 * filter of its servlet context ({@link WeirFilter#CONTEXT_ATTRIBUTE}). Map it where only
 * operators can reach it. Taking a snapshot is cheap; the servlet holds no state.
 */
public final class WeirStatusServlet extends HttpServlet {
  private static final long serialVersionUID = 1L;
  private final transient WeirFilter filter;

  /** Shows the filter registered in the servlet context. */
  public WeirStatusServlet() {
    this(null);
  }

  /** Shows {@code filter}. */
  public WeirStatusServlet(WeirFilter filter) {
    this.filter = filter;
  }

  @Override
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    WeirFilter f = filter;
    if (f == null) {
      Object attr = getServletContext().getAttribute(WeirFilter.CONTEXT_ATTRIBUTE);
      f = attr instanceof WeirFilter ? (WeirFilter) attr : null;
    }
    if (f == null) {
      resp.sendError(HttpServletResponse.SC_NOT_FOUND, "no WeirFilter in this context");
      return;
    }
    byte[] body;
    if (StatusPage.wantsHtml(req.getQueryString())) {
      body = StatusPage.html();
      resp.setContentType(StatusPage.HTML_CONTENT_TYPE);
    } else {
      body = StatusPage.json(f.shedders()).getBytes(StandardCharsets.UTF_8);
      resp.setContentType(StatusPage.JSON_CONTENT_TYPE);
    }
    resp.setHeader("Cache-Control", "no-store");
    resp.setContentLength(body.length);
    resp.getOutputStream().write(body);
  }
}
