package dev.weir.http;

/**
 * How the contract reads a request's headers, implemented once by each adapter. The request is
 * passed in rather than captured, so that an adapter's lookup is one stateless object and reading
 * a priority allocates nothing.
 *
 * @param <R> the adapter's request type
 */
@FunctionalInterface
public interface HeaderLookup<R> {
  /**
   * The value of header {@code name} in {@code request}, or null if it is absent. A header sent
   * more than once is returned as its values joined by {@code ","}, as HTTP defines and as Ring
   * presents them; an implementation may stop joining once the value is longer than {@link
   * #MAX_USEFUL_LENGTH}, since no longer value is read.
   *
   * @param name a header name, always in lower case
   */
  String header(R request, String name);

  /** The longest header value the contract reads, {@value}; longer values are ignored. */
  int MAX_USEFUL_LENGTH = PriorityHeaders.MAX_BAGGAGE_LENGTH;
}
