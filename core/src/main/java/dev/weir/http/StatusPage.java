package dev.weir.http;

import dev.weir.LoadShedder;
import dev.weir.Priority;
import dev.weir.Snapshot;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.Map;

/**
 * The status view every adapter serves the same way: a JSON document of some shedders' state, and
 * a self-contained HTML page that polls that JSON about once a second and charts it live.
 *
 * <p>One URL serves both: the page when the query has {@code view=html} ({@link #wantsHtml}), the
 * JSON otherwise (so existing readers of the JSON, and {@code curl}, see no change). The page
 * fetches its own URL with {@code view=json}. It needs no network beyond that URL: no script,
 * style or font from elsewhere, so it works offline and under a strict Content-Security-Policy
 * that allows inline script.
 *
 * <p>The JSON, one object per shedder keyed by the adapter's name for it (a route key):
 *
 * <pre>{"shedders":{"GET /orders":{"limit":20,"inflight":3,"queued":0,"cutoff":768,
 *   "rejectionRatio":0.0000,"overloaded":false,
 *   "admitted":[t0,..,t5],"shed":[..],"queue_full":[..],"queue_timeout":[..],
 *   "shutting_down":[..],"cancelled":[..],"deadline_missed":[..],"succeeded":[..],
 *   "failed":[..],"dropped":[..],"reclaimed":[..],"queueWaitNanos":[..]}},"time":1700000000000}</pre>
 *
 * <p>{@code "concurrencyCap":N} follows {@code overloaded} only for a shedder whose limit an
 * adapter capped at what its server's threads run ({@link LoadShedder#capConcurrency}). Each
 * counter array holds one total per tier since the shedder was built, named after {@link
 * Snapshot.Counter} in lower case; {@code queueWaitNanos} is the total time admitted requests of
 * each tier waited in the queue ({@link LoadShedder#totalQueueWaitNanos}), so that a reader gets
 * rates and the mean wait from two documents. {@code time} is when the document was made, in
 * milliseconds since the epoch. The figures of one shedder are read one after another, not
 * atomically; each is exact, the set is a close approximation of one moment.
 *
 * <p>Building the JSON takes a snapshot of each shedder (a few striped-counter sums) and touches
 * nothing on the request path. Serve it where only operators can reach it.
 */
public final class StatusPage {
  /** The query parameter that picks the view. */
  public static final String VIEW_PARAMETER = "view";
  /** {@link #VIEW_PARAMETER}'s value that asks for the page; any other value, or none, the JSON. */
  public static final String HTML_VIEW = "html";
  /** The content type of {@link #json}. */
  public static final String JSON_CONTENT_TYPE = "application/json";
  /** The content type of {@link #html}. */
  public static final String HTML_CONTENT_TYPE = "text/html;charset=utf-8";
  /** The page, a resource beside this class. */
  static final String RESOURCE = "status.html";

  private static final byte[] PAGE = load();

  private StatusPage() {}

  /** The page's bytes (UTF-8), a fresh copy; serve them with {@link #HTML_CONTENT_TYPE}. */
  public static byte[] html() {
    return PAGE.clone();
  }

  /**
   * Whether a request whose raw (undecoded) query string is {@code rawQuery} asks for the page:
   * whether one of its parameters is {@code view=html}. Null or empty asks for the JSON.
   */
  public static boolean wantsHtml(String rawQuery) {
    if (rawQuery == null) {
      return false;
    }
    int start = 0;
    while (start <= rawQuery.length()) {
      int end = rawQuery.indexOf('&', start);
      if (end < 0) {
        end = rawQuery.length();
      }
      if (isHtmlView(rawQuery, start, end)) {
        return true;
      }
      start = end + 1;
    }
    return false;
  }

  private static boolean isHtmlView(String q, int start, int end) {
    int eq = start + VIEW_PARAMETER.length();
    return end - start == VIEW_PARAMETER.length() + 1 + HTML_VIEW.length()
        && q.startsWith(VIEW_PARAMETER, start) && q.charAt(eq) == '='
        && q.regionMatches(true, eq + 1, HTML_VIEW, 0, HTML_VIEW.length());
  }

  /**
   * The JSON document of {@code shedders}, in the map's order, made now.
   *
   * @param shedders by the name to show for each, such as a route key; not null
   */
  public static String json(Map<String, ? extends LoadShedder> shedders) {
    return json(shedders, System.currentTimeMillis());
  }

  static String json(Map<String, ? extends LoadShedder> shedders, long timeMillis) {
    StringBuilder sb = new StringBuilder(256 + 640 * shedders.size()).append("{\"shedders\":{");
    boolean first = true;
    for (Map.Entry<String, ? extends LoadShedder> e : shedders.entrySet()) {
      if (!first) {
        sb.append(',');
      }
      first = false;
      LoadShedder shedder = e.getValue();
      Snapshot s = shedder.snapshot();
      quote(sb, e.getKey()).append(":{\"limit\":").append(s.limit())
          .append(",\"inflight\":").append(s.inflight())
          .append(",\"queued\":").append(s.queued())
          .append(",\"cutoff\":").append(s.cutoff())
          .append(",\"rejectionRatio\":").append(String.format(Locale.ROOT, "%.4f",
              s.rejectionRatio()))
          .append(",\"overloaded\":").append(s.overloaded());
      int cap = shedder.concurrencyCap();
      if (cap != Integer.MAX_VALUE) {
        sb.append(",\"concurrencyCap\":").append(cap);
      }
      for (Snapshot.Counter c : Snapshot.Counter.values()) {
        sb.append(",\"").append(c.name().toLowerCase(Locale.ROOT)).append("\":[");
        for (int t = 0; t < Priority.TIERS; t++) {
          sb.append(t == 0 ? "" : ",").append(s.count(c, t));
        }
        sb.append(']');
      }
      sb.append(",\"queueWaitNanos\":[");
      for (int t = 0; t < Priority.TIERS; t++) {
        sb.append(t == 0 ? "" : ",").append(shedder.totalQueueWaitNanos(t));
      }
      sb.append("]}");
    }
    return sb.append("},\"time\":").append(timeMillis).append('}').toString();
  }

  private static StringBuilder quote(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (c < 0x20 || c == '\u2028' || c == '\u2029') {
        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.append('"');
  }

  private static byte[] load() {
    try (InputStream in = StatusPage.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + RESOURCE + " beside "
            + StatusPage.class.getName());
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
