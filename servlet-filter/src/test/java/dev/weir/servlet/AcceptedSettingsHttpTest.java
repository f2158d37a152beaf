package dev.weir.servlet;

import static dev.weir.servlet.Support.await;
import static dev.weir.servlet.Support.servlet;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.LoadShedder;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import dev.weir.http.HttpAnswers;
import dev.weir.http.PriorityHeaders;
import dev.weir.http.RejectionFormat;
import dev.weir.internal.Check;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * No setting the filter accepts at configuration time fails at request time: filters built from
 * many accepted settings, edge values included, serve real requests on Jetty 12, and every answer
 * is the application's 200 or one of the filter's own (it carries {@code X-Weir-Outcome}); none is
 * a container error, and nothing throws out of the filter.
 */
class AcceptedSettingsHttpTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final Duration TINY = Duration.ofNanos(1);
  private static final Duration HUGE = Check.MAX_DURATION;

  /** Delegates to the filter under test, which changes between batches; records throws. */
  static final class Swap implements Filter {
    final AtomicReference<WeirFilter> target = new AtomicReference<>();
    final ConcurrentLinkedQueue<Throwable> thrown = new ConcurrentLinkedQueue<>();

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) {
      try {
        target.get().doFilter(req, res, chain);
      } catch (Throwable t) {
        thrown.add(t);
      }
    }
  }

  private static List<Supplier<WeirFilter.Builder>> programmatic() {
    List<Supplier<WeirFilter.Builder>> out = new ArrayList<>();
    List<LoadShedder.Builder> templates = List.of(
        LoadShedder.builder(),
        LoadShedder.builder().requestTimeout(TINY),
        LoadShedder.builder().requestTimeout(TINY).queueTimeout(TINY),
        LoadShedder.builder().requestTimeout(HUGE),
        LoadShedder.builder().requestTimeout(HUGE).queueTimeout(HUGE),
        LoadShedder.builder().requestTimeout(Duration.ofMillis(1)).queueTimeout(Duration.ofMillis(1)),
        Support.oneAtATime().queueCapacity(1),
        LoadShedder.builder().limit(() -> Limits.fixed(1)).queueCapacity(Integer.MAX_VALUE)
            .requestTimeout(HUGE),
        LoadShedder.builder().limit(() -> Limits.fixed(Integer.MAX_VALUE)),
        LoadShedder.builder().limit(Limits::adaptive).rejector(Rejectors::adaptive)
            .controlInterval(Duration.ofMillis(1)),
        LoadShedder.builder().controlInterval(HUGE).name(" named "));
    for (LoadShedder.Builder t : templates) {
      for (boolean bounded : new boolean[] {false, true}) {
        out.add(() -> WeirFilter.builder().shedder(t).boundedResponseTime(bounded));
      }
    }
    out.add(() -> WeirFilter.builder().maxShedders(1));
    out.add(() -> WeirFilter.builder().boundedResponseTime(true).maxBufferedBytes(0));
    out.add(() -> WeirFilter.builder().boundedResponseTime(true).maxBufferedBytes(64 << 20));
    out.add(() -> WeirFilter.builder().routeIdleTimeout(Duration.ofMillis(100)).maxShedders(1));
    out.add(() -> WeirFilter.builder().routeIdleTimeout(Duration.ofDays(365)));
    out.add(() -> WeirFilter.builder().bodyReadTimeout(Duration.ofMillis(1)));
    out.add(() -> WeirFilter.builder().bodyReadTimeout(Duration.ofDays(365))
        .shedder(LoadShedder.builder().requestTimeout(TINY)).boundedResponseTime(true));
    out.add(() -> WeirFilter.builder().routeKey(r -> ""));
    out.add(() -> WeirFilter.builder().routeKey(r -> " ").maxShedders(1));
    out.add(() -> WeirFilter.builder().routeKey(r -> {
      throw new IllegalStateException("route");
    }));
    out.add(() -> WeirFilter.builder().priorityResolver(r -> -1));
    out.add(() -> WeirFilter.builder().priorityResolver(r -> {
      throw new IllegalStateException("priority");
    }));
    out.add(() -> WeirFilter.builder().priorityHeaders(PriorityHeaders.builder().defaultTier(5)
        .maxHeaderLength(1).readBaggage(false).userKeyHeader(null).build()));
    out.add(() -> WeirFilter.builder().answers(HttpAnswers.builder().retryAfter(Duration.ZERO)
        .format(RejectionFormat.EMPTY).build()).boundedResponseTime(true)
        .shedder(LoadShedder.builder().requestTimeout(TINY)));
    out.add(() -> WeirFilter.builder().answers(HttpAnswers.builder().retryAfter(HUGE)
        .format(RejectionFormat.JSON).build()).shedder(LoadShedder.builder()
            .limit(() -> Limits.fixed(1)).queueCapacity(1).requestTimeout(TINY)));
    return out;
  }

  private static List<Map<String, String>> initParams() {
    return List.of(
        Map.of(),
        Map.of("weir.requestTimeout", "PT0.000000001S", "weir.boundedResponseTime", "true"),
        Map.of("weir.requestTimeout", "1ms", "weir.queueTimeout", "1ms", "weir.limit", "1",
            "weir.rejector", "none", "weir.queueCapacity", "1"),
        Map.of("weir.requestTimeout", "PT2562047H", "weir.queueTimeout", "PT2562047H",
            "weir.limit", "1", "weir.maxShedders", "1"),
        Map.of("weir.retryAfter", "0s", "weir.rejectionFormat", "empty", "weir.shedStatus", "599",
            "weir.unavailableStatus", "400", "weir.routes", "single", "weir.limit", "1",
            "weir.queueCapacity", "1", "weir.requestTimeout", "1ms"),
        Map.of("weir.maxBufferedBytes", "0", "weir.boundedResponseTime", "true",
            "weir.routeIdleTimeout", "100ms", "weir.bodyReadTimeout", "1ms"),
        Map.of("weir.maxBufferedBytes", "67108864", "weir.routeIdleTimeout", "PT8760H",
            "weir.bodyReadTimeout", "PT8760H", "weir.requestTimeout", "PT2562047H"),
        Map.of("weir.defaultTier", "0", "weir.maxHeaderLength", "8192", "weir.baggage", "false",
            "weir.callerTiers", "a=0,b=5", "weir.cohortRotation", "1s",
            "weir.tierHeader", "X-T", "weir.callerHeader", "X-C", "weir.userKeyHeader", "X-U"));
  }

  @Test
  void acceptedSettingsNeverFailARequest() throws Exception {
    List<WeirFilter> filters = new ArrayList<>();
    for (Supplier<WeirFilter.Builder> b : programmatic()) {
      filters.add(b.get().build());
    }
    for (Map<String, String> params : initParams()) {
      WeirFilter f = new WeirFilter();
      f.init(Support.filterConfig(params));
      filters.add(f);
    }
    Swap swap = new Swap();
    AtomicReference<CountDownLatch> hold = new AtomicReference<>();
    CountDownLatch[] entered = new CountDownLatch[1];
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    for (boolean async : new boolean[] {true, false}) {
      try (TestServer s = TestServer.with(swap).servletsAsyncSupported(async)
          .servlet("/w", servlet((req, res) -> {
            if (req.getParameter("hold") != null) {
              entered[0].countDown();
              hold.get().await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            }
            res.getWriter().print("ok");
          }))
          .servlet("/other", servlet((req, res) -> res.getWriter().print("ok")))
          .start()) {
        int i = 0;
        for (WeirFilter f : filters) {
          String what = (async ? "async " : "sync ") + "filter " + i++;
          swap.target.set(f);
          hold.set(new CountDownLatch(1));
          entered[0] = new CountDownLatch(1);
          List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
          answers.add(send(http, s, "/w?hold=1", "0"));
          // The first request is admitted at once whatever the settings; the rest queue behind it
          // or are turned away, unless its deadline answer came first.
          entered[0].await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
          for (int k = 0; k < 6; k++) {
            answers.add(k == 3 ? post(http, s, "/other", "body")
                : send(http, s, k % 2 == 0 ? "/w" : "/other", Integer.toString(k % 6)));
          }
          hold.get().countDown();
          for (CompletableFuture<HttpResponse<String>> a : answers) {
            HttpResponse<String> r = a.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            boolean ours = r.headers().firstValue("X-Weir-Outcome").isPresent();
            assertTrue(r.statusCode() == 200 || ours, what + ": " + r.statusCode() + " "
                + r.body());
            if (r.statusCode() == 200) {
              assertEquals("ok", r.body(), what);
            }
          }
          assertTrue(swap.thrown.isEmpty(), what + " threw: " + swap.thrown);
          await(() -> f.shedders().values().stream()
                  .allMatch(x -> x.inflight() == 0 && x.queued() == 0), WAIT,
              () -> what + " not drained: " + f.snapshots());
        }
      }
    }
    filters.forEach(WeirFilter::destroy);
  }

  @Test
  void everyStatusIsAnswered() throws Exception {
    Swap swap = new Swap();
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    try (TestServer s = TestServer.with(swap)
        .servlet("/w", servlet((req, res) -> res.getWriter().print("ok"))).start()) {
      for (int status = 400; status <= 599; status++) {
        RejectionFormat format = RejectionFormat.values()[status % 3];
        WeirFilter f = WeirFilter.builder().answers(HttpAnswers.builder().shedStatus(status)
            .unavailableStatus(status).retryAfter(Duration.ofSeconds(status % 2))
            .format(format).build()).build();
        f.destroy(); // every request is now answered by the filter itself
        swap.target.set(f);
        HttpResponse<String> r = send(http, s, "/w", "1").get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(status, r.statusCode(), format.name());
        assertEquals("shutting-down", r.headers().firstValue("X-Weir-Outcome").orElse(null));
        assertEquals(status % 2 == 0, r.headers().firstValue("Retry-After").isEmpty());
      }
      assertTrue(swap.thrown.isEmpty(), "threw: " + swap.thrown);
    }
  }

  private static CompletableFuture<HttpResponse<String>> post(HttpClient http, TestServer s,
      String path, String body) {
    return http.sendAsync(HttpRequest.newBuilder(s.uri(path)).timeout(WAIT)
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static CompletableFuture<HttpResponse<String>> send(HttpClient http, TestServer s,
      String path, String tier) {
    return http.sendAsync(HttpRequest.newBuilder(s.uri(path)).timeout(WAIT)
        .header("X-Weir-Tier", tier).build(), HttpResponse.BodyHandlers.ofString());
  }
}
