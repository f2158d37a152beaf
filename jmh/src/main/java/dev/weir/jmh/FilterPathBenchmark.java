package dev.weir.jmh;

import dev.weir.LoadShedder;
import dev.weir.Permit;
import dev.weir.VirtualTime;
import dev.weir.control.Limits;
import dev.weir.examples.experiment.NetflixLimitFilter;
import dev.weir.servlet.WeirFilter;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletMapping;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.CompilerControl;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The servlet filter's own cost per request, admitted at once and released when the chain
 * returns: {@code doFilter} on a request as Jetty 12 presents one ({@link StubServletRequest}:
 * Jetty's own header fields and lazily created attribute map, a new request per call) with a chain
 * that sets status 200. Without a server, so that what is measured is the filter alone, free of
 * the network and of the machine's noise that the closed-loop bench ({@code bin/demo
 * closed-loop}) is exposed to. {@code none} calls the chain directly; the difference is the
 * filter's. With {@code -prof gc}, {@code gc.alloc.rate.norm} is the bytes each request allocates:
 * the difference from {@code none} is what the filter allocates.
 *
 * <p>The peer is the Netflix concurrency-limits {@code SimpleLimiter} in the filter the overload
 * experiment and the closed-loop bench deploy, {@link NetflixLimitFilter} itself: its release
 * object and its {@code isAsyncStarted()} check after the chain are part of the peer's cost.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public abstract class FilterPathBenchmark {
  private static final HttpServletMapping HELLO = StubServletRequest.mapping("/hello");
  /** What a load generator sends: no priority header. */
  private static final HttpFields PLAIN = HttpFields.build()
      .put(HttpHeader.HOST, "127.0.0.1:8080")
      .put(HttpHeader.USER_AGENT, "bench")
      .put(HttpHeader.ACCEPT, "*/*")
      .asImmutable();
  /** The same with a tier and cohort, as a calling Weir service propagates them. */
  private static final HttpFields TIERED = HttpFields.build(PLAIN)
      .put("X-Weir-Tier", "1:42")
      .asImmutable();
  /** The application: sets status 200. Shared with {@link FilterPathOnJetty}. */
  static final FilterChain OK = (req, res) -> ((HttpServletResponse) res).setStatus(200);

  /** Each thread's response, reused; requests are new per call, as a server's are. */
  @State(Scope.Thread)
  public static class Exchange {
    final StubServletResponse response = new StubServletResponse();
  }

  /** {@code new WeirFilter()}, zero configuration, as {@code init} with no init-params makes it. */
  @State(Scope.Benchmark)
  public static class WeirState {
    WeirFilter filter;

    @Setup
    public void setup() throws ServletException {
      filter = new WeirFilter();
      filter.init(null);
    }

    @TearDown
    public void tearDown() {
      filter.destroy();
    }
  }

  /**
   * A filter whose route sheds every request at the door: the route's only permit held and one
   * request queued behind a cutoff of 0 ({@link ShedEverything}), in virtual time, so that no
   * tick changes it while measuring. Each request is answered 429 by the filter.
   */
  @State(Scope.Benchmark)
  public static class WeirShedState {
    WeirFilter filter;
    Permit held;

    @Setup
    public void setup() throws Exception {
      VirtualTime time = new VirtualTime();
      ShedEverything rejector = new ShedEverything();
      filter = WeirFilter.builder().shedder(LoadShedder.builder().timer(time)
          .limit(() -> Limits.fixed(1)).requestTimeout(Duration.ofHours(1))
          .rejector(() -> rejector)).build();
      StubServletResponse response = new StubServletResponse();
      filter.doFilter(new StubServletRequest(PLAIN, HELLO), response, OK); // creates the route
      LoadShedder route = filter.shedders().get("GET /hello");
      held = route.acquire(FastPathBenchmark.PRIORITY);
      route.submit(FastPathBenchmark.PRIORITY, new ReleasingCallback());
      rejector.arm();
      time.advance(LoadShedder.Builder.DEFAULT_CONTROL_INTERVAL.toNanos());
      if (route.cutoff() != 0 || route.queued() != 1) {
        throw new IllegalStateException("not one request queued behind a cutoff of 0: " + route);
      }
    }

    @TearDown
    public void tearDown() {
      held.success();
      filter.destroy();
    }
  }

  /**
   * A {@code SimpleLimiter} with {@code VegasLimit.newDefault()} in the experiment's filter
   * ({@link NetflixLimitFilter}): the release object, the {@code isAsyncStarted()} check
   * after the chain and the status read that the deployed peer pays on every request.
   */
  @State(Scope.Benchmark)
  public static class NetflixState {
    Filter filter;

    @Setup
    public void setup() {
      filter = NetflixLimitFilter.vegas();
    }
  }

  @Benchmark
  public int none(Exchange x) throws IOException, ServletException {
    x.response.reset();
    noFilter(new StubServletRequest(PLAIN, HELLO), x.response);
    return x.response.getStatus();
  }

  /**
   * The chain, called as a filter would call it: not inlined, so that the request escapes here
   * as it does into a filter, and the baseline allocates the request, as every contender does.
   */
  @CompilerControl(CompilerControl.Mode.DONT_INLINE)
  private static void noFilter(HttpServletRequest request, HttpServletResponse response)
      throws IOException, ServletException {
    OK.doFilter(request, response);
  }

  @Benchmark
  public int netflixVegas(NetflixState s, Exchange x) throws IOException, ServletException {
    return filter(s.filter, PLAIN, x);
  }

  @Benchmark
  public int weir(WeirState s, Exchange x) throws IOException, ServletException {
    return filter(s.filter, PLAIN, x);
  }

  /** The same, for a request that carries its tier and cohort. */
  @Benchmark
  public int weirTierHeader(WeirState s, Exchange x) throws IOException, ServletException {
    return filter(s.filter, TIERED, x);
  }

  /** A request shed at the door and answered 429 by the filter. */
  @Benchmark
  public int weirShed(WeirShedState s, Exchange x) throws IOException, ServletException {
    return filter(s.filter, PLAIN, x);
  }

  /** One new request with {@code headers} through {@code filter}; the status it was answered. */
  private static int filter(Filter filter, HttpFields headers, Exchange x)
      throws IOException, ServletException {
    x.response.reset();
    filter.doFilter(new StubServletRequest(headers, HELLO), x.response, OK);
    return x.response.getStatus();
  }
}
