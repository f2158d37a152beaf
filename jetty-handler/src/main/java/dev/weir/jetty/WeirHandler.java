package dev.weir.jetty;

import dev.weir.LoadShedder;
import dev.weir.Priority;
import dev.weir.RejectReason;
import dev.weir.Snapshot;
import dev.weir.http.HttpAnswers;
import dev.weir.http.PriorityHeaders;
import dev.weir.http.RouteKeys;
import dev.weir.http.RouteShedders;
import dev.weir.http.ServerThreads;
import dev.weir.internal.Check;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ThreadPool;

/**
 * A Jetty 12 core {@link Handler.Wrapper} that admits requests through Weir {@link LoadShedder}s
 * before its wrapped handler sees them: prioritised from their headers by {@link PriorityHeaders},
 * answered as {@link HttpAnswers} says when not admitted. It needs no servlet API, so it protects
 * any Jetty 12 application: core handlers, an ee8 to ee11 servlet context, Ring on Jetty 12.
 *
 * <h2>A request's way</h2>
 * {@link #handle} reads the priority and picks the route's shedder; {@link Exchange} submits the
 * request with the asynchronous {@link LoadShedder#submit(int, dev.weir.AdmissionCallback)} and
 * returns true at once:
 * <ul>
 *   <li>Admitted at once: the wrapped handler runs on the handling thread.
 *   <li>Queued: no thread waits. When admitted, the wrapped handler runs on a server thread (the
 *       request's {@code Context} executor).
 *   <li>Shed, or the queue is full: {@code 429} with {@code Retry-After} and {@code
 *       X-Weir-Outcome}; queue timeout or shutting down: {@code 503}, likewise. An answer decided
 *       on the shared timer thread, or on a thread releasing a permit, is written on a server
 *       thread.
 *   <li>The client goes away while queued: Jetty's failure listener withdraws the request from
 *       the queue at once, where Jetty reports it (an HTTP/2 stream reset or connection close; not
 *       an HTTP/1.1 close while the request is parked, which Jetty does not read); otherwise the
 *       queue timeout does.
 * </ul>
 *
 * <h2>Permits</h2>
 * The wrapped handler gets a {@link Callback} of the handler's own. Its permit (also under {@link
 * #PERMIT_ATTRIBUTE}) is released exactly once, when that callback completes, not when {@code
 * handle} returns: {@code succeeded} releases it with the outcome of the status ({@link
 * HttpAnswers#outcomeOf}), {@code failed} and an exception from {@code handle} as {@code ERROR}.
 * An application that never completes its callback holds its permit until the shedder's watchdog
 * reclaims it, at twice the request timeout by default. Request bodies are not guarded (the
 * servlet filter's {@code bodyReadTimeout} has no counterpart here): an application waiting on a
 * client that dribbles its body holds its permit likewise, until it gives up or the watchdog.
 *
 * <h2>Bounded response time</h2>
 * With {@link Builder#boundedResponseTime}, a request whose application has neither written nor
 * completed by its deadline is answered {@code 503} ({@code X-Weir-Outcome: deadline}) on time;
 * the application's later writes fail and its completion only releases the permit, as {@code
 * DROPPED}. Nothing is buffered: a response the application began is its own to finish.
 *
 * <h2>Zero configuration</h2>
 * {@code new WeirHandler(app)} protects {@code app} with one adaptive shedder; {@link #builder()}
 * sets anything else. Shedders are built when the handler starts and closed when it stops: queued
 * requests are then answered {@code 503}, and later ones too. Thread-safe.
 */
public final class WeirHandler extends Handler.Wrapper {
  /**
   * The request attribute holding the {@link dev.weir.Permit} of an admitted request, read-only.
   * The next handler sees Jetty's request wrapped, and the wrapper answers it without storing it
   * in the request's attributes, which would allocate their map.
   */
  public static final String PERMIT_ATTRIBUTE = "dev.weir.jetty.permit";
  /** The route key of the one shedder used when no {@link Builder#routeKey} is set. */
  public static final String SINGLE_ROUTE = "all";
  /** The route key of the shared overflow shedder in {@link #shedders()}. */
  public static final String OVERFLOW_ROUTE = RouteShedders.OVERFLOW_KEY;

  private static final Logger LOG = Logger.getLogger(WeirHandler.class.getName());

  private final Builder settings;
  private final Answers answers;
  private volatile RouteShedders<Request> routes;
  private volatile boolean stopped;
  /** Caps a route whose requests hold the server's threads at what those threads run. */
  private final ServerThreads serverThreads = new ServerThreads();

  /** Zero configuration; set the application with {@link #setHandler}. */
  public WeirHandler() {
    this(null);
  }

  /** Zero configuration: one adaptive shedder in front of {@code handler}. */
  public WeirHandler(Handler handler) {
    this(builder().frozen(), handler);
  }

  private WeirHandler(Builder frozen, Handler handler) {
    super(handler);
    this.settings = frozen;
    this.answers = new Answers(frozen.answers);
  }

  /** A builder; every setting has a documented default. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Builds the shedders, then starts the wrapped handler.
   *
   * @throws IllegalArgumentException naming {@code shedder}, if the template cannot build one;
   *     naming {@code meterRegistry}, if another handler or filter publishes to it with the same
   *     tags
   */
  @Override
  protected void doStart() throws Exception {
    Builder s = settings;
    if (s.meterRegistry != null) {
      Metrics.checkFree(s.meterRegistry, s.meterTags);
    }
    try {
      Object registry = s.meterRegistry;
      Object tags = s.meterTags;
      routes = new RouteShedders<>(s.shedder, s.routeKeys(), s.maxShedders,
          s.routeIdleTimeout.toNanos(),
          registry == null ? null : x -> Metrics.bind(x, registry, tags),
          registry == null ? null : name -> Metrics.unbind(name, registry, tags));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("shedder: the template cannot build a shedder: " + e, e);
    }
    stopped = false;
    super.doStart();
  }

  /** Closes every shedder (queued requests are answered 503), then stops the wrapped handler. */
  @Override
  protected void doStop() throws Exception {
    stopped = true;
    RouteShedders<Request> r = routes;
    if (r != null) {
      r.close();
    }
    super.doStop();
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    Handler next = getHandler();
    if (next == null) {
      return false;
    }
    RouteShedders<Request> r = routes;
    if (r == null || stopped) {
      answers.reject(response, RejectReason.SHUTTING_DOWN, callback);
      return true;
    }
    int priority = priorityOf(request);
    LoadShedder shedder = r.forRequest(request);
    return new Exchange(this, next, request, response, callback).start(shedder, priority);
  }

  /** The request's priority; the default one if a custom resolver throws or returns nonsense. */
  private int priorityOf(Request request) {
    Builder s = settings;
    if (s.resolver == null) {
      return s.priorityHeaders.priorityFromFields(request.getHeaders(), JettyHeaders.INSTANCE);
    }
    try {
      int p = s.resolver.applyAsInt(request);
      if (Priority.isValid(p)) {
        return p;
      }
      LOG.fine(() -> "priority resolver returned invalid priority " + p + "; using the default");
    } catch (RuntimeException e) {
      LOG.log(Level.FINE, "priority resolver threw; using the default priority", e);
    }
    return s.priorityHeaders.defaultPriority();
  }

  /**
   * The shedders created so far, by route key ({@link #SINGLE_ROUTE} without a route function;
   * the overflow shedder under {@link #OVERFLOW_ROUTE}). An unmodifiable view; empty before the
   * handler starts. For metrics and status pages: do not submit to them.
   */
  public Map<String, LoadShedder> shedders() {
    RouteShedders<Request> r = routes;
    return r == null ? Map.of() : r.view();
  }

  /** A snapshot of every shedder, by route key. */
  public Map<String, Snapshot> snapshots() {
    RouteShedders<Request> r = routes;
    return r == null ? Map.of() : r.snapshots();
  }

  /** The handler's own answers. */
  public HttpAnswers answers() {
    return answers.answers();
  }

  /**
   * Called after an admitted request's handler returned. If the request completed before that
   * ({@code completed}), it held its server thread while it ran: caps its route's limit at what
   * the server's threads can run ({@link ServerThreads}), so that admitted requests never wait for
   * a thread in the server's queue, where this handler neither sees them nor orders them by
   * priority. If it completes later, the route does not hold a thread for each request that runs,
   * and is not capped.
   */
  void handleReturned(LoadShedder route, Request request, boolean completed) {
    serverThreads.returned(route, request, completed, WeirHandler::poolThreads);
  }

  /**
   * The threads of {@code request}'s server that can run requests: a {@link QueuedThreadPool}'s
   * maximum less what its connectors leased (acceptors and selectors), another sized pool's
   * maximum; 0 if unknown, or if virtual threads run the requests, which hold no pool thread.
   */
  private static int poolThreads(Request request) {
    ThreadPool pool = request.getConnectionMetaData().getConnector().getServer().getThreadPool();
    if (pool instanceof QueuedThreadPool) {
      QueuedThreadPool q = (QueuedThreadPool) pool;
      return q.getVirtualThreadsExecutor() != null ? 0 : q.getMaxAvailableThreads();
    }
    return pool instanceof ThreadPool.SizedThreadPool
        ? ((ThreadPool.SizedThreadPool) pool).getMaxThreads() : 0;
  }

  Answers answerWriter() {
    return answers;
  }

  boolean boundedResponseTime() {
    return settings.boundedResponseTime;
  }

  /**
   * Settings for a {@link WeirHandler}. Every setting has a default; an invalid value throws
   * {@link IllegalArgumentException} (or {@link NullPointerException} for null) naming the
   * setting, from the setter or from {@link #build()}; when the handler starts, only what a
   * builder cannot see: a {@code meterRegistry} with another handler's meters under the same
   * tags, or a shedder template whose factories fail on a later call. Never on a request. Not
   * thread-safe.
   */
  public static final class Builder {
    /** Default bound on the number of per-route shedders, 64. */
    public static final int DEFAULT_MAX_SHEDDERS = 64;
    /** Default time after which a route that saw no request gives its slot back, 5 minutes. */
    public static final Duration DEFAULT_ROUTE_IDLE_TIMEOUT = Duration.ofMinutes(5);

    // Read by the handler once build() has frozen them (build() copies the shedder template).
    LoadShedder.Builder shedder;
    PriorityHeaders priorityHeaders = PriorityHeaders.defaults();
    ToIntFunction<? super Request> resolver;
    HttpAnswers answers = HttpAnswers.defaults();
    Function<? super Request, String> route;
    int maxShedders = DEFAULT_MAX_SHEDDERS;
    Duration routeIdleTimeout = DEFAULT_ROUTE_IDLE_TIMEOUT;
    boolean boundedResponseTime;
    Handler handler;
    /** A MeterRegistry, typed Object so that Micrometer stays optional. */
    Object meterRegistry;
    /** Micrometer {@code Tags}, checked; null for none. */
    Object meterTags;

    private Builder() {}

    /** The application the handler protects. Default none: set it later with {@code setHandler}. */
    public Builder handler(Handler handler) {
      this.handler = Objects.requireNonNull(handler, "handler");
      return this;
    }

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
     * How the priority is read from headers and W3C baggage. Default {@link
     * PriorityHeaders#defaults()}. Its default priority is also what a custom {@link
     * #priorityResolver} that fails falls back to.
     */
    public Builder priorityHeaders(PriorityHeaders headers) {
      this.priorityHeaders = Objects.requireNonNull(headers, "priorityHeaders");
      return this;
    }

    /**
     * A custom way to find a request's packed {@link Priority}, instead of {@link
     * #priorityHeaders}. One that throws or returns an invalid priority gives the request the
     * default priority. Default none.
     */
    public Builder priorityResolver(ToIntFunction<? super Request> resolver) {
      this.resolver = Objects.requireNonNull(resolver, "priorityResolver");
      return this;
    }

    /**
     * The handler's own answers: statuses, {@code Retry-After}, body format. Default {@link
     * HttpAnswers#defaults()}: 429 and 503, {@code Retry-After: 1}, text.
     */
    public Builder answers(HttpAnswers answers) {
      this.answers = Objects.requireNonNull(answers, "answers");
      return this;
    }

    /**
     * One shedder per route: {@code route} names a request's route from the application's own
     * vocabulary (a router's template, a context path; never the raw path), and the key is a
     * known method and that name ({@link RouteKeys}), for example {@code "GET /orders/{id}"}.
     * Past {@code maxShedders} keys, requests share one overflow shedder, as do requests whose
     * function throws or returns null or a blank name. Default none: one shedder for everything,
     * {@value WeirHandler#SINGLE_ROUTE}.
     */
    public Builder routeKey(Function<? super Request, String> route) {
      this.route = Objects.requireNonNull(route, "routeKey");
      return this;
    }

    /** The most per-route shedders, 1..10000. Default {@value #DEFAULT_MAX_SHEDDERS}. */
    public Builder maxShedders(int max) {
      this.maxShedders = Check.inRange("maxShedders", max, 1, 10_000);
      return this;
    }

    /**
     * How long a route may see no request before its shedder is closed and its slot freed, once
     * half the slots ({@link #maxShedders}) are taken; while more are free, an idle route keeps
     * its shedder and what its limit learned. 100ms..365 days. Default 5 minutes.
     */
    public Builder routeIdleTimeout(Duration idle) {
      this.routeIdleTimeout = Check.inRange("routeIdleTimeout", idle, Duration.ofMillis(100),
          Duration.ofDays(365));
      return this;
    }

    /**
     * Whether a request whose application has not begun its response by the request's deadline
     * is answered {@code 503} on time. Default false.
     */
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
     * Builds the handler; its shedders are built when it starts.
     *
     * @throws IllegalArgumentException naming the setting, if the shedder template's settings
     *     are inconsistent (see {@link LoadShedder.Builder#validate()})
     */
    public WeirHandler build() {
      Builder f = frozen();
      return new WeirHandler(f, f.handler);
    }

    /** A copy of these settings with the template copied and validated. */
    Builder frozen() {
      Builder f = new Builder();
      f.shedder = (shedder != null ? shedder.copy() : LoadShedder.builder()).validate();
      f.priorityHeaders = priorityHeaders;
      f.resolver = resolver;
      f.answers = answers;
      f.route = route;
      f.maxShedders = maxShedders;
      f.routeIdleTimeout = routeIdleTimeout;
      f.boundedResponseTime = boundedResponseTime;
      f.handler = handler;
      f.meterRegistry = meterRegistry;
      f.meterTags = meterTags;
      return f;
    }

    /** The route key function: the single route, or a known method and the route's name. */
    Function<Request, String> routeKeys() {
      Function<? super Request, String> r = route;
      if (r == null) {
        return request -> SINGLE_ROUTE;
      }
      return request -> {
        String name = r.apply(request);
        return name == null || name.isBlank() ? null : RouteKeys.of(request.getMethod(), name);
      };
    }
  }
}
