package dev.weir.jetty;

import dev.weir.http.HeaderFields;
import org.eclipse.jetty.http.HttpFields;

/**
 * A Jetty core request's header fields for {@link dev.weir.http.PriorityHeaders}, by index, so
 * that the priority headers are read in one pass over the fields and allocate nothing.
 */
final class JettyHeaders implements HeaderFields<HttpFields> {
  static final JettyHeaders INSTANCE = new JettyHeaders();

  private JettyHeaders() {}

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
