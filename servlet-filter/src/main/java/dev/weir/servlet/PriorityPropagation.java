package dev.weir.servlet;

import dev.weir.Priority;
import jakarta.servlet.ServletRequest;
import java.net.http.HttpRequest;

/**
 * Copies a request's priority onto the requests it makes to other services, so that the whole
 * call graph sheds the same requests. Writes the tier header {@value
 * dev.weir.http.PriorityHeaders#DEFAULT_TIER_HEADER} as {@code "tier:cohort"}, which the default resolver
 * of the next service reads first.
 *
 * <p>This class needs only the JDK; {@link JettyPriorityPropagation} does the same for Jetty's
 * client.
 */
public final class PriorityPropagation {
  private PriorityPropagation() {}

  /**
   * The priority the filter gave {@code incoming} ({@link WeirFilter#PRIORITY_ATTRIBUTE}), or -1
   * if it did not pass through a {@link WeirFilter}.
   */
  public static int priorityOf(ServletRequest incoming) {
    Object p = incoming.getAttribute(WeirFilter.PRIORITY_ATTRIBUTE);
    return p instanceof Integer && Priority.isValid((Integer) p) ? (Integer) p : -1;
  }

  /** The header value for {@code priority}, {@code "tier:cohort"}. */
  public static String headerValue(int priority) {
    return Priority.toString(priority);
  }

  /**
   * Sets the tier header on {@code outgoing} from {@code incoming}'s priority; does nothing if
   * {@code incoming} has none.
   *
   * @return {@code outgoing}
   */
  public static HttpRequest.Builder propagate(ServletRequest incoming,
      HttpRequest.Builder outgoing) {
    int p = priorityOf(incoming);
    return p < 0 ? outgoing : propagate(p, outgoing);
  }

  /**
   * Sets the tier header on {@code outgoing}.
   *
   * @throws IllegalArgumentException if {@code priority} is not a valid packed priority
   */
  public static HttpRequest.Builder propagate(int priority, HttpRequest.Builder outgoing) {
    return outgoing.setHeader(dev.weir.http.PriorityHeaders.DEFAULT_TIER_HEADER, headerValue(priority));
  }
}
