package dev.weir.examples.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.FixedLimit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import dev.weir.examples.Downstream;
import dev.weir.examples.ExampleServer;
import jakarta.servlet.http.HttpServletRequest;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

class NetflixLimitFilterTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  /** Counts each kind of release. */
  private static final class CountingListener implements Limiter.Listener {
    final AtomicInteger success = new AtomicInteger();
    final AtomicInteger ignore = new AtomicInteger();
    final AtomicInteger dropped = new AtomicInteger();
    final CompletableFuture<Void> released = new CompletableFuture<>();

    @Override
    public void onSuccess() {
      success.incrementAndGet();
      released.complete(null);
    }

    @Override
    public void onIgnore() {
      ignore.incrementAndGet();
      released.complete(null);
    }

    @Override
    public void onDropped() {
      dropped.incrementAndGet();
      released.complete(null);
    }

    int total() {
      return success.get() + ignore.get() + dropped.get();
    }
  }

  private static HttpResponse<String> get(ExampleServer server) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(server.workUri()).timeout(Duration.ofSeconds(10))
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void answers429WhenTheLimiterRefuses() throws Exception {
    AtomicInteger acquires = new AtomicInteger();
    Limiter<HttpServletRequest> refusing = request -> {
      acquires.incrementAndGet();
      return Optional.empty();
    };
    Downstream downstream = new Downstream(1, Duration.ofMillis(1), 1);
    try (ExampleServer server =
        ExampleServer.start(downstream, new NetflixLimitFilter(refusing))) {
      HttpResponse<String> response = get(server);
      assertEquals(429, response.statusCode());
      assertEquals("too many requests\n", response.body());
      assertEquals(1, acquires.get());
    }
  }

  @Test
  void releasesAnAdmittedRequestsListenerExactlyOnceAsASuccess() throws Exception {
    CountingListener listener = new CountingListener();
    Limiter<HttpServletRequest> admitting = request -> Optional.of(listener);
    Downstream downstream = new Downstream(1, Duration.ofMillis(1), 1);
    try (ExampleServer server =
        ExampleServer.start(downstream, new NetflixLimitFilter(admitting))) {
      HttpResponse<String> response = get(server);
      assertEquals(200, response.statusCode());
      assertEquals("ok\n", response.body());
      listener.released.get(10, TimeUnit.SECONDS);
    }
    // The server has stopped: nothing can release it again.
    assertEquals(1, listener.success.get());
    assertEquals(1, listener.total());
  }

  @Test
  void aBurstOverTheLimitGets429sAndLeavesNothingInFlight() throws Exception {
    SimpleLimiter<HttpServletRequest> limiter =
        SimpleLimiter.newBuilder().limit(FixedLimit.of(2)).build();
    // One connection held ~300 ms per call: 20 requests sent at once cannot all fit in 2 slots
    // unless a stalled client spreads them over seconds.
    Downstream downstream = new Downstream(1, Duration.ofMillis(300), 1);
    try (ExampleServer server =
        ExampleServer.start(downstream, new NetflixLimitFilter(limiter))) {
      List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        responses.add(HTTP.sendAsync(HttpRequest.newBuilder(server.workUri())
            .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString()));
      }
      int ok = 0;
      int refused = 0;
      for (CompletableFuture<HttpResponse<String>> f : responses) {
        int status = f.get(30, TimeUnit.SECONDS).statusCode();
        ok += status == 200 ? 1 : 0;
        refused += status == 429 ? 1 : 0;
      }
      assertEquals(20, ok + refused, "every request is answered 200 or 429");
      assertTrue(ok >= 2, "at least the first two are admitted, was " + ok);
      assertTrue(refused >= 1, "the burst is over the limit");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (limiter.getInflight() != 0 && System.nanoTime() < deadline) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // polling, with a deadline
      }
      assertEquals(0, limiter.getInflight(), "every admitted request released its listener");
    }
  }

  @Test
  void statusesMapToOutcomes() {
    assertEquals(NetflixLimitFilter.Outcome.SUCCESS, NetflixLimitFilter.Outcome.ofStatus(200));
    assertEquals(NetflixLimitFilter.Outcome.SUCCESS, NetflixLimitFilter.Outcome.ofStatus(404));
    assertEquals(NetflixLimitFilter.Outcome.DROPPED, NetflixLimitFilter.Outcome.ofStatus(503));
    assertEquals(NetflixLimitFilter.Outcome.DROPPED, NetflixLimitFilter.Outcome.ofStatus(504));
    assertEquals(NetflixLimitFilter.Outcome.IGNORE, NetflixLimitFilter.Outcome.ofStatus(500));
  }

  @Test
  void aReleaseHappensOnceWhicheverPathComesFirst() {
    CountingListener listener = new CountingListener();
    NetflixLimitFilter.Release release = new NetflixLimitFilter.Release(listener);
    release.dropped();
    release.byStatus(200);
    release.ignore();
    release.dropped();
    assertEquals(1, listener.dropped.get());
    assertEquals(1, listener.total());
  }

  @Test
  void tierHeadersMapToQoSPrioritiesMostImportantHighest() {
    assertEquals(5, TierQoSHandler.priorityOf("0"));
    assertEquals(4, TierQoSHandler.priorityOf("1"));
    assertEquals(4, TierQoSHandler.priorityOf(" 1:17 "));
    assertEquals(0, TierQoSHandler.priorityOf("5:127"));
    for (String bad : new String[] {null, "", "x", "6", "-1", "1:999", "99999999999999999999"}) {
      assertEquals(0, TierQoSHandler.priorityOf(bad), "header " + bad);
    }
  }
}
