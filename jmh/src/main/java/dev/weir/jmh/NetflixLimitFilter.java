package dev.weir.jmh;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limit.VegasLimit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A copy of the examples' {@code dev.weir.examples.experiment.NetflixLimitFilter}, the filter the
 * overload experiment and {@code bin/demo closed-loop} deploy as Weir's peer, so that the JMH
 * benchmarks time the same code: its release object and {@code isAsyncStarted()} call are part of
 * what it costs. The module does not depend on the examples; keep the two in step.
 *
 * <p>The original's comment: a Jakarta servlet filter that admits requests through a Netflix
 * concurrency-limits {@link Limiter}, the peer Weir is compared with in the overload experiment.
 *
 * <p>A request the limiter refuses is answered {@code 429} at once; there is no queue and no
 * priority. An admitted request's listener is released exactly once, when the response is done
 * (when the chain returns, or at the end of the async cycle if the application went async): {@code
 * onSuccess} for a status below 500, {@code onDropped} for 503 and 504 and for an async timeout
 * (the application itself was overloaded or late, which a limit should learn from), and {@code
 * onIgnore} for any other 5xx, an exception or an async error (not a latency sample).
 *
 * <p>Thread-safe: the limiter is, and each request has its own release.
 */
public final class NetflixLimitFilter implements Filter {
  private final Limiter<HttpServletRequest> limiter;

  /** A filter admitting through {@code limiter}. */
  public NetflixLimitFilter(Limiter<HttpServletRequest> limiter) {
    this.limiter = Objects.requireNonNull(limiter, "limiter");
  }

  /** A {@link SimpleLimiter} with {@code VegasLimit.newDefault()}: the library's defaults. */
  public static NetflixLimitFilter vegas() {
    return simple(VegasLimit.newDefault());
  }

  /** A {@link SimpleLimiter} with {@code Gradient2Limit.newDefault()}: the library's defaults. */
  public static NetflixLimitFilter gradient2() {
    return simple(Gradient2Limit.newDefault());
  }

  private static NetflixLimitFilter simple(Limit limit) {
    return new NetflixLimitFilter(SimpleLimiter.newBuilder().limit(limit).build());
  }

  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    if (!(request instanceof HttpServletRequest)
        || !(response instanceof HttpServletResponse)) {
      chain.doFilter(request, response);
      return;
    }
    HttpServletRequest req = (HttpServletRequest) request;
    HttpServletResponse resp = (HttpServletResponse) response;
    Optional<Limiter.Listener> acquired = limiter.acquire(req);
    if (acquired.isEmpty()) {
      resp.setStatus(429);
      resp.setContentType("text/plain");
      resp.getWriter().write("too many requests\n");
      return;
    }
    Release release = new Release(acquired.get());
    try {
      chain.doFilter(request, response);
    } catch (IOException | ServletException | RuntimeException | Error e) {
      release.ignore();
      throw e;
    }
    if (!req.isAsyncStarted()) {
      release.byStatus(resp.getStatus());
      return;
    }
    try {
      req.getAsyncContext().addListener(new AsyncRelease(release, resp));
    } catch (IllegalStateException e) {
      // The async cycle already completed on another thread: the status is final.
      release.byStatus(resp.getStatus());
    }
  }

  /** The outcome a response status reports to the limit. */
  enum Outcome {
    SUCCESS, DROPPED, IGNORE;

    static Outcome ofStatus(int status) {
      if (status == 503 || status == 504) {
        return DROPPED;
      }
      return status >= 500 ? IGNORE : SUCCESS;
    }
  }

  /** Releases a listener at most once, whichever path gets there first. */
  static final class Release {
    private final Limiter.Listener listener;
    private final AtomicBoolean done = new AtomicBoolean();

    Release(Limiter.Listener listener) {
      this.listener = listener;
    }

    void byStatus(int status) {
      release(Outcome.ofStatus(status));
    }

    void ignore() {
      release(Outcome.IGNORE);
    }

    void dropped() {
      release(Outcome.DROPPED);
    }

    private void release(Outcome outcome) {
      if (!done.compareAndSet(false, true)) {
        return;
      }
      switch (outcome) {
        case SUCCESS:
          listener.onSuccess();
          break;
        case DROPPED:
          listener.onDropped();
          break;
        default:
          listener.onIgnore();
      }
    }
  }

  private static final class AsyncRelease implements AsyncListener {
    private final Release release;
    private final HttpServletResponse response;

    AsyncRelease(Release release, HttpServletResponse response) {
      this.release = release;
      this.response = response;
    }

    @Override
    public void onComplete(AsyncEvent event) {
      release.byStatus(response.getStatus());
    }

    @Override
    public void onTimeout(AsyncEvent event) {
      release.dropped();
    }

    @Override
    public void onError(AsyncEvent event) {
      release.ignore();
    }

    @Override
    public void onStartAsync(AsyncEvent event) {
      // A new async cycle drops the listeners of the last one; stay registered.
      event.getAsyncContext().addListener(this);
    }
  }
}
