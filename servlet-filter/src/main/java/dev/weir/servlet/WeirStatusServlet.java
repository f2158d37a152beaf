package dev.weir.servlet;

import dev.weir.Priority;
import dev.weir.Snapshot;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;

/**
 * A read-only JSON view of a {@link WeirFilter}'s shedders, one object per route key:
 *
 * <pre>{"shedders":{"GET /orders":{"limit":20,"inflight":3,"queued":0,"cutoff":768,
 *   "rejectionRatio":0.0,"overloaded":false,"admitted":[..per tier..],"shed":[..],...}}}</pre>
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
    byte[] body = toJson(f.snapshots()).getBytes(StandardCharsets.UTF_8);
    resp.setContentType("application/json");
    resp.setHeader("Cache-Control", "no-store");
    resp.setContentLength(body.length);
    resp.getOutputStream().write(body);
  }

  static String toJson(Map<String, Snapshot> snapshots) {
    StringBuilder sb = new StringBuilder(256).append("{\"shedders\":{");
    boolean first = true;
    for (Map.Entry<String, Snapshot> e : snapshots.entrySet()) {
      if (!first) {
        sb.append(',');
      }
      first = false;
      Snapshot s = e.getValue();
      quote(sb, e.getKey()).append(":{\"limit\":").append(s.limit())
          .append(",\"inflight\":").append(s.inflight())
          .append(",\"queued\":").append(s.queued())
          .append(",\"cutoff\":").append(s.cutoff())
          .append(",\"rejectionRatio\":").append(String.format(Locale.ROOT, "%.4f",
              s.rejectionRatio()))
          .append(",\"overloaded\":").append(s.overloaded());
      for (Snapshot.Counter c : Snapshot.Counter.values()) {
        sb.append(",\"").append(c.name().toLowerCase(Locale.ROOT)).append("\":[");
        for (int t = 0; t < Priority.TIERS; t++) {
          sb.append(t == 0 ? "" : ",").append(s.count(c, t));
        }
        sb.append(']');
      }
      sb.append('}');
    }
    return sb.append("}}").toString();
  }

  private static StringBuilder quote(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (c < 0x20) {
        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.append('"');
  }
}
