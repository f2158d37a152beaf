package dev.weir.servlet;

import dev.weir.http.HeaderFields;
import dev.weir.http.PriorityHeaders;
import jakarta.servlet.http.HttpServletRequest;
import org.eclipse.jetty.ee10.servlet.ServletApiRequest;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;
import org.eclipse.jetty.http.HttpFields;

/**
 * On Jetty 12 (ee10), reads the priority headers from the server's own header fields in one pass
 * ({@link PriorityHeaders#priorityFromFields}) instead of one {@code getHeader} per header name,
 * each of which scans every field. Loaded only when those classes are visible to the filter (see
 * {@link WeirFilter}); any other request, or container, is read through the Servlet API.
 */
final class JettyServletHeaders implements HeaderFields<HttpFields> {
  private static final JettyServletHeaders INSTANCE = new JettyServletHeaders();

  private JettyServletHeaders() {}

  /** The priority of {@code request}, or -1 if it is not Jetty's own request object. */
  static int priority(PriorityHeaders headers, HttpServletRequest request) {
    if (!(request instanceof ServletApiRequest)) {
      return -1; // wrapped by an earlier filter, which may present other headers
    }
    ServletContextRequest r = ServletContextRequest.getServletContextRequest(request);
    return r == null ? -1 : headers.priorityFromFields(r.getHeaders(), INSTANCE);
  }

  @Override
  public int size(HttpFields fields) {
    return fields.size();
  }

  @Override
  public String name(HttpFields fields, int index) {
    return fields.getField(index).getName();
  }

  @Override
  public String value(HttpFields fields, int index) {
    return fields.getField(index).getValue();
  }
}
