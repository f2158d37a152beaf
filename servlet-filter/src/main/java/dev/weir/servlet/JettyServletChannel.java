package dev.weir.servlet;

import jakarta.servlet.ServletRequest;
import org.eclipse.jetty.ee10.servlet.ServletApiRequest;
import org.eclipse.jetty.ee10.servlet.ServletChannel;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;

/**
 * On Jetty 12 (ee10), answers the attribute by which Jetty finds its own request under a wrapper:
 * at the end of the filter chain, before the servlet, {@code
 * ServletContextRequest.getServletContextRequest} asks a wrapped request for the attribute named
 * after {@link ServletChannel}, and unwraps the request itself if the answer is null. Jetty's own
 * request answers null, after its whole attribute lookup (the request's attributes, then the
 * session's): delegated to it, every admitted request would pay for that lookup, then the
 * unwrapping.
 * Here the wrapper answers the channel, as the lookup expects of a wrapper, with two field reads on
 * the request underneath. Loaded only when those classes are visible to the filter (see {@link
 * WeirFilter}).
 */
final class JettyServletChannel {
  /** The attribute's name, as Jetty asks for it. */
  private static final String ATTRIBUTE = ServletChannel.class.getName();

  private JettyServletChannel() {}

  /**
   * The channel of {@code request} if {@code name} is the channel's attribute and {@code request}
   * is Jetty's own request object; else null, for the caller to look the attribute up as usual.
   */
  static Object lookup(String name, ServletRequest request) {
    // Jetty passes the class's cached name: one reference comparison on every other attribute.
    if (name != ATTRIBUTE && !ATTRIBUTE.equals(name)) {
      return null;
    }
    if (!(request instanceof ServletApiRequest)) {
      return null;
    }
    ServletContextRequest r = ServletContextRequest.getServletContextRequest(request);
    return r == null ? null : r.getServletChannel();
  }
}
