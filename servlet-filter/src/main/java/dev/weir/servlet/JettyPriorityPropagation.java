package dev.weir.servlet;

import jakarta.servlet.ServletRequest;
import org.eclipse.jetty.client.Request;

/**
 * {@link PriorityPropagation} for Jetty's HTTP client ({@code org.eclipse.jetty.client.Request}).
 * A class of its own so that the JDK helper works without Jetty on the class path.
 */
public final class JettyPriorityPropagation {
  private JettyPriorityPropagation() {}

  /**
   * Sets the tier header on {@code outgoing} from {@code incoming}'s priority; does nothing if
   * {@code incoming} has none.
   *
   * @return {@code outgoing}
   */
  public static Request propagate(ServletRequest incoming, Request outgoing) {
    int p = PriorityPropagation.priorityOf(incoming);
    return p < 0 ? outgoing : propagate(p, outgoing);
  }

  /**
   * Sets the tier header on {@code outgoing}.
   *
   * @throws IllegalArgumentException if {@code priority} is not a valid packed priority
   */
  public static Request propagate(int priority, Request outgoing) {
    String value = PriorityPropagation.headerValue(priority);
    return outgoing.headers(h -> h.put(dev.weir.http.PriorityHeaders.DEFAULT_TIER_HEADER, value));
  }
}
