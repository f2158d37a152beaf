package dev.weir.jetty;

import dev.weir.http.HeaderLookup;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.server.Request;

/**
 * A Jetty core request's headers for {@link dev.weir.http.PriorityHeaders}: the value, or repeated
 * values joined by commas (joining stops past {@link HeaderLookup#MAX_USEFUL_LENGTH}). Walks the
 * fields by index, so an absent or single header allocates nothing.
 */
final class JettyHeaders implements HeaderLookup<Request> {
  static final JettyHeaders INSTANCE = new JettyHeaders();

  private JettyHeaders() {}

  @Override
  public String header(Request request, String name) {
    HttpFields fields = request.getHeaders();
    String first = null;
    StringBuilder joined = null;
    for (int i = 0, n = fields.size(); i < n; i++) {
      HttpField f = fields.getField(i);
      if (!f.is(name)) {
        continue;
      }
      String v = f.getValue();
      if (first == null) {
        first = v == null ? "" : v;
      } else {
        if (joined == null) {
          joined = new StringBuilder(first);
        }
        if (joined.length() > MAX_USEFUL_LENGTH) {
          break;
        }
        joined.append(',').append(v == null ? "" : v);
      }
    }
    return joined != null ? joined.toString() : first;
  }
}
