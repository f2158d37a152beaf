package dev.weir.servlet;

import dev.weir.LoadShedder;
import dev.weir.Priority;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import jakarta.servlet.http.HttpServletRequest;
import java.util.function.Function;

/** A {@link WeirFilter.Builder}'s settings, frozen. */
final class Settings {
  final PriorityResolver resolver;
  final int defaultPriority;
  final Function<? super HttpServletRequest, String> routeKey;
  final int maxShedders;
  final boolean boundedResponseTime;
  final int shedStatus;
  final int unavailableStatus;
  final long retryAfterSeconds;
  final RejectionFormat format;
  /** A MeterRegistry, typed Object so that Micrometer stays optional. */
  final Object meterRegistry;
  private final WeirFilter.Builder b;

  Settings(WeirFilter.Builder b) {
    this.b = b;
    this.resolver = b.resolver != null ? b.resolver : HeaderPriorityResolver.defaults();
    this.defaultPriority = Priority.of(b.defaultTier, Priority.COHORTS / 2);
    this.routeKey = b.routeKey != null ? b.routeKey : Settings::methodAndServletPath;
    this.maxShedders = b.maxShedders;
    this.boundedResponseTime = b.boundedResponseTime;
    this.shedStatus = b.shedStatus;
    this.unavailableStatus = b.unavailableStatus;
    this.retryAfterSeconds = b.retryAfter.toSeconds();
    this.format = b.format;
    this.meterRegistry = b.meterRegistry;
    // Fail now, not on the first request, if the shedder settings are inconsistent.
    if (b.queueTimeout != null && b.queueTimeout.compareTo(b.requestTimeout) > 0) {
      throw new IllegalArgumentException("queueTimeout (" + b.queueTimeout
          + ") must not exceed requestTimeout (" + b.requestTimeout + ")");
    }
  }

  /** A new shedder named {@code name}, with a fresh limit and rejector. */
  LoadShedder newShedder(String name) {
    LoadShedder.Builder sb = LoadShedder.builder()
        .name(name)
        .requestTimeout(b.requestTimeout)
        .queueCapacity(b.queueCapacity)
        .limit(b.limit != null ? b.limit : Limits::adaptive)
        .rejector(b.rejector != null ? b.rejector : Rejectors::adaptive);
    if (b.queueTimeout != null) {
      sb.queueTimeout(b.queueTimeout);
    }
    if (b.timer != null) {
      sb.timer(b.timer);
    }
    return sb.build();
  }

  static String methodAndServletPath(HttpServletRequest request) {
    String path = request.getServletPath();
    return request.getMethod() + " " + (path == null || path.isEmpty() ? "/" : path);
  }
}
