package dev.weir.jmh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.Priority;
import dev.weir.RejectReason;
import dev.weir.Snapshot.Counter;
import org.junit.jupiter.api.Test;

/**
 * Runs every benchmark method a few times outside JMH and checks that it measures what it claims:
 * the fast path admits without queueing, the shed path sheds, the queued path queues and
 * dispatches, and so on. A benchmark that silently measured the wrong path would be worse than
 * none.
 */
class BenchmarksSmokeTest {
  private static final int N = 50;
  private static final int TIER = Priority.tier(FastPathBenchmark.PRIORITY);

  @Test
  void fastPathBaselinesAdmitEveryRequest() {
    FastPathBenchmark b = new FastPath1Thread();
    FastPathBenchmark.SemaphoreState semaphore = new FastPathBenchmark.SemaphoreState();
    FastPathBenchmark.NetflixVegasState vegas = new FastPathBenchmark.NetflixVegasState();
    FastPathBenchmark.NetflixGradient2State gradient = new FastPathBenchmark.NetflixGradient2State();
    vegas.setup();
    gradient.setup();
    for (int i = 0; i < N; i++) {
      assertTrue(b.nanoTimePair() >= 0, "the clock is monotonic");
      assertTrue(b.semaphore(semaphore) >= 0, "semaphore admits");
      assertTrue(b.netflixVegas(vegas), "Netflix Vegas admits");
      assertTrue(b.netflixGradient2(gradient), "Netflix Gradient2 admits");
    }
    assertEquals(Integer.MAX_VALUE, semaphore.semaphore.availablePermits(), "all released");
  }

  @Test
  void filterPathContendersAnswer200AndWeirReleasesEveryPermit() throws Exception {
    FilterPathBenchmark b = new FilterPath1Thread();
    FilterPathBenchmark.Exchange x = new FilterPathBenchmark.Exchange();
    FilterPathBenchmark.NetflixState netflix = new FilterPathBenchmark.NetflixState();
    netflix.setup();
    FilterPathBenchmark.WeirState weir = new FilterPathBenchmark.WeirState();
    weir.setup();
    try {
      for (int i = 0; i < N; i++) {
        assertEquals(200, b.none(x));
        assertEquals(200, b.netflixVegas(netflix, x));
        assertEquals(200, b.weir(weir, x));
        assertEquals(200, b.weirTierHeader(weir, x));
      }
      assertEveryRequestSucceededAndReleased(weir);
    } finally {
      weir.tearDown();
    }
    FilterPathBenchmark.WeirShedState shed = new FilterPathBenchmark.WeirShedState();
    shed.setup();
    try {
      for (int i = 0; i < N; i++) {
        assertEquals(429, b.weirShed(shed, x));
      }
      assertEquals(N, shed.filter.shedders().get("GET /hello").count(Counter.SHED, 3));
    } finally {
      shed.tearDown();
    }
  }

  @Test
  void filterPathOnJettyRunsOnJettysOwnRequestAndWeirReleasesEveryPermit() throws Exception {
    FilterPathOnJetty b = new FilterPathOnJetty();
    FilterPathOnJetty.Live live = new FilterPathOnJetty.Live();
    live.setup();
    FilterPathBenchmark.NetflixState netflix = new FilterPathBenchmark.NetflixState();
    netflix.setup();
    FilterPathBenchmark.WeirState weir = new FilterPathBenchmark.WeirState();
    weir.setup();
    try {
      assertTrue(live.plain.request instanceof org.eclipse.jetty.ee10.servlet.ServletApiRequest,
          "the filter's one-pass header read applies only to Jetty's own request");
      for (int kb : new int[] {0, 48}) {
        FilterPathOnJetty.Evict evict = new FilterPathOnJetty.Evict();
        evict.evictKb = kb;
        evict.setup();
        for (int i = 0; i < N; i++) {
          assertEquals(200, b.none(evict, live));
          assertEquals(200, b.netflixVegas(evict, netflix, live));
          assertEquals(200, b.weir(evict, weir, live));
          assertEquals(200, b.weirTierHeader(evict, weir, live));
        }
      }
      dev.weir.LoadShedder route = weir.filter.shedders().get("GET /hello");
      assertEquals(0, route.inflight(), "every permit released");
      assertEquals(2 * N, route.count(Counter.SUCCEEDED, 3), "no header: the default tier");
      assertEquals(2 * N, route.count(Counter.SUCCEEDED, 1), "X-Weir-Tier: 1:42");
      FilterPathOnJetty.WeirEverySampledState sampled = new FilterPathOnJetty.WeirEverySampledState();
      sampled.setup();
      try {
        FilterPathOnJetty.Evict evict = new FilterPathOnJetty.Evict();
        evict.setup();
        for (int i = 0; i < N; i++) {
          assertEquals(200, b.weirEverySampled(evict, sampled, live));
        }
        dev.weir.LoadShedder r = sampled.filter.shedders().get("GET /hello");
        assertEquals(0, r.inflight(), "every permit released");
        assertEquals(N, r.count(Counter.SUCCEEDED, 3));
      } finally {
        sampled.tearDown();
      }
    } finally {
      weir.tearDown();
      live.tearDown();
    }
  }

  @Test
  void handlerPathOnJettyRunsOnJettysOwnRequestAndWeirReleasesEveryPermit() throws Exception {
    HandlerPathOnJetty b = new HandlerPathOnJetty();
    HandlerPathOnJetty.Live live = new HandlerPathOnJetty.Live();
    live.setup();
    HandlerPathOnJetty.WeirState weir = new HandlerPathOnJetty.WeirState();
    weir.setup(live);
    try {
      FilterPathOnJetty.Evict evict = new FilterPathOnJetty.Evict();
      evict.evictKb = 48;
      evict.setup();
      for (int i = 0; i < N; i++) {
        assertEquals(200, b.none(evict, live));
        assertEquals(200, b.weir(evict, weir, live));
        assertEquals(200, b.weirTierHeader(evict, weir, live));
      }
      assertEveryRequestSucceededAndReleased(
          weir.handler.shedders().get(dev.weir.jetty.WeirHandler.SINGLE_ROUTE));
    } finally {
      weir.tearDown();
      live.tearDown();
    }
  }

  /** N requests without a header and N with {@code X-Weir-Tier: 1:42}, all released. */
  private static void assertEveryRequestSucceededAndReleased(FilterPathBenchmark.WeirState weir) {
    assertEveryRequestSucceededAndReleased(weir.filter.shedders().get("GET /hello"));
  }

  /** The same, on the shedder {@code route}. */
  private static void assertEveryRequestSucceededAndReleased(dev.weir.LoadShedder route) {
    assertEquals(0, route.inflight(), "every permit released");
    assertEquals(N, route.count(Counter.SUCCEEDED, 3), "no header: the default tier");
    assertEquals(N, route.count(Counter.SUCCEEDED, 1), "X-Weir-Tier: 1:42");
  }

  @Test
  void operatingPointsAdmitAtOnceAndRelease() throws Exception {
    OperatingPointBenchmark b = new OperatingPoint2Threads();
    for (String point : new String[] {"zero-config", "twice-inflight", "limit1000"}) {
      OperatingPointBenchmark.WeirState s = new OperatingPointBenchmark.WeirState();
      s.point = point;
      s.setup(2);
      try {
        if (point.equals("twice-inflight")) {
          assertEquals(4, s.shedder.limit(), "twice the thread count");
        }
        for (int i = 0; i < N; i++) {
          assertTrue(b.weirAcquire(s), point + ": acquire admits and success() releases");
          b.weirSubmit(s);
          assertEquals(0, s.shedder.inflight(), point + ": the callback released");
        }
        assertEquals(2 * N, s.shedder.count(Counter.SUCCEEDED, TIER), point);
      } finally {
        s.tearDown();
      }
    }
    FastPathBenchmark.NetflixVegasState vegas = new FastPathBenchmark.NetflixVegasState();
    vegas.setup();
    assertTrue(b.netflixVegas(vegas), "Netflix Vegas admits");
  }

  @Test
  void weirFastPathAdmitsAtOnceAndReleases() throws Exception {
    FastPathBenchmark b = new FastPath2Threads();
    FastPathBenchmark.WeirState s = new FastPathBenchmark.WeirState();
    s.setup();
    try {
      for (int i = 0; i < N; i++) {
        assertTrue(b.weirAcquire(s), "acquire admits and success() releases");
        b.weirSubmit(s);
        assertEquals(0, s.shedder.inflight(), "the callback released");
      }
      assertEquals(0, s.shedder.inflight());
      assertEquals(0, s.shedder.queued());
      assertEquals(2 * N, s.shedder.count(Counter.ADMITTED, TIER));
      assertEquals(2 * N, s.shedder.count(Counter.SUCCEEDED, TIER));
    } finally {
      s.tearDown();
    }
  }

  @Test
  void shedBenchmarkRejectsAtTheDoorOnEitherClock() throws Exception {
    for (String clock : new String[] {"virtual", "system"}) {
      ShedBenchmark b = new ShedBenchmark();
      b.clock = clock;
      b.setup();
      try {
        for (int i = 0; i < N; i++) {
          b.shed();
        }
        assertEquals(N, b.shedder.count(Counter.SHED, TIER), clock);
        assertEquals(1, b.shedder.count(Counter.ADMITTED, TIER), clock + ": the held permit only");
        assertEquals(1, b.shedder.queued(), clock + ": the request the setup queued");
      } finally {
        b.tearDown();
      }
    }
  }

  @Test
  void queuedPathQueuesThenDispatchesOnRelease() {
    QueuedPathBenchmark b = new QueuedPathBenchmark();
    b.setup();
    try {
      for (int i = 0; i < N; i++) {
        assertTrue(b.enqueueAndDispatch(), "the queued request was dispatched");
        assertEquals(1, b.shedder.inflight(), "the limit of 1 stays held");
        assertEquals(0, b.shedder.queued());
      }
      assertEquals(N + 1, b.shedder.count(Counter.ADMITTED, TIER));
      assertEquals(N, b.shedder.count(Counter.SUCCEEDED, TIER));
      assertEquals(0, b.shedder.count(Counter.QUEUE_TIMEOUT, TIER), "no queue timer fired");
      assertTrue(b.shedder.totalQueueWaitNanos(TIER) == 0, "dispatched in the same instant");
      assertNull(b.holder.lastRejection);
    } finally {
      b.tearDown();
    }
  }

  @Test
  void bucketQueueKeepsItsDepth() {
    for (int depth : new int[] {1, 1000}) {
      BucketQueueBenchmark b = new BucketQueueBenchmark();
      b.depth = depth;
      b.setup();
      for (int i = 0; i < 10 * N; i++) {
        int level = b.pollOffer();
        assertTrue(level >= 0 && level < Priority.LEVELS);
        assertEquals(depth, b.queue.size());
      }
    }
  }

  @Test
  void controlTickRunsOncePerOperationWithEveryRequestAdmitted() {
    ControlTickBenchmark b = new ControlTickBenchmark();
    b.setup();
    try {
      int ticks = 5;
      for (int i = 0; i < ticks; i++) {
        b.runBatch();
        long before = b.time.nanoTime();
        int limit = b.tick();
        assertEquals(before + 1, b.time.nanoTime(), "the operation moved time onto the tick");
        assertTrue(limit >= 1 && limit <= b.shedder.maxLimit());
      }
      long admitted = 0;
      long rejected = 0;
      for (int t = 0; t < Priority.TIERS; t++) {
        admitted += b.shedder.count(Counter.SUCCEEDED, t);
        rejected += b.shedder.count(Counter.SHED, t) + b.shedder.count(Counter.QUEUE_FULL, t);
      }
      assertEquals((long) ticks * ControlTickBenchmark.BATCH, admitted);
      assertEquals(0, rejected);
      assertEquals(ticks * 100_000_000L, b.time.nanoTime());
      assertNull(b.holder.lastRejection, () -> "rejected: " + b.holder.lastRejection);
    } finally {
      b.tearDown();
    }
  }

  @Test
  void anIdleTickMovesTimeOneIntervalAndLeavesTheLimitAlone() {
    IdleTickBenchmark b = new IdleTickBenchmark();
    b.setup();
    try {
      for (int i = 1; i <= 5; i++) {
        assertEquals(b.shedder.limit(), b.tick(), "nothing seen, nothing learned");
        assertEquals(i * 100_000_000L, b.time.nanoTime());
      }
      assertEquals(4, b.shedder.limit());
    } finally {
      b.tearDown();
    }
  }

  @Test
  void shedEverythingCutsOffTheMostImportantPriority() throws Exception {
    ShedBenchmark b = new ShedBenchmark();
    b.setup();
    try {
      assertEquals(0, b.shedder.cutoff());
      HoldingCallback callback = new HoldingCallback();
      b.shedder.submit(Priority.HIGHEST, callback);
      assertEquals(RejectReason.SHED, callback.lastRejection);
      assertNull(callback.held);
      assertEquals(1, b.shedder.count(Counter.SHED, 0));
    } finally {
      b.tearDown();
    }
  }
}
