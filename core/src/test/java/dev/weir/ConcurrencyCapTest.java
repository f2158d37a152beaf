package dev.weir;

import static dev.weir.VegasLimitSlowStartTest.MS;
import static dev.weir.VegasLimitSlowStartTest.TICK;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import dev.weir.control.VegasLimit;
import dev.weir.http.ServerThreads;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToIntFunction;
import org.junit.jupiter.api.Test;

/**
 * A host that runs each admitted request on one of a bounded pool's threads caps the limit
 * ({@link LoadShedder#capConcurrency}): the shedder never admits more, whatever its limit
 * controller says, and a {@link VegasLimit} keeps its own limit under the cap, so that it binds
 * there and the shedder's queue, not the host's, holds what waits.
 */
class ConcurrencyCapTest {
  private final VirtualTime time = new VirtualTime();

  @Test
  void aCappedShedderAdmitsNoMoreThanTheCapAndTheCapCanBeLifted() {
    LoadShedder s = LoadShedder.builder().timer(time).limit(() -> Limits.fixed(50))
        .rejector(Rejectors::none).build();
    assertEquals(Integer.MAX_VALUE, s.concurrencyCap());
    s.capConcurrency(10);
    assertEquals(10, s.concurrencyCap());
    time.advance(TICK); // a tick applies it
    assertEquals(10, s.limit());
    List<Recorder> requests = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      Recorder r = new Recorder();
      s.submit(Priority.of(1, i), r);
      requests.add(r);
    }
    assertEquals(10, s.inflight());
    assertEquals(2, s.queued());
    assertNull(requests.get(11).permit);

    s.capConcurrency(Integer.MAX_VALUE);
    time.advance(TICK);
    assertEquals(50, s.limit());
    assertEquals(0, s.queued());
    assertNotNull(requests.get(11).permit);
    requests.forEach(r -> r.permit.success());
    assertEquals(0, s.inflight());
  }

  @Test
  void aCapBelowOneIsRefusedNamingIt() {
    LoadShedder s = LoadShedder.builder().timer(time).build();
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> s.capConcurrency(0));
    assertTrue(e.getMessage().contains("cap"), e.getMessage());
    assertEquals(Integer.MAX_VALUE, s.concurrencyCap());
  }

  /**
   * A host of 20 threads in front of a downstream whose latency does not depend on load: past 20
   * in flight, requests would wait for a thread before the shedder. Uncapped, the limit grows past
   * the threads, every window's peak is the 20 that run, and the limit settles half as high again
   * without ever binding, so nothing waits in the shedder's queue. Capped, it sits at the cap and
   * binds.
   */
  @Test
  void aVegasLimitUnderACapBindsThereInsteadOfStandingAboveWhatRuns() {
    assertTrue(settle(Integer.MAX_VALUE) > 25, "uncapped, the limit stands above the threads");
    assertEquals(20, settle(20));
  }

  /** The limit after 600 ticks of demand beyond 20 threads, asserting it never passes the cap. */
  private static int settle(int cap) {
    VegasLimit v = VegasLimit.builder().build();
    long now = 0;
    int limit = v.initialLimit();
    for (int i = 0; i < 600; i++) {
      now += TICK;
      ControlWindow w =
          VegasLimitSlowStartTest.window(now, limit, Math.min(limit, 20), 100 * MS, 60);
      w.concurrencyCap = cap;
      limit = v.update(w);
      assertTrue(limit <= cap, "limit " + limit + " above the cap " + cap + " at tick " + i);
    }
    return limit;
  }

  @Test
  void aServerKeepsASixteenthOfItsThreadsAndAtLeastTwo() {
    assertEquals(187, ServerThreads.admittable(200));
    assertEquals(60, ServerThreads.admittable(64));
    assertEquals(46, ServerThreads.admittable(50));
    assertEquals(14, ServerThreads.admittable(16)); // Undertow's default on 2 cores
    assertEquals(3, ServerThreads.admittable(5));
    assertEquals(1, ServerThreads.admittable(3));
    assertEquals(1, ServerThreads.admittable(1));
    assertThrows(IllegalArgumentException.class, () -> ServerThreads.admittable(0));
  }

  @Test
  void routesThatRanOnServerThreadsShareOneBudgetAndThePoolIsReadOnce() {
    ServerThreads threads = new ServerThreads();
    LoadShedder a = LoadShedder.builder().timer(time).build();
    LoadShedder b = LoadShedder.builder().timer(time).build();
    int[] reads = {0};
    ToIntFunction<Integer> pool = n -> {
      reads[0]++;
      return n;
    };
    threads.ranOnServerThread(a, 200, pool);
    threads.ranOnServerThread(a, 200, pool);
    threads.ranOnServerThread(b, 50, pool);
    assertEquals(1, reads[0]);
    ConcurrencyBudget budget = a.concurrencyBudget();
    assertNotNull(budget);
    assertSame(budget, b.concurrencyBudget(), "one pool, read from the first request");
    assertEquals(187, budget.threads());
    assertEquals(2, budget.members());
    assertEquals(187, a.concurrencyCap(), "an idle other route leaves the whole budget");
  }

  @Test
  void aRouteThatAnswersAsynchronouslyLeavesTheBudgetForGood() {
    ServerThreads threads = new ServerThreads();
    LoadShedder mixed = LoadShedder.builder().timer(time).build();
    LoadShedder sync = LoadShedder.builder().timer(time).build();
    ToIntFunction<Integer> pool = n -> n;
    threads.ranAsynchronously(mixed); // before the pool is read: nothing to leave
    threads.ranOnServerThread(mixed, 200, pool);
    threads.ranOnServerThread(sync, 200, pool);
    ConcurrencyBudget budget = sync.concurrencyBudget();
    assertSame(budget, mixed.concurrencyBudget());
    threads.ranAsynchronously(mixed);
    assertNull(mixed.concurrencyBudget());
    assertEquals(Integer.MAX_VALUE, mixed.concurrencyCap());
    threads.ranOnServerThread(mixed, 200, pool);
    assertNull(mixed.concurrencyBudget(), "a route that answered asynchronously stays uncapped");
    assertSame(budget, sync.concurrencyBudget());
    assertEquals(1, budget.members());
    LoadShedder own = LoadShedder.builder().timer(time).build();
    own.capConcurrency(7);
    threads.ranAsynchronously(own);
    assertEquals(7, own.concurrencyCap(), "a cap of the caller's own is left alone");
  }

  /**
   * Two routes whose requests hold threads of one pool of 40: the first busy route may take all
   * 40; the second then gets what is left, at least half; what each holds beyond its cap is never
   * revoked, but new requests wait in the route's queue until the other frees threads.
   */
  @Test
  void twoSheddersShareABudgetAndNeitherTakesWhatTheOtherHolds() {
    ConcurrencyBudget budget = new ConcurrencyBudget(40);
    LoadShedder a = LoadShedder.builder().timer(time).limit(() -> Limits.fixed(100))
        .rejector(Rejectors::none).build();
    LoadShedder b = LoadShedder.builder().timer(time).limit(() -> Limits.fixed(100))
        .rejector(Rejectors::none).build();
    a.capConcurrency(budget);
    b.capConcurrency(budget);
    time.advance(TICK);
    assertEquals(40, a.limit(), "alone, a route may take the whole budget");
    List<Recorder> onA = submit(a, 30);
    assertEquals(30, a.inflight());
    assertEquals(20, b.concurrencyCap(), "10 left, but at least an even share");
    time.advance(TICK);
    assertEquals(20, b.limit());
    List<Recorder> onB = submit(b, 25);
    assertEquals(20, b.inflight());
    assertEquals(5, b.queued());
    time.advance(TICK);
    assertEquals(20, a.limit(), "the other route holds its share: 40 less 20");
    assertEquals(30, a.inflight(), "what a route holds is not revoked");
    Recorder late = submit(a, 1).get(0);
    assertEquals(0, late.calls, "a new request waits in the route's queue");
    assertEquals(1, a.queued());

    for (int i = 0; i < 15; i++) {
      onA.get(i).permit.success();
    }
    assertEquals(16, a.inflight(), "the queued request ran once the route held less than its cap");
    time.advance(TICK);
    assertEquals(24, b.limit(), "40 less the 16 the other route holds");
    assertEquals(24, b.inflight());
    assertEquals(1, b.queued());
    assertEquals(40, a.inflight() + b.inflight());

    onA.subList(15, 30).forEach(r -> r.permit.success());
    onB.subList(0, 24).forEach(r -> r.permit.success());
    assertEquals(1, b.inflight(), "the last of the route's queue ran");
    time.advance(TICK);
    assertEquals(39, b.concurrencyCap(), "40 less the other route's one");
    late.permit.success();
    onB.get(24).permit.success();
    a.close();
    assertEquals(1, budget.members(), "a closed shedder leaves its budget");
    a.capConcurrency(budget);
    assertNull(a.concurrencyBudget(), "and joins none again");
    assertEquals(40, b.concurrencyCap());
  }

  private static List<Recorder> submit(LoadShedder s, int n) {
    List<Recorder> requests = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Recorder r = new Recorder();
      s.submit(Priority.of(1, i % Priority.COHORTS), r);
      requests.add(r);
    }
    return requests;
  }

  @Test
  void aBudgetBelowOneThreadIsRefusedNamingIt() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> new ConcurrencyBudget(0));
    assertTrue(e.getMessage().contains("threads"), e.getMessage());
  }

  @Test
  void aPoolOfNoKnownSizeCapsNothing() {
    LoadShedder s = LoadShedder.builder().timer(time).build();
    new ServerThreads().ranOnServerThread(s, "request", r -> 0);
    new ServerThreads().ranOnServerThread(s, "request", r -> {
      throw new IllegalStateException("not this server's request");
    });
    assertEquals(Integer.MAX_VALUE, s.concurrencyCap());
  }
}
