package dev.weir.servlet;

import dev.weir.LoadShedder;
import dev.weir.Priority;
import dev.weir.RejectReason;
import dev.weir.Snapshot;
import dev.weir.WorkerPool;
import dev.weir.http.HeaderLookup;
import dev.weir.http.HttpAnswer;
import dev.weir.http.HttpAnswers;
import dev.weir.http.PriorityHeaders;
import dev.weir.http.RouteShedders;
import dev.weir.http.ServerThreads;
import dev.weir.internal.Check;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletRequestWrapper;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Enumeration;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A Servlet 6 filter that admits requests through Weir {@link LoadShedder}s: one per endpoint,
 * prioritised from their headers by {@link PriorityHeaders} (or a custom {@link PriorityResolver}),
 * answered as {@link HttpAnswers} says when not admitted.
 *
 * <h2>A request's way</h2>
 * {@link #doFilter} reads the priority ({@link #priorityOf}) and picks the route's shedder
 * ({@link RouteShedders}); {@link Exchange} submits the request, waits for the decision without
 * holding a thread, runs the chain with the permit and releases it when the response is done
 * ({@link BoundedRun} instead runs it in bounded-response-time mode); {@link #answer} writes the
 * filter's own answers.
 *
 * <h2>Zero configuration</h2>
 * Added with no init-params, the filter protects the application with adaptive limits and
 * shedding, reading priorities from {@value PriorityHeaders#DEFAULT_TIER_HEADER} and W3C
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
 *   <li>Shed, or the queue is full: {@code 429} with {@code Retry-After} and {@code
 *       X-Weir-Outcome}.
 *   <li>Queue timeout, or shutting down: {@code 503}, likewise (see {@link HttpAnswers}).
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
 * <p>Faults (clients that leave while queued, bounded response time, the cap on buffered
 * responses, slow request bodies, route slots that age out): the module's README.
 *
 * <p>Thread-safe. {@link #destroy()} closes every shedder: queued requests, and later ones, get 503.
 */
public final class WeirFilter implements Filter {
  /**
   * The request attribute holding the {@link dev.weir.Permit} of an admitted request, read-only.
   * The chain sees the container's request wrapped, and the wrapper answers this attribute and
   * {@link #PRIORITY_ATTRIBUTE} without storing them in the container's request, which would
   * allocate its attribute map; they are stored there too if the application starts async through
   * the wrapper, for its async thread to find.
   */
  public static final String PERMIT_ATTRIBUTE = "dev.weir.servlet.permit";
  /**
   * The request attribute holding an admitted request's packed priority, an {@link Integer},
   * read-only; see {@link #PERMIT_ATTRIBUTE}.
   */
  public static final String PRIORITY_ATTRIBUTE = "dev.weir.servlet.priority";
  /** The route key of the shared overflow shedder in {@link #shedders()}. */
  public static final String OVERFLOW_ROUTE = RouteShedders.OVERFLOW_KEY;
  /** The servlet-context attribute holding the filter, read by {@link WeirStatusServlet}. */
  public static final String CONTEXT_ATTRIBUTE = WeirFilter.class.getName();

  static final String EXCHANGE_ATTRIBUTE = "dev.weir.servlet.exchange";
  /** The most container threads set or read; a pool that reports more is unbounded in effect. */
  static final int MAX_CONTAINER_THREADS = 1_000_000;
  private static final Logger LOG = Logger.getLogger(WeirFilter.class.getName());
  /**
   * Every Jetty class {@link JettyServletHeaders}, {@link JettyServletChannel} and {@link
   * JettyWriterCharset} use is visible here, so they may run (on Jetty's ee10 requests only: each
   * checks the request is one).
   */
  static final boolean ON_JETTY = visible("org.eclipse.jetty.ee10.servlet.ServletApiRequest")
      && visible("org.eclipse.jetty.ee10.servlet.ServletContextRequest")
      && visible("org.eclipse.jetty.ee10.servlet.ServletChannel")
      && visible("org.eclipse.jetty.ee10.servlet.ServletApiResponse")
      && visible("org.eclipse.jetty.http.HttpFields")
      && visible("org.eclipse.jetty.http.HttpField");

  /**
   * A servlet request's headers for {@link PriorityHeaders}: the value, or repeated values joined
   * by commas. Allocates nothing for an absent header.
   */
  static final HeaderLookup<HttpServletRequest> HEADERS = (request, name) -> {
    String first = request.getHeader(name);
    if (first == null) {
      return null;
    }
    Enumeration<String> all = request.getHeaders(name);
    if (all == null || !all.hasMoreElements()) {
      return first;
    }
    String value = all.nextElement();
    if (!all.hasMoreElements()) {
      return value;
    }
    StringBuilder joined = new StringBuilder(value);
    while (all.hasMoreElements() && joined.length() <= HeaderLookup.MAX_USEFUL_LENGTH) {
      joined.append(',').append(all.nextElement());
    }
    return joined.toString();
  };

  private final boolean programmatic;
  private volatile Builder settings;
  private volatile RouteShedders<HttpServletRequest> shedders;
  private volatile WorkerPool deadlinePool;
  private volatile boolean destroyed;
  /** Caps a route whose requests run on the container's threads at what those threads run. */
  private final ServerThreads serverThreads = new ServerThreads();
  /** {@link #containerThreads}, made once rather than for each request. */
  private final ToIntFunction<HttpServletRequest> poolThreads = this::containerThreads;

  /** The zero-configuration filter; settings come from init-params in {@link #init}. */
  public WeirFilter() {
    this.programmatic = false;
  }

  private WeirFilter(Builder frozen) {
    this.programmatic = true;
    start(frozen);
  }

  /** A builder for programmatic use; every setting has a documented default. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Reads the init-params ({@link InitParams}), unless the filter was built with {@link
   * #builder()}, whose settings win. After {@link #destroy()} (a container restarting the
   * context, which re-initialises a filter registered as an instance), starts fresh shedders
   * from the same settings.
   *
   * @throws ServletException naming the init-param, if one is unknown or invalid
   */
  @Override
  public void init(FilterConfig config) throws ServletException {
    if (!programmatic) {
      try {
        start(InitParams.apply(config, builder()));
      } catch (IllegalArgumentException e) {
        throw new ServletException("invalid WeirFilter init-params: " + e.getMessage(), e);
      }
    } else if (destroyed) {
      try {
        start(settings);
      } catch (IllegalArgumentException e) {
        throw new ServletException("WeirFilter cannot start again: " + e.getMessage(), e);
      }
    }
    destroyed = false;
    if (config != null && config.getServletContext() != null) {
      config.getServletContext().setAttribute(CONTEXT_ATTRIBUTE, this);
    }
  }

  private void start(Builder frozen) {
    this.settings = frozen;
    if (frozen.meterRegistry != null) {
      Metrics.checkFree(frozen.meterRegistry, frozen.meterTags);
    }
    try {
      Object registry = frozen.meterRegistry;
      Object tags = frozen.meterTags;
      this.shedders = new RouteShedders<>(frozen.shedder, frozen.routeKey, frozen.maxShedders,
          frozen.routeIdleTimeout.toNanos(),
          registry == null ? null : s -> Metrics.bind(s, registry, tags),
          registry == null ? null : name -> Metrics.unbind(name, registry, tags));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("shedder: the template cannot build a shedder: " + e, e);
    }
    if (frozen.boundedResponseTime) {
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
    DispatcherType type = request.getDispatcherType();
    if (type == DispatcherType.ASYNC) {
      Object attached = request.getAttribute(EXCHANGE_ATTRIBUTE);
      if (attached instanceof Exchange && ((Exchange) attached).claimResume()) {
        ((Exchange) attached).runAdmitted(request, response, chain); // ours, from the queue
      } else {
        chain.doFilter(req, res); // the application's own dispatch
      }
      return;
    }
    if (type != DispatcherType.REQUEST || admittedUpstream(request)) {
      // A forward, include or error; or already admitted by a WeirFilter earlier in the chain.
      chain.doFilter(req, res);
      return;
    }
    RouteShedders<HttpServletRequest> routes = shedders;
    if (routes == null) {
      throw new ServletException("WeirFilter used before init()");
    }
    if (destroyed) {
      answer(response, settings.answers.rejected(RejectReason.SHUTTING_DOWN), false);
      return;
    }
    int priority = priorityOf(request);
    LoadShedder shedder = routes.forRequest(request);
    Exchange.handle(this, shedder, request, response, priority, chain);
  }

  /**
   * Called after an admitted request's dispatch returned. If it ran its whole chain on its
   * container thread ({@code asyncStarted} false), caps its route's limit at what the container's
   * threads can run ({@link ServerThreads}), so that admitted requests never wait for a thread in
   * the container's queue, where this filter neither sees them nor orders them by priority; if
   * the application went async, the route does not hold a thread for each request that runs, and
   * is not capped. Where the threads are unknown (not Jetty, Tomcat or Undertow, and no {@link
   * Builder#containerThreads}), or virtual threads run the requests, nothing is capped.
   */
  void dispatchReturned(LoadShedder route, HttpServletRequest request, boolean asyncStarted) {
    serverThreads.returned(route, request, !asyncStarted, poolThreads);
  }

  /**
   * The container's request threads: as configured, else the pool of the container the request
   * is from, Jetty's, Undertow's (the deployment's executor or the worker's) or Tomcat's (the
   * connector's executor, else its MBean); 0 if unknown, or a pool too large to bound anything.
   * Read once, at a route's first synchronous request.
   */
  private int containerThreads(HttpServletRequest request) {
    int configured = settings.containerThreads;
    if (configured > 0) {
      return configured;
    }
    // Each read recognises its own container's request first: only Tomcat's may ask JMX.
    int read = JettyThreads.of(request);
    if (read == ContainerReflection.NOT_THIS_CONTAINER) {
      read = UndertowThreads.of(request);
    }
    if (read == ContainerReflection.NOT_THIS_CONTAINER) {
      read = TomcatThreads.of(request);
    }
    return read > 0 && read <= MAX_CONTAINER_THREADS ? read : 0;
  }

  /**
   * Whether a WeirFilter earlier in the chain admitted {@code request}: its chain, and so this
   * filter, sees the request wrapped in an {@link AdmittedRequest}, perhaps under other wrappers.
   * Walking the wrappers rather than asking for {@link #PRIORITY_ATTRIBUTE} keeps the container's
   * attribute lookup (Jetty checks its synthetic attributes first) off every request.
   */
  static boolean admittedUpstream(ServletRequest request) {
    ServletRequest r = request;
    while (r instanceof ServletRequestWrapper) {
      if (r instanceof AdmittedRequest) {
        return true;
      }
      r = ((ServletRequestWrapper) r).getRequest();
    }
    return false;
  }

  private static boolean visible(String className) {
    try {
      Class.forName(className, false, WeirFilter.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** The request's priority; the default one if a custom resolver throws or returns nonsense. */
  private int priorityOf(HttpServletRequest request) {
    Builder s = settings;
    if (s.resolver == null) {
      int p = ON_JETTY ? JettyServletHeaders.priority(s.priorityHeaders, request) : -1;
      return p >= 0 ? p : s.priorityHeaders.priority(request, HEADERS);
    }
    try {
      int p = s.resolver.resolve(request);
      if (Priority.isValid(p)) {
        return p;
      }
      LOG.fine(() -> "PriorityResolver returned invalid priority " + p + "; using the default");
    } catch (RuntimeException ex) {
      LOG.log(Level.FINE, "PriorityResolver threw; using the default priority", ex);
    }
    return s.priorityHeaders.defaultPriority();
  }

  /**
   * Writes one of the filter's own answers, unless the response is committed. A rejection
   * ({@code close} false) is sent by the container, headers and body in one write, when the
   * filter returns or the async cycle completes: under overload this path answers most requests,
   * and closing the stream here flushed on the request thread instead, which at 3x in the overload
   * experiment took about three times the CPU (174 profile samples against 60). A deadline answer
   * ({@code close} true) is closed at once, so that the client has it while the application's
   * thread is still inside the container. The body goes through the output stream, or through
   * the writer if something earlier took it.
   */
  static void answer(HttpServletResponse response, HttpAnswer a, boolean close)
      throws IOException {
    if (response.isCommitted()) {
      return; // the application answered already; nothing honest can be added
    }
    // Keep what outer filters set (CORS headers, say): a browser must be able to read a 429.
    response.resetBuffer();
    response.setStatus(a.status());
    if (a.retryAfter() != null) {
      response.setHeader("Retry-After", a.retryAfter());
    }
    response.setHeader("Cache-Control", "no-store");
    response.setHeader(HttpAnswers.OUTCOME_HEADER, a.outcome());
    if (a.contentType() != null) {
      response.setContentType(a.contentType());
    }
    OutputStream out;
    try {
      out = response.getOutputStream();
    } catch (IllegalStateException e) {
      // Something earlier took the writer: the same text goes through it, in its charset, so
      // the container works out the length.
      PrintWriter writer = response.getWriter();
      writer.write(a.body());
      if (close) {
        writer.close();
      }
      return;
    }
    if (close) {
      response.setContentLength(a.contentLength());
    }
    a.writeBody(out); // without close, the container adds the length when it completes
    if (close) {
      out.close();
    }
  }

  /** Closes every shedder: queued requests are answered 503, later ones too. Idempotent. */
  @Override
  public void destroy() {
    destroyed = true;
    RouteShedders<HttpServletRequest> routes = shedders;
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
    RouteShedders<HttpServletRequest> routes = shedders;
    return routes == null ? Map.of() : routes.view();
  }

  /** A snapshot of every shedder, by route key. */
  public Map<String, Snapshot> snapshots() {
    RouteShedders<HttpServletRequest> routes = shedders;
    return routes == null ? Map.of() : routes.snapshots();
  }

  /** The settings in use, frozen; null before {@link #init}. */
  Builder settings() {
    return settings;
  }

  HttpAnswers answers() {
    return settings.answers;
  }

  boolean boundedResponseTime() {
    return settings.boundedResponseTime;
  }

  long bodyReadTimeoutNanos(LoadShedder route) {
    Duration d = settings.bodyReadTimeout;
    return d != null ? d.toNanos() : route.requestTimeoutNanos();
  }

  WorkerPool deadlinePool() {
    return deadlinePool;
  }

  /**
   * Settings for a programmatic {@link WeirFilter}. Every setting has a default; invalid values
   * throw {@link IllegalArgumentException} (or {@link NullPointerException} for null) naming the
   * setting, from the setter or from {@link #build()}, never later: a filter that builds serves
   * every request.
   */
  public static final class Builder {
    /** Default bound on the number of per-route shedders, 64. */
    public static final int DEFAULT_MAX_SHEDDERS = 64;
    /** Default time after which a route that saw no request gives its slot back, 5 minutes. */
    public static final Duration DEFAULT_ROUTE_IDLE_TIMEOUT = Duration.ofMinutes(5);
    /** Default cap on a response buffered in bounded mode, 1 MiB. */
    public static final int DEFAULT_MAX_BUFFERED_BYTES = 1 << 20;

    // Read by the filter once build() has frozen them (build() copies the shedder template).
    LoadShedder.Builder shedder;
    PriorityHeaders priorityHeaders = PriorityHeaders.defaults();
    PriorityResolver resolver;
    HttpAnswers answers = HttpAnswers.defaults();
    Function<? super HttpServletRequest, String> routeKey = RouteKeys::of;
    int maxShedders = DEFAULT_MAX_SHEDDERS;
    int containerThreads; // 0: read the container's pool at the first request needing it
    Duration routeIdleTimeout = DEFAULT_ROUTE_IDLE_TIMEOUT;
    boolean boundedResponseTime;
    int maxBufferedBytes = DEFAULT_MAX_BUFFERED_BYTES;
    Duration bodyReadTimeout; // null: each route's request timeout
    /** A MeterRegistry, typed Object so that Micrometer stays optional. */
    Object meterRegistry;
    /** Micrometer {@code Tags}, checked; null for none. */
    Object meterTags;

    private Builder() {}

    /**
     * The template of every route's shedder: request and queue timeouts, queue capacity, limit
     * and rejector factories, timer. Copied and {@linkplain LoadShedder.Builder#validate()
     * validated} by {@link #build()}; each route's shedder is a copy named by its route key.
     * Default {@code LoadShedder.builder()}.
     */
    public Builder shedder(LoadShedder.Builder template) {
      this.shedder = Objects.requireNonNull(template, "shedder");
      return this;
    }

    /**
     * How the priority is read from headers: header names, caller tiers, user-key hashing, the
     * default tier. Default {@link PriorityHeaders#defaults()}. Its default priority is also what a
     * custom {@link #priorityResolver} that fails falls back to.
     */
    public Builder priorityHeaders(PriorityHeaders headers) {
      this.priorityHeaders = Objects.requireNonNull(headers, "priorityHeaders");
      return this;
    }

    /**
     * A custom way to find a request's priority, instead of {@link #priorityHeaders}. A resolver
     * that throws or returns an invalid priority gives the request the default priority.
     */
    public Builder priorityResolver(PriorityResolver resolver) {
      this.resolver = Objects.requireNonNull(resolver, "priorityResolver");
      return this;
    }

    /**
     * The filter's own answers: statuses, {@code Retry-After}, body format. Default {@link
     * HttpAnswers#defaults()}: 429 and 503, {@code Retry-After: 1}, text.
     */
    public Builder answers(HttpAnswers answers) {
      this.answers = Objects.requireNonNull(answers, "answers");
      return this;
    }

    /**
     * Maps a request to its route key: one shedder per key. Default a known HTTP method ({@code
     * OTHER} for any other) and the pattern of the servlet mapping that matched, for example
     * {@code "GET /orders/*"} ({@link RouteKeys}): a vocabulary no client can extend. A custom
     * function must return few distinct keys; past {@code maxShedders} keys, requests share one
     * overflow shedder. A function that throws or returns null, a blank key or {@link
     * #OVERFLOW_ROUTE} sends the request to the overflow shedder.
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

    /**
     * The container's request threads, for a container whose pool the filter cannot read. The
     * routes whose requests run on them from start to finish then share a cap of these threads
     * less a sixteenth (at least 2), as on Jetty, Tomcat and Undertow, whose pools the filter
     * reads itself (see the module's README, "The container's threads"). 0..1000000; default 0:
     * read the container's pool, else no cap. A value above 0 wins on any container.
     */
    public Builder containerThreads(int threads) {
      this.containerThreads = Check.inRange("containerThreads", threads, 0, MAX_CONTAINER_THREADS);
      return this;
    }

    /** The most per-route shedders, 1..10000. Default {@value #DEFAULT_MAX_SHEDDERS}. */
    public Builder maxShedders(int max) {
      this.maxShedders = Check.inRange("maxShedders", max, 1, 10_000);
      return this;
    }

    /**
     * How long a route may see no request before its shedder is closed and its slot freed for
     * another key, once half the slots ({@link #maxShedders}) are taken; while more are free, an
     * idle route keeps its shedder and what its limit learned. 100ms..365 days. Default 5 minutes.
     */
    public Builder routeIdleTimeout(Duration idle) {
      this.routeIdleTimeout = Check.inRange("routeIdleTimeout", idle, Duration.ofMillis(100),
          Duration.ofDays(365));
      return this;
    }

    /**
     * How long after admission a request may still be reading its body. Past it the permit is
     * released as {@code DROPPED} if the application is blocked in a read, or at its next read,
     * which then throws an {@code IOException}: a slow upload cannot pin the limit. 1ms..365
     * days. Default: the request timeout.
     */
    public Builder bodyReadTimeout(Duration timeout) {
      this.bodyReadTimeout = Check.inRange("bodyReadTimeout", timeout, Duration.ofMillis(1),
          Duration.ofDays(365));
      return this;
    }

    /**
     * In bounded mode, the most bytes of a response body kept in memory, 0..64 MiB. A longer
     * response is streamed from that point: what was buffered goes out, the rest passes through,
     * and the deadline can no longer replace it. Default 1 MiB.
     */
    public Builder maxBufferedBytes(int max) {
      this.maxBufferedBytes = Check.inRange("maxBufferedBytes", max, 0, 64 << 20);
      return this;
    }


    /** Whether a request past its deadline is answered 503 on time. Default false. */
    public Builder boundedResponseTime(boolean on) {
      this.boundedResponseTime = on;
      return this;
    }

    /**
     * Publishes each shedder's meters ({@link dev.weir.micrometer.WeirMetrics}, tagged {@code
     * shedder} with the route key) to this registry. Default none. Micrometer is an optional
     * dependency: it need be on the class path only if this is called.
     */
    public Builder meterRegistry(MeterRegistry registry) {
      this.meterRegistry = Objects.requireNonNull(registry, "meterRegistry");
      this.meterTags = null;
      return this;
    }

    /**
     * {@link #meterRegistry(MeterRegistry)}, with {@code tags} on every meter besides {@code
     * shedder}: what tells apart, on one registry, two of these whose route keys are the same.
     *
     * @throws IllegalArgumentException naming {@code meterRegistry}, for a tag named {@code
     *     shedder}, {@code tier} or {@code outcome}, which the meters carry already
     */
    public Builder meterRegistry(MeterRegistry registry, Iterable<Tag> tags) {
      Objects.requireNonNull(registry, "meterRegistry");
      Object checked = Metrics.tags(Objects.requireNonNull(tags, "tags"));
      this.meterRegistry = registry;
      this.meterTags = checked;
      return this;
    }

    /**
     * Builds the filter.
     *
     * @throws IllegalArgumentException naming the setting, if the shedder template's settings
     *     are inconsistent (see {@link LoadShedder.Builder#validate()}); naming {@code
     *     meterRegistry}, if another filter or handler publishes to it with the same tags
     */
    public WeirFilter build() {
      return new WeirFilter(frozen());
    }

    /** A copy of these settings with the template copied and validated. */
    Builder frozen() {
      Builder f = new Builder();
      f.shedder = (shedder != null ? shedder.copy() : LoadShedder.builder()).validate();
      f.priorityHeaders = priorityHeaders;
      f.resolver = resolver;
      f.answers = answers;
      f.routeKey = routeKey;
      f.maxShedders = maxShedders;
      f.containerThreads = containerThreads;
      f.boundedResponseTime = boundedResponseTime;
      f.routeIdleTimeout = routeIdleTimeout;
      f.maxBufferedBytes = maxBufferedBytes;
      f.bodyReadTimeout = bodyReadTimeout;
      f.meterRegistry = meterRegistry;
      f.meterTags = meterTags;
      return f;
    }
  }
}
