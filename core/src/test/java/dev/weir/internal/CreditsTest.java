package dev.weir.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class CreditsTest {

  @Test
  void handsOutExactlyTheLimitAndTakesItBack() {
    Credits c = new Credits(3);
    for (int i = 0; i < 3; i++) {
      assertEquals(Credits.TAKEN, c.tryAcquire());
    }
    assertEquals(Credits.NONE, c.tryAcquire());
    assertEquals(3, c.held());
    c.release(true);
    assertEquals(2, c.held());
    assertEquals(Credits.TAKEN, c.tryAcquire());
    assertEquals(Credits.NONE, c.tryAcquire());
    for (int i = 0; i < 3; i++) {
      c.release(true);
    }
    assertEquals(0, c.held());
    assertEquals(3, c.pooled() + c.cached());
  }

  @Test
  void cachesOnlyWhileThePoolIsPlentifulAndTheCallerAllows() {
    Credits c = new Credits(10);
    c.tryAcquire();
    c.tryAcquire();
    c.release(false);
    assertEquals(0, c.cached(), "the caller said no");
    c.release(true);
    assertEquals(1, c.cached(), "9 of 10 in the pool: plentiful");
    assertEquals(Credits.TAKEN, c.tryAcquire());
    assertEquals(0, c.cached(), "the own cache is taken from first");
    assertEquals(9, c.pooled());

    // Six held leaves 4 in the pool, not more than half: releases go to the pool.
    Credits scarce = new Credits(10);
    for (int i = 0; i < 6; i++) {
      scarce.tryAcquire();
    }
    scarce.release(true);
    scarce.release(true);
    assertEquals(0, scarce.cached());
    assertEquals(6, scarce.pooled());
    scarce.release(true);
    assertEquals(1, scarce.cached(), "6 of 10 in the pool: plentiful again");
  }

  @Test
  void aCacheHoldsAtMostItsCapacity() {
    Credits c = new Credits(100);
    for (int i = 0; i < 5; i++) {
      c.tryAcquire();
    }
    for (int i = 0; i < 5; i++) {
      c.release(true);
    }
    assertEquals(Credits.CACHE_CAPACITY, c.cached());
    assertEquals(100 - Credits.CACHE_CAPACITY, c.pooled());
  }

  @Test
  void anEmptyPoolStealsFromAnotherStripesCache() throws Exception {
    Credits c = new Credits(4, 8);
    // Take all four first: the peak is 4, so no take below needs to drain the caches to measure it.
    for (int i = 0; i < 4; i++) {
      c.tryAcquire();
    }
    for (int i = 0; i < 4; i++) {
      c.release(false);
    }
    onOtherStripe(8, () -> {
      assertEquals(Credits.TAKEN, c.tryAcquire());
      c.release(true);
    });
    assertEquals(1, c.cached(), "the other thread kept its credit");
    assertEquals(3, c.pooled());
    for (int i = 0; i < 3; i++) {
      assertEquals(Credits.TAKEN, c.tryAcquire(), "from the pool");
    }
    assertEquals(Credits.TAKEN, c.tryAcquire(), "stolen from the other stripe");
    assertEquals(0, c.cached());
    assertEquals(Credits.NONE, c.tryAcquire());
    assertEquals(4, c.held());
  }

  @Test
  void aCutIsRepaidBeforeAnythingIsHandedOutAgainAndDrainsTheCaches() {
    Credits c = new Credits(10);
    for (int i = 0; i < 4; i++) {
      c.tryAcquire();
    }
    c.release(true);
    c.release(true);
    assertEquals(2, c.cached());
    c.setLimit(1);
    assertEquals(0, c.cached(), "a cut drains the caches");
    assertEquals(-1, c.pooled(), "2 held against a limit of 1");
    assertEquals(2, c.held());
    assertEquals(Credits.NONE, c.tryAcquire());
    c.release(true);
    assertEquals(0, c.cached(), "a release repays the debt first");
    assertEquals(Credits.NONE, c.tryAcquire());
    c.release(true);
    assertEquals(Credits.TAKEN, c.tryAcquire());
    assertEquals(Credits.NONE, c.tryAcquire());
    c.setLimit(3);
    assertEquals(Credits.TAKEN, c.tryAcquire());
    assertEquals(Credits.TAKEN, c.tryAcquire());
    assertEquals(Credits.NONE, c.tryAcquire());
    assertEquals(3, c.limit());
    assertThrows(IllegalArgumentException.class, () -> c.setLimit(-1));
  }

  @Test
  void thePeakIsHighByAtMostTheCachedCreditsBelowHalfTheLimitAndExactFromHalfUp()
      throws Exception {
    Credits c = new Credits(8, 8);
    // Another thread leaves two credits in its cache while the pool is plentiful.
    onOtherStripe(8, () -> {
      c.tryAcquire();
      c.tryAcquire();
      c.release(true);
      c.release(true);
    });
    assertEquals(2, c.cached());
    assertEquals(Credits.TAKEN, c.tryAcquire(), "pool 6 -> 5");
    assertEquals(3, c.takePeak(c.held()), "one held, plus the two cached elsewhere");
    assertEquals(Credits.TAKEN_AND_DRAINED, c.tryAcquire(), "pool 5 -> 4: half the limit");
    assertEquals(0, c.cached(), "the cached credits are in the pool now");
    assertEquals(6, c.pooled());
    assertEquals(2, c.takePeak(c.held()), "exact");
    c.tryAcquire();
    c.tryAcquire();
    assertEquals(4, c.takePeak(c.held()));
    assertEquals(4, c.pooled());
  }

  /**
   * On one thread the credits decide and measure exactly as a single counter would, whatever the
   * limit does: a take succeeds if and only if fewer than the limit are held, and the peak is the
   * most held since the last look.
   */
  @Test
  void onOneThreadEverythingIsAsExactAsASingleCounter() {
    SplittableRandom rnd = new SplittableRandom(42);
    for (int run = 0; run < 200; run++) {
      int limit = 1 + rnd.nextInt(20);
      Credits c = new Credits(limit);
      int held = 0;
      int peak = 0;
      for (int step = 0; step < 2_000; step++) {
        int op = rnd.nextInt(100);
        if (op < 45) {
          int taken = c.tryAcquire();
          assertEquals(held < limit, taken != Credits.NONE, "take with " + held + "/" + limit);
          assertTrue(taken != Credits.TAKEN_AND_DRAINED, "one thread has nothing to drain");
          if (taken != Credits.NONE) {
            held++;
            peak = Math.max(peak, held);
          }
        } else if (op < 90) {
          if (held > 0) {
            c.release(rnd.nextBoolean());
            held--;
          }
        } else if (op < 95) {
          limit = 1 + rnd.nextInt(20);
          c.setLimit(limit);
        } else {
          c.drain();
          assertEquals(held, c.held());
          assertEquals(peak, c.takePeak(c.held()), "run " + run + ", step " + step);
          peak = held;
        }
        assertEquals(held, c.held());
        assertEquals(limit, c.pooled() + c.cached() + held, "credits are conserved");
      }
    }
  }

  /**
   * Threads take and release while another cuts and raises the limit: never more held than the
   * largest limit ever set, and afterwards every credit is back.
   */
  @Test
  void concurrentTakesReleasesAndLimitChangesConserveTheCredits() throws Exception {
    int max = 12;
    Credits c = new Credits(max);
    AtomicInteger held = new AtomicInteger();
    AtomicInteger maxHeld = new AtomicInteger();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<String> violation = new AtomicReference<>();
    Thread changer = new Thread(() -> {
      ThreadLocalRandom rnd = ThreadLocalRandom.current();
      while (!stop.get()) {
        c.setLimit(1 + rnd.nextInt(max));
        if (rnd.nextInt(4) == 0) {
          c.drain();
        }
        Thread.onSpinWait();
      }
    }, "credits-changer");
    List<Thread> workers = startWorkers(8, 200_000, rnd -> {
      if (c.tryAcquire() == Credits.NONE) {
        return;
      }
      int h = held.incrementAndGet();
      maxHeld.accumulateAndGet(h, Math::max);
      if (h > max) {
        violation.compareAndSet(null, h + " held, the largest limit is " + max);
      }
      held.decrementAndGet();
      c.release(rnd.nextInt(8) != 0);
    });
    changer.start();
    joinAll(workers);
    stop.set(true);
    changer.join(TimeUnit.SECONDS.toMillis(10));
    assertFalse(changer.isAlive());
    assertNull(violation.get());
    assertTrue(maxHeld.get() > 1, "threads overlapped: " + maxHeld.get());
    assertEquals(0, c.held(), c.toString());
    assertEquals(c.limit(), c.pooled() + c.cached(), c.toString());
    c.drain();
    assertEquals(c.limit(), c.pooled());
  }

  /** With a fixed limit the peak is never below the most permits that were held at once. */
  @Test
  void concurrentlyThePeakIsNeverLow() throws Exception {
    for (int limit : new int[] {3, 16, 100}) {
      Credits c = new Credits(limit);
      AtomicInteger held = new AtomicInteger();
      AtomicInteger maxHeld = new AtomicInteger();
      List<Thread> workers = startWorkers(6, 50_000, rnd -> {
        if (c.tryAcquire() == Credits.NONE) {
          return;
        }
        // Counted after the take and uncounted before the release: never above the true count.
        maxHeld.accumulateAndGet(held.incrementAndGet(), Math::max);
        if (rnd.nextInt(4) == 0 && c.tryAcquire() != Credits.NONE) {
          maxHeld.accumulateAndGet(held.incrementAndGet(), Math::max);
          held.decrementAndGet();
          c.release(true);
        }
        held.decrementAndGet();
        c.release(true);
      });
      joinAll(workers);
      c.drain();
      int peak = c.takePeak(c.held());
      assertTrue(peak >= maxHeld.get(), "limit " + limit + ": peak " + peak + " < " + maxHeld);
      assertTrue(peak <= limit, "limit " + limit + ": peak " + peak);
      assertEquals(limit, c.pooled());
    }
  }

  @Test
  void rejectsBadArguments() {
    assertThrows(IllegalArgumentException.class, () -> new Credits(-1));
    assertThrows(IllegalArgumentException.class, () -> new Credits(1, 3));
    assertEquals(0, new Credits(0).held());
    assertEquals(Credits.NONE, new Credits(0).tryAcquire());
  }

  // ---------------------------------------------------------------------------------- helpers

  /** Runs {@code task} on a new thread whose stripe, out of {@code stripes}, is not this one's. */
  private static void onOtherStripe(int stripes, Runnable task) throws Exception {
    int mine = StripedCounters.probe() & (stripes - 1);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    for (int attempt = 0; attempt < 1_000; attempt++) {
      AtomicBoolean ran = new AtomicBoolean();
      Thread t = new Thread(() -> {
        if ((StripedCounters.probe() & (stripes - 1)) != mine) {
          ran.set(true);
          try {
            task.run();
          } catch (Throwable e) {
            failure.set(e);
          }
        }
      });
      t.start();
      t.join();
      if (ran.get()) {
        if (failure.get() != null) {
          throw new AssertionError(failure.get());
        }
        return;
      }
    }
    throw new AssertionError("no thread landed on another stripe");
  }

  private static List<Thread> startWorkers(int threads, int cycles,
      Consumer<ThreadLocalRandom> cycle) {
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread th = new Thread(() -> {
        try {
          start.await();
        } catch (InterruptedException e) {
          return;
        }
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        for (int i = 0; i < cycles; i++) {
          cycle.accept(rnd);
        }
      }, "credits-" + t);
      workers.add(th);
      th.start();
    }
    start.countDown();
    return workers;
  }

  private static void joinAll(List<Thread> workers) throws InterruptedException {
    for (Thread th : workers) {
      th.join(TimeUnit.SECONDS.toMillis(60));
      assertFalse(th.isAlive(), th.getName() + " is stuck");
    }
  }
}
