package dev.weir.examples.experiment;

import dev.weir.Priority;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.handler.QoSHandler;

/**
 * Jetty 12's {@link QoSHandler} with a static limit of concurrent requests and the tier of {@code
 * X-Weir-Tier} as its priority, the peer Weir is compared with in the {@link OverloadExperiment}.
 *
 * <p>QoSHandler resumes suspended requests highest priority first, and its priorities grow with
 * importance, while Weir's tiers shrink with it; tier {@code t} is therefore priority {@code 5 -
 * t}. A request without the header, or with a malformed one, gets the lowest priority, 0. Every
 * other setting keeps Jetty's default: at most 1024 suspended requests (more are answered 503),
 * suspended for as long as it takes ({@code maxSuspend} zero).
 */
public final class TierQoSHandler extends QoSHandler {
  /** The header carrying {@code tier} or {@code tier:cohort}. */
  public static final String TIER_HEADER = "X-Weir-Tier";

  /**
   * @param handler the application
   * @param maxRequestCount the static limit of concurrent requests, or 0 for Jetty's default,
   *     which Jetty 12.1 sets when the handler starts: half the server's maximum threads
   * @throws IllegalArgumentException if {@code maxRequestCount} is negative
   */
  public TierQoSHandler(Handler handler, int maxRequestCount) {
    super(handler);
    if (maxRequestCount < 0) {
      throw new IllegalArgumentException(
          "maxRequestCount must be 0 (Jetty's default) or more, was " + maxRequestCount);
    }
    if (maxRequestCount > 0) {
      setMaxRequestCount(maxRequestCount);
    }
  }

  @Override
  protected int getPriority(Request request) {
    return priorityOf(request.getHeaders().get(TIER_HEADER));
  }

  /** The QoSHandler priority of a tier header's value: {@code 5 - tier}, 0 if absent or bad. */
  static int priorityOf(String header) {
    if (header == null) {
      return 0;
    }
    try {
      return Priority.TIERS - 1 - Priority.tier(Priority.parse(header.trim(), 0));
    } catch (IllegalArgumentException e) {
      return 0;
    }
  }
}
