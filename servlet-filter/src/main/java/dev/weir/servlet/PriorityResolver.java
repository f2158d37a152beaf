package dev.weir.servlet;

import jakarta.servlet.http.HttpServletRequest;

/**
 * Decides a request's packed {@link dev.weir.Priority} from what it carries.
 *
 * <p>Called once per request on the container thread, before admission, so it must be quick and
 * must not block. It must not trust its input: a resolver that throws, or returns an invalid
 * priority, costs the request nothing but its priority (the filter then uses its default tier and
 * logs at {@code FINE}); it never turns into a 500.
 *
 * @see dev.weir.http.PriorityHeaders the default, which reads headers and W3C baggage
 */
@FunctionalInterface
public interface PriorityResolver {
  /** The request's packed priority, in 0..767. */
  int resolve(HttpServletRequest request);
}
