package dev.weir.servlet;

import dev.weir.Cohorts;
import dev.weir.LoadShedder;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import dev.weir.http.HttpAnswers;
import dev.weir.http.PriorityHeaders;
import dev.weir.http.RejectionFormat;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The filter's init-params. All are optional; an unknown {@code weir.*} name or an invalid value
 * fails {@code init} with a {@link ServletException} naming the init-param. They fill the same
 * three core settings a programmatic filter takes: a {@link LoadShedder.Builder} template
 * ({@code requestTimeout} to {@code rejector}), {@link PriorityHeaders} ({@code defaultTier} to
 * {@code maxHeaderLength}) and {@link HttpAnswers} ({@code shedStatus} to {@code
 * rejectionFormat}).
 *
 * <table>
 *   <caption>Init-params</caption>
 *   <tr><th>name</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>weir.requestTimeout</td><td>3s</td><td>processing deadline after arrival</td></tr>
 *   <tr><td>weir.queueTimeout</td><td>a third of requestTimeout</td><td>longest queue wait</td></tr>
 *   <tr><td>weir.queueCapacity</td><td>4096</td><td>queued requests per shedder</td></tr>
 *   <tr><td>weir.limit</td><td>adaptive</td><td>{@code adaptive} or a fixed number</td></tr>
 *   <tr><td>weir.rejector</td><td>adaptive</td><td>{@code adaptive} or {@code none}</td></tr>
 *   <tr><td>weir.routes</td><td>endpoint</td><td>{@code endpoint} (method + servlet mapping) or
 *       {@code single}</td></tr>
 *   <tr><td>weir.maxShedders</td><td>64</td><td>per-route shedders before the overflow one</td></tr>
 *   <tr><td>weir.containerThreads</td><td>0</td><td>the container's request threads, where the
 *       filter cannot read them; 0 reads Jetty's, Tomcat's or Undertow's pool</td></tr>
 *   <tr><td>weir.routeIdleTimeout</td><td>5m</td><td>an idle route's slot is freed, once half
 *   are taken</td></tr>
 *   <tr><td>weir.bodyReadTimeout</td><td>requestTimeout</td><td>bound on reading the body</td></tr>
 *   <tr><td>weir.boundedResponseTime</td><td>false</td><td>answer 503 at the deadline</td></tr>
 *   <tr><td>weir.maxBufferedBytes</td><td>1048576</td><td>bounded mode: bytes buffered before
 *       the response streams</td></tr>
 *   <tr><td>weir.shedStatus</td><td>429</td><td>status when shed or the queue is full</td></tr>
 *   <tr><td>weir.unavailableStatus</td><td>503</td><td>status on timeout or shutdown</td></tr>
 *   <tr><td>weir.retryAfter</td><td>1s</td><td>{@code Retry-After}, whole seconds; 0 omits it (under 1s otherwise fails)</td></tr>
 *   <tr><td>weir.rejectionFormat</td><td>text</td><td>{@code text}, {@code json} or {@code empty}</td></tr>
 *   <tr><td>weir.defaultTier</td><td>3</td><td>tier of requests that say nothing</td></tr>
 *   <tr><td>weir.tierHeader</td><td>X-Weir-Tier</td><td>header with {@code t} or {@code t:c}</td></tr>
 *   <tr><td>weir.callerHeader</td><td>X-Weir-Caller</td><td>header naming the calling service</td></tr>
 *   <tr><td>weir.callerTiers</td><td>none</td><td>{@code service=tier,...}</td></tr>
 *   <tr><td>weir.userKeyHeader</td><td>X-Weir-User</td><td>header hashed into the cohort</td></tr>
 *   <tr><td>weir.cohortRotation</td><td>1h</td><td>how often user cohorts rotate</td></tr>
 *   <tr><td>weir.baggage</td><td>true</td><td>read W3C baggage {@code weir-tier}, {@code weir-cohort}</td></tr>
 *   <tr><td>weir.maxHeaderLength</td><td>256</td><td>longer headers are ignored</td></tr>
 * </table>
 *
 * <p>Durations are {@code 250ms}, {@code 3s}, {@code 2m}, {@code 1h} or ISO-8601 ({@code PT3S}).
 */
public final class InitParams {
  /** Every init-param name the filter knows. */
  public static final List<String> NAMES = List.of("weir.requestTimeout", "weir.queueTimeout",
      "weir.queueCapacity", "weir.limit", "weir.rejector", "weir.routes", "weir.maxShedders",
      "weir.boundedResponseTime", "weir.shedStatus", "weir.unavailableStatus", "weir.retryAfter",
      "weir.rejectionFormat", "weir.defaultTier", "weir.tierHeader", "weir.callerHeader",
      "weir.callerTiers", "weir.userKeyHeader", "weir.cohortRotation", "weir.baggage",
      "weir.maxHeaderLength", "weir.routeIdleTimeout", "weir.maxBufferedBytes",
      "weir.bodyReadTimeout", "weir.containerThreads");

  private InitParams() {}

  /**
   * Applies {@code config}'s init-params to {@code b} and freezes it, as {@link
   * WeirFilter.Builder#build()} does.
   *
   * @throws ServletException naming the init-param that is unknown or invalid, or the settings
   *     that are inconsistent
   */
  static WeirFilter.Builder apply(FilterConfig config, WeirFilter.Builder b)
      throws ServletException {
    LoadShedder.Builder shedder = LoadShedder.builder();
    PriorityHeaders.Builder headers = PriorityHeaders.builder();
    HttpAnswers.Builder answers = HttpAnswers.builder();
    if (config != null) {
      for (String name : Collections.list(config.getInitParameterNames())) {
        if (name.startsWith("weir.") && !NAMES.contains(name)) {
          throw new ServletException("unknown init-param " + name + "; known: " + NAMES);
        }
      }
      for (String name : NAMES) {
        String raw = config.getInitParameter(name);
        if (raw == null) {
          continue;
        }
        try {
          set(name, raw.trim(), b, shedder, headers, answers);
        } catch (IllegalArgumentException e) {
          throw new ServletException("invalid init-param " + name + "='" + clip(raw) + "': "
              + e.getMessage(), e);
        }
      }
    }
    try {
      return b.shedder(shedder).priorityHeaders(headers.build()).answers(answers.build())
          .frozen();
    } catch (IllegalArgumentException e) {
      throw new ServletException("invalid WeirFilter init-params: " + e.getMessage(), e);
    }
  }

  private static void set(String name, String v, WeirFilter.Builder b, LoadShedder.Builder s,
      PriorityHeaders.Builder r, HttpAnswers.Builder a) {
    switch (name) {
      case "weir.requestTimeout": s.requestTimeout(duration(v)); break;
      case "weir.queueTimeout": s.queueTimeout(duration(v)); break;
      case "weir.queueCapacity": s.queueCapacity(integer(v)); break;
      case "weir.limit":
        if (v.equalsIgnoreCase("adaptive")) {
          s.limit(Limits::adaptive);
        } else {
          int n = integer(v);
          Limits.fixed(n); // validates now
          s.limit(() -> Limits.fixed(n));
        }
        break;
      case "weir.rejector":
        if (v.equalsIgnoreCase("adaptive")) {
          s.rejector(Rejectors::adaptive);
        } else if (v.equalsIgnoreCase("none")) {
          s.rejector(Rejectors::none);
        } else {
          throw new IllegalArgumentException("expected 'adaptive' or 'none'");
        }
        break;
      case "weir.routes":
        if (v.equalsIgnoreCase("single")) {
          b.singleShedder();
        } else if (!v.equalsIgnoreCase("endpoint")) {
          throw new IllegalArgumentException("expected 'endpoint' or 'single'");
        }
        break;
      case "weir.maxShedders": b.maxShedders(integer(v)); break;
      case "weir.containerThreads": b.containerThreads(integer(v)); break;
      case "weir.boundedResponseTime": b.boundedResponseTime(bool(v)); break;
      case "weir.routeIdleTimeout": b.routeIdleTimeout(duration(v)); break;
      case "weir.maxBufferedBytes": b.maxBufferedBytes(integer(v)); break;
      case "weir.bodyReadTimeout": b.bodyReadTimeout(duration(v)); break;
      case "weir.shedStatus": a.shedStatus(integer(v)); break;
      case "weir.unavailableStatus": a.unavailableStatus(integer(v)); break;
      case "weir.retryAfter": a.retryAfter(duration(v)); break;
      case "weir.rejectionFormat":
        try {
          a.format(RejectionFormat.valueOf(v.toUpperCase(Locale.ROOT)));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("expected 'text', 'json' or 'empty'");
        }
        break;
      case "weir.defaultTier": r.defaultTier(integer(v)); break;
      case "weir.tierHeader": r.tierHeader(v); break;
      case "weir.callerHeader": r.callerHeader(v); break;
      case "weir.callerTiers":
        Set<String> callers = new HashSet<>();
        for (String entry : v.split(",")) {
          if (entry.isBlank()) {
            continue;
          }
          int eq = entry.indexOf('=');
          if (eq < 0) {
            throw new IllegalArgumentException("expected service=tier, was '" + entry.trim() + "'");
          }
          String caller = entry.substring(0, eq).trim();
          if (!callers.add(caller)) { // two tiers for one caller: one of them is a mistake
            throw new IllegalArgumentException("caller '" + caller + "' is given twice");
          }
          r.callerTier(caller, integer(entry.substring(eq + 1).trim()));
        }
        break;
      case "weir.userKeyHeader": r.userKeyHeader(v); break;
      case "weir.cohortRotation": r.cohorts(Cohorts.rotating(duration(v))); break;
      case "weir.baggage": r.readBaggage(bool(v)); break;
      case "weir.maxHeaderLength": r.maxHeaderLength(integer(v)); break;
      default: throw new AssertionError(name);
    }
  }

  static Duration duration(String v) {
    String s = v.toLowerCase(Locale.ROOT);
    if (s.trim().equals("0")) {
      return Duration.ZERO; // zero needs no unit (weir.retryAfter=0 omits the header)
    }
    try {
      if (s.startsWith("pt") || s.startsWith("p")) {
        return Duration.parse(v);
      }
      if (s.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(s.substring(0, s.length() - 2).trim()));
      }
      long n = Long.parseLong(s.substring(0, Math.max(0, s.length() - 1)).trim());
      switch (s.isEmpty() ? ' ' : s.charAt(s.length() - 1)) {
        case 's': return Duration.ofSeconds(n);
        case 'm': return Duration.ofMinutes(n);
        case 'h': return Duration.ofHours(n);
        default: break;
      }
    } catch (NumberFormatException | DateTimeParseException | ArithmeticException e) {
      // fall through to the clear message
    }
    throw new IllegalArgumentException("expected a duration such as 250ms, 3s, 2m, 1h or PT3S");
  }

  private static int integer(String v) {
    try {
      return Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("expected an integer");
    }
  }

  private static boolean bool(String v) {
    if (v.equalsIgnoreCase("true")) {
      return true;
    }
    if (v.equalsIgnoreCase("false")) {
      return false;
    }
    throw new IllegalArgumentException("expected 'true' or 'false'");
  }

  private static String clip(String s) {
    return s.length() <= 64 ? s : s.substring(0, 64) + "...";
  }
}
