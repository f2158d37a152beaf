package dev.weir.http;

/**
 * Positional access to a request's header fields, implemented once by an adapter whose server
 * keeps them in a list (Jetty's {@code HttpFields}), so that {@link
 * PriorityHeaders#priorityFromFields} reads every header it needs in one pass over the fields,
 * instead of one lookup per header name with a scan each. The fields are passed in rather than
 * captured, so that an adapter's access is one stateless object and reading allocates nothing.
 *
 * @param <F> the server's header list
 */
public interface HeaderFields<F> {
  /** How many fields {@code fields} holds; a name sent twice is two fields. */
  int size(F fields);

  /** The name of field {@code index}, in any case. */
  String name(F fields, int index);

  /** The value of field {@code index}; null is read as empty. */
  String value(F fields, int index);
}
