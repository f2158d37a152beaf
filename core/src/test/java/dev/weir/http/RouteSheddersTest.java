package dev.weir.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.AdmissionCallback;
import dev.weir.LoadShedder;
import dev.weir.Outcome;
import dev.weir.Permit;
import dev.weir.Priority;
import dev.weir.RejectReason;
import dev.weir.VirtualTime;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Route shedders' retirement and closing. The idle timeout is a day, so the sweep on the shared
 * timer never runs during a test; each test calls {@link RouteShedders#sweep} with chosen times.
 * "Meters" are a set of names: bound on create, removed on retire, as the adapters wire
 * Micrometer.
 */
class RouteSheddersTest {
  private static final long DAY = TimeUnit.DAYS.toNanos(1);
  private static final long WAIT_SECONDS = 10;

  private final VirtualTime time = new VirtualTime();
  private final LoadShedder.Builder template = LoadShedder.builder().timer(time)
      .limit(() -> Limits.fixed(4)).rejector(Rejectors::none).validate();
  private final Set<String> meters = ConcurrentHashMap.newKeySet();

  private RouteShedders<String> routes(Consumer<LoadShedder> onCreate, Consumer<String> onRetire) {
    // Two slots: one route takes half of them, so that idle routes age out (see below).
    return new RouteShedders<>(template, k -> k, 2, DAY, onCreate, onRetire);
  }

  private RouteShedders<String> metered(Consumer<String> beforeRemoval) {
    return routes(s -> meters.add(s.name()), name -> {
      beforeRemoval.accept(name);
      meters.remove(name);
    });
  }

  /** Retires route {@code a}: seen idle at 0, gone a day later. */
  private static void retire(RouteShedders<String> r) {
    r.sweep(0);
    r.sweep(DAY);
  }

  private static RejectReason submit(LoadShedder s) {
    RejectReason[] out = new RejectReason[1];
    s.submit(Priority.of(2, 0), new AdmissionCallback() {
      @Override
      public void onAdmitted(Permit p) {
        p.release(Outcome.SUCCESS);
      }

      @Override
      public void onRejected(RejectReason reason) {
        out[0] = reason;
      }
    });
    return out[0];
  }

  private static void await(CountDownLatch latch) {
    try {
      assertTrue(latch.await(WAIT_SECONDS, TimeUnit.SECONDS));
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void aShedderLookedUpJustBeforeItsRouteRetiresServesUntilTheNextSweep() {
    RouteShedders<String> r = routes(null, null);
    LoadShedder a = r.forRequest("a");
    retire(r);
    assertFalse(a.isClosed(), "retired, closed only one sweep later");
    assertEquals(null, submit(a), "still admits");
    LoadShedder again = r.forRequest("a");
    assertNotSame(a, again, "the route is created anew");
    r.sweep(2 * DAY);
    assertTrue(a.isClosed());
    assertFalse(again.isClosed());
    r.close();
    assertTrue(again.isClosed());
  }

  /**
   * Slots age out only while they are wanted: a route idle while more than half the slots are
   * free keeps its shedder, and with it what its limit learned (a fresh one starts low and
   * sheds while it learns); once half are taken, idle routes give theirs back.
   */
  @Test
  void anIdleRouteKeepsItsShedderWhileMostSlotsAreFree() {
    RouteShedders<String> r = new RouteShedders<>(template, k -> k, 8, DAY, null, null);
    LoadShedder a = r.forRequest("a");
    retire(r);
    r.sweep(2 * DAY);
    assertSame(a, r.forRequest("a"), "one route of eight slots stays, idle or not");
    assertFalse(a.isClosed());
    for (String k : List.of("b", "c", "d")) {
      r.forRequest(k);
    }
    r.sweep(3 * DAY); // four of eight taken: "a", idle since 0, gives its slot back
    assertFalse(r.view().containsKey("a"));
    assertTrue(r.view().containsKey("b"), "idle for less than the timeout");
    r.sweep(4 * DAY);
    assertTrue(a.isClosed());
    assertEquals(Set.of("b", "c", "d"), r.view().keySet(), "three of eight taken: they stay");
    r.close();
  }

  @Test
  void anOnRetireThatThrowsStillClosesTheRetiredShedder() {
    RouteShedders<String> r = routes(null, name -> {
      throw new IllegalStateException("the registry is down");
    });
    LoadShedder a = r.forRequest("a");
    LoadShedder b = r.forRequest("b");
    retire(r);
    assertFalse(r.view().containsKey("a"));
    assertFalse(r.view().containsKey("b"), "one throw does not stop the sweep");
    r.sweep(2 * DAY);
    assertTrue(a.isClosed());
    assertTrue(b.isClosed());
    r.close();
  }

  @Test
  void closeWhileARouteRetiresStillClosesItsShedder() throws InterruptedException {
    CountDownLatch retiring = new CountDownLatch(1);
    CountDownLatch closed = new CountDownLatch(1);
    RouteShedders<String> r = routes(null, name -> {
      if (Thread.currentThread().getName().equals("sweeper")) { // close() retires it too
        retiring.countDown();
        await(closed);
      }
    });
    LoadShedder a = r.forRequest("a");
    r.sweep(0);
    Thread sweeper = new Thread(() -> r.sweep(DAY), "sweeper");
    sweeper.start();
    await(retiring); // the sweep has taken the route out of the map, not yet closed it
    r.close(); // the adapter stops, on another thread
    closed.countDown();
    sweeper.join();
    assertTrue(a.isClosed(), "no shedder outlives close()");
  }

  @Test
  void aRouteCreatedAnewWhileItsOldShedderRetiresKeepsItsMeters() throws InterruptedException {
    CountDownLatch retiring = new CountDownLatch(1);
    CountDownLatch looked = new CountDownLatch(1);
    RouteShedders<String> r = metered(name -> {
      retiring.countDown();
      await(looked);
    });
    LoadShedder old = r.forRequest("a");
    r.sweep(0);
    Thread sweeper = new Thread(() -> r.sweep(DAY), "sweeper");
    sweeper.start();
    await(retiring);
    assertSame(old, r.forRequest("a"), "while it retires, a request still finds the old one");
    looked.countDown();
    sweeper.join();
    LoadShedder fresh = r.forRequest("a");
    assertNotSame(old, fresh);
    assertTrue(meters.contains("a"), "the new shedder's meters, published after the old ones went");
    r.close();
  }

  @Test
  void anOnCreateThatThrowsForTheOverflowShedderLeavesItServing() {
    List<LoadShedder> built = new ArrayList<>();
    RouteShedders<String> r = new RouteShedders<>(template, k -> null, 8, DAY, s -> {
      built.add(s);
      throw new IllegalStateException("the registry refuses");
    }, null);
    LoadShedder overflow = r.forRequest("anything");
    assertSame(built.get(0), overflow);
    assertEquals(null, submit(overflow), "serves without its meters");
    r.close();
    assertTrue(overflow.isClosed());
  }

  @Test
  void aNullBlankOrThrowingRouteKeyIsServedByTheOverflowShedderAndGetsNoSlot() {
    RouteShedders<String> r = new RouteShedders<>(template, k -> {
      if (k.equals("throws")) {
        throw new IllegalStateException("a route key function that fails");
      }
      return k.equals("null") ? null : k;
    }, 8, DAY, null, null);
    LoadShedder a = r.forRequest("a");
    for (String key : List.of("null", "", " ", "\t \n", "throws")) {
      for (int i = 0; i < 2; i++) { // a second look finds no slot made by the first
        LoadShedder s = r.forRequest(key);
        assertNotSame(a, s, "'" + key + "'");
        assertEquals(RouteShedders.OVERFLOW_KEY, s.name(), "'" + key + "'");
      }
    }
    assertEquals(Set.of("a", RouteShedders.OVERFLOW_KEY), r.view().keySet());
    assertSame(a, r.forRequest("a"));
    r.close();
  }

  @Test
  void closeRetiresEveryShedderSoThatItsMetersGo() {
    RouteShedders<String> r = metered(name -> { });
    r.forRequest("a");
    r.forRequest("b");
    assertEquals(Set.of(RouteShedders.OVERFLOW_KEY, "a", "b"), meters);
    r.close();
    assertEquals(Set.of(), meters);
    assertTrue(r.forRequest("c").isClosed(), "a route created after close() is closed");
    assertEquals(Set.of(), meters, "and its meters are gone too");
  }
  /**
   * A route key spelled like the overflow shedder's name must not make a second shedder of that
   * name: its meters would be the overflow shedder's (a registry keeps the first of two alike),
   * {@link RouteShedders#view()} would show one of the two under that key, and its retirement
   * would remove the overflow shedder's meters while the overflow shedder still serves.
   */
  @Test
  void aRouteKeySpelledLikeTheOverflowShedderIsTheOverflowShedder() {
    RouteShedders<String> r = metered(name -> { });
    LoadShedder overflow = r.forRequest(null);
    assertEquals(RouteShedders.OVERFLOW_KEY, overflow.name());
    assertSame(overflow, r.forRequest(RouteShedders.OVERFLOW_KEY));
    retire(r);
    assertTrue(meters.contains(RouteShedders.OVERFLOW_KEY), "the overflow shedder's meters stay");
    assertFalse(overflow.isClosed());
    assertSame(overflow, r.view().get(RouteShedders.OVERFLOW_KEY));
    r.close();
  }
}
