package dev.weir.servlet;

import dev.weir.Limit;
import dev.weir.LoadShedder;
import dev.weir.Priority;
import dev.weir.Rejector;
import dev.weir.Snapshot;
import dev.weir.Timer;
import dev.weir.WorkerPool;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A Servlet 6 filter that admits requests through Weir {@link LoadShedder}s: one per endpoint,
 * prioritised by a {@link PriorityResolver}.
 *
 * <h2>Zero configuration</h2>
 * Added with no init-params, the filter protects the application with adaptive limits and
 * shedding, reading priorities from {@value HeaderPriorityResolver#DEFAULT_TIER_HEADER} and W3C
 * baggage. Map it for the {@code REQUEST} and {@code ASYNC} dispatcher types with {@code
 * async-supported} true; see {@link InitParams} for the init-params and their defaults, or use
 * {@link #builder()}.
 *
 * <h2>What happens to a request</h2>
 * <ul>
 *   <li>Admitted at once: the chain runs on the container thread.
 *   <li>Queued: the request goes async ({@code startAsync}); no thread is held while it waits. When
 *       admitted it is resumed with {@code AsyncContext.dispatch()} and the chain runs with the
 *       permit attached as {@link #PERMIT_ATTRIBUTE}. If the application's servlet is not
 *       async-supported, the container thread waits instead (at most the queue timeout).
 *   <li>Shed, or the queue is full: {@code 429} with {@code Retry-After}.
 *   <li>Queue timeout, or shutting down: {@code 503} with {@code Retry-After}.
 * </ul>
 *
 * <h2>Permits</h2>
 * Each admitted request's permit is released exactly once, when the response is really done: when
 * the chain returns, or, if the application went async, when its async cycle completes, errs or
 * times out. The latency the limit learns from is therefore the time to completion. The outcome
 * is {@code SUCCESS} for a status below 500, {@code DROPPED} for 503 and 504 (the application
 * itself reports overload or a timeout), for an async timeout and for a missed deadline in
 * bounded mode, and {@code ERROR} for any other 5xx, an exception or an async error.
 *
 * <h2>Clients that go away while queued</h2>
 * When the container reports it ({@code AsyncListener.onError}, for example on an HTTP/2 stream
 * reset or when the server closes connections on stop), the request is withdrawn from the queue at
 * once. The Servlet API offers no portable way to notice a silent HTTP/1.1 close of a suspended
 * request, and Jetty does not report one, so such a request leaves at its queue timeout: the wait
 * is always bounded and nothing leaks.
 *
 * <h2>Bounded response time</h2>
 * Off by default. When on, the application writes into a buffered response; if the request's
 * deadline (arrival + request timeout) passes first, a Weir thread answers 503 on time and
 * everything the application writes afterwards goes nowhere. A CAS decides between the deadline
 * answer and the normal completion, so exactly one of them reaches the client. The permit is
 * still held until the application returns, because its thread is still busy. Responses are not
 * streamed in this mode.
 *
 * <h2>Threads</h2>
 * The filter is thread-safe. {@link #destroy()} closes every shedder: queued requests are answered
 * 503 and later ones too.
 */
public final class WeirFilter implements Filter {
  /** The request attribute holding the {@link dev.weir.Permit} of an admitted request. */
  public static final String PERMIT_ATTRIBUTE = "dev.weir.servlet.permit";
  /** The request attribute holding the request's packed priority, an {@link Integer}. */
  public static final String PRIORITY_ATTRIBUTE = "dev.weir.servlet.priority";
  /** The route key of the shared overflow shedder in {@link #shedders()}. */
  public static final String OVERFLOW_ROUTE = "<overflow>";
  /** The servlet-context attribute holding the filter, read by {@link WeirStatusServlet}. */
  public static final String CONTEXT_ATTRIBUTE = WeirFilter.class.getName();

  static final String EXCHANGE_ATTRIBUTE = "dev.weir.servlet.exchange";
  private static final Logger LOG = Logger.getLogger(WeirFilter.class.getName());

  private final boolean programmatic;
  private volatile Settings settings;
  private volatile RouteShedders shedders;
  private volatile Responder responder;
  private volatile WorkerPool deadlinePool;
  private volatile boolean destroyed;

  /** The zero-configuration filter; settings come from init-params in {@link #init}. */
  public WeirFilter() {
    this.programmatic = false;
  }

  private WeirFilter(Builder b) {
    this.programmatic = true;
    start(new Settings(b));
  }

  /** A builder for programmatic use; every setting has a documented default. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Reads the init-params ({@link InitParams}), unless the filter was built with {@link
   * #builder()}, whose settings win.
   *
   * @throws ServletException naming the init-param, if one is unknown or invalid
   */
  @Override
  public void init(FilterConfig config) throws ServletException {
    if (!programmatic) {
      Builder b = builder();
      InitParams.apply(config, b);
      try {
        start(new Settings(b));
      } catch (IllegalArgumentException e) {
        throw new ServletException("invalid WeirFilter init-params: " + e.getMessage(), e);
      }
    }
    if (config != null && config.getServletContext() != null) {
      config.getServletContext().setAttribute(CONTEXT_ATTRIBUTE, this);
    }
  }

  private void start(Settings s) {
    this.settings = s;
    this.shedders = new RouteShedders(s);
    this.responder = new Responder(s);
    if (s.boundedResponseTime) {
      this.deadlinePool = WorkerPool.of("weir-deadline", 2);
    }
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest) || !(res instanceof HttpServletResponse)) {
      chain.doFilter(req, res);
      return;
    }
    HttpServletRequest request = (HttpServletRequest) req;
    HttpServletResponse response = (HttpServletResponse) res;
    Object attached = request.getAttribute(EXCHANGE_ATTRIBUTE);
    if (attached instanceof Exchange) {
      Exchange e = (Exchange) attached;
      if (request.getDispatcherType() == DispatcherType.ASYNC && e.claimResume()) {
        e.runAdmitted(request, response, chain); // our own dispatch of a request admitted from the queue
      } else {
        chain.doFilter(req, res); // a forward, include, error or the application's own dispatch
      }
      return;
    }
    if (request.getDispatcherType() != DispatcherType.REQUEST) {
      chain.doFilter(req, res);
      return;
    }
    RouteShedders routes = shedders;
    if (routes == null) {
      throw new ServletException("WeirFilter used before init()");
    }
    if (destroyed) {
      responder.reject(response, dev.weir.RejectReason.SHUTTING_DOWN);
      return;
    }
    int priority = resolve(request);
    LoadShedder shedder = routes.forRequest(request);
    Exchange e = new Exchange(this, shedder, request, response, priority);
    request.setAttribute(EXCHANGE_ATTRIBUTE, e);
    request.setAttribute(PRIORITY_ATTRIBUTE, priority);
    e.submit(chain);
  }

  private int resolve(HttpServletRequest request) {
    Settings s = settings;
    try {
      int p = s.resolver.resolve(request);
      if (Priority.isValid(p)) {
        return p;
      }
      LOG.fine(() -> "PriorityResolver returned invalid priority " + p + "; using the default");
    } catch (RuntimeException ex) {
      LOG.log(Level.FINE, "PriorityResolver threw; using the default priority", ex);
    }
    return s.defaultPriority;
  }

  /** Closes every shedder: queued requests are answered 503, later ones too. Idempotent. */
  @Override
  public void destroy() {
    destroyed = true;
    RouteShedders routes = shedders;
    if (routes != null) {
      routes.close();
    }
    WorkerPool pool = deadlinePool;
    if (pool != null) {
      pool.close();
    }
  }

  /**
   * The shedders created so far, by route key (the overflow shedder under {@link
   * #OVERFLOW_ROUTE}). An unmodifiable view; empty before {@link #init}. For tests and
   * operators: do not submit to them.
   */
  public Map<String, LoadShedder> shedders() {
    RouteShedders routes = shedders;
    return routes == null ? Map.of() : routes.view();
  }

  /** A snapshot of every shedder, by route key. */
  public Map<String, Snapshot> snapshots() {
    RouteShedders routes = shedders;
    return routes == null ? Map.of() : routes.snapshots();
  }

  Settings settings() {
    return settings;
  }

  Responder responder() {
    return responder;
  }

  WorkerPool deadlinePool() {
    return deadlinePool;
  }

  /**
   * Settings for a programmatic {@link WeirFilter}. Every setting has a default; invalid values
   * throw {@link IllegalArgumentException} naming the setting.
   */
  public static final class Builder {
    /** Default bound on the number of per-route shedders, 64. */
    public static final int DEFAULT_MAX_SHEDDERS = 64;
    /** Default {@code Retry-After}, 1 s. */
    public static final Duration DEFAULT_RETRY_AFTER = Duration.ofSeconds(1);

    PriorityResolver resolver;
    int defaultTier = HeaderPriorityResolver.DEFAULT_TIER;
    Duration requestTimeout = LoadShedder.Builder.DEFAULT_REQUEST_TIMEOUT;
    Duration queueTimeout;
    int queueCapacity = LoadShedder.Builder.DEFAULT_QUEUE_CAPACITY;
    Supplier<? extends Limit> limit;
    Supplier<? extends Rejector> rejector;
    Timer timer;
    Function<? super HttpServletRequest, String> routeKey;
    int maxShedders = DEFAULT_MAX_SHEDDERS;
    boolean boundedResponseTime;
    int shedStatus = 429;
    int unavailableStatus = 503;
    Duration retryAfter = DEFAULT_RETRY_AFTER;
    RejectionFormat format = RejectionFormat.TEXT;
    MeterRegistry meterRegistry;

    private Builder() {}

    /** How a request's priority is found. Default {@link HeaderPriorityResolver#defaults()}. */
    public Builder priorityResolver(PriorityResolver resolver) {
      this.resolver = Objects.requireNonNull(resolver, "priorityResolver");
      return this;
    }

    /**
     * The tier used when the resolver fails or returns an invalid priority (cohort 64). Default
     * {@value HeaderPriorityResolver#DEFAULT_TIER}. It does not change the default resolver's
     * default tier: configure that on {@link HeaderPriorityResolver.Builder#defaultTier}.
     */
    public Builder defaultTier(int tier) {
      if (tier < 0 || tier >= Priority.TIERS) {
        throw new IllegalArgumentException("defaultTier must be in 0.." + (Priority.TIERS - 1)
            + ", was " + tier);
      }
      this.defaultTier = tier;
      return this;
    }

    /** Each shedder's request timeout. Default 3 s. See {@link LoadShedder.Builder}. */
    public Builder requestTimeout(Duration timeout) {
      this.requestTimeout = positive("requestTimeout", timeout);
      return this;
    }

    /** Each shedder's queue timeout. Default a third of the request timeout. */
    public Builder queueTimeout(Duration timeout) {
      this.queueTimeout = positive("queueTimeout", timeout);
      return this;
    }

    /** Each shedder's queue capacity. Default 4096. */
    public Builder queueCapacity(int capacity) {
      if (capacity < 1) {
        throw new IllegalArgumentException("queueCapacity must be at least 1, was " + capacity);
      }
      this.queueCapacity = capacity;
      return this;
    }

    /**
     * Makes each shedder's limit controller; called once per shedder, since a controller serves
     * one shedder. Default {@code Limits::adaptive}.
     */
    public Builder limit(Supplier<? extends Limit> limit) {
      this.limit = Objects.requireNonNull(limit, "limit");
      return this;
    }

    /** Makes each shedder's rejector, once per shedder. Default {@code Rejectors::adaptive}. */
    public Builder rejector(Supplier<? extends Rejector> rejector) {
      this.rejector = Objects.requireNonNull(rejector, "rejector");
      return this;
    }

    /** The timer of every shedder. Default {@link Timer#system()}. */
    public Builder timer(Timer timer) {
      this.timer = Objects.requireNonNull(timer, "timer");
      return this;
    }

    /**
     * Maps a request to its route key: one shedder per key. Default method and servlet path, for
     * example {@code "GET /orders"}. It must return few distinct keys; past {@code maxShedders}
     * keys, requests share one overflow shedder. A function that throws or returns null sends the
     * request to the overflow shedder.
     */
    public Builder routeKey(Function<? super HttpServletRequest, String> routeKey) {
      this.routeKey = Objects.requireNonNull(routeKey, "routeKey");
      return this;
    }

    /** One shedder for the whole application instead of one per route. */
    public Builder singleShedder() {
      this.routeKey = r -> "all";
      return this;
    }

    /** The most per-route shedders, 1..10000. Default {@value #DEFAULT_MAX_SHEDDERS}. */
    public Builder maxShedders(int max) {
      if (max < 1 || max > 10_000) {
        throw new IllegalArgumentException("maxShedders must be in 1..10000, was " + max);
      }
      this.maxShedders = max;
      return this;
    }

    /** Whether a request past its deadline is answered 503 on time. Default false. */
    public Builder boundedResponseTime(boolean on) {
      this.boundedResponseTime = on;
      return this;
    }

    /** The status for shed requests and a full queue, 400..599. Default 429. */
    public Builder shedStatus(int status) {
      this.shedStatus = status("shedStatus", status);
      return this;
    }

    /** The status for queue timeouts, shutdown and missed deadlines, 400..599. Default 503. */
    public Builder unavailableStatus(int status) {
      this.unavailableStatus = status("unavailableStatus", status);
      return this;
    }

    /** The {@code Retry-After} of rejections, whole seconds, 0 to omit it. Default 1 s. */
    public Builder retryAfter(Duration retryAfter) {
      if (retryAfter == null || retryAfter.isNegative()) {
        throw new IllegalArgumentException("retryAfter must be zero or positive, was "
            + retryAfter);
      }
      this.retryAfter = retryAfter;
      return this;
    }

    /** The body of rejections. Default {@link RejectionFormat#TEXT}. */
    public Builder rejectionFormat(RejectionFormat format) {
      this.format = Objects.requireNonNull(format, "rejectionFormat");
      return this;
    }

    /**
     * Publishes each shedder's meters ({@link dev.weir.micrometer.WeirMetrics}, tagged {@code
     * shedder} with the route key) to this registry. Default none. Micrometer is an optional
     * dependency: it need be on the class path only if this is called.
     */
    public Builder meterRegistry(MeterRegistry registry) {
      this.meterRegistry = Objects.requireNonNull(registry, "meterRegistry");
      return this;
    }

    public WeirFilter build() {
      return new WeirFilter(this);
    }

    private static Duration positive(String setting, Duration d) {
      if (d == null || d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(setting + " must be positive, was " + d);
      }
      return d;
    }

    private static int status(String setting, int status) {
      if (status < 400 || status > 599) {
        throw new IllegalArgumentException(setting + " must be in 400..599, was " + status);
      }
      return status;
    }
  }
}
