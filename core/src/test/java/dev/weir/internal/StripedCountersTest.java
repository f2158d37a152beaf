package dev.weir.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class StripedCountersTest {

  @Test
  void concurrentAddsAreAllCountedAndSlotsStayApart() throws Exception {
    int slots = 50;
    StripedCounters c = new StripedCounters(slots);
    int threads = 4;
    int perThread = 250_000;
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread th = new Thread(() -> {
        try {
          start.await();
        } catch (InterruptedException e) {
          return;
        }
        for (int i = 0; i < perThread; i++) {
          c.increment(0);
          int stripe = c.stripe();
          c.add(stripe, 1, 1);
          c.add(stripe, slots - 1, 1);
          c.add(7, 3);
        }
      });
      workers.add(th);
      th.start();
    }
    start.countDown();
    for (Thread th : workers) {
      th.join(TimeUnit.SECONDS.toMillis(60));
      assertFalse(th.isAlive());
    }
    long n = (long) threads * perThread;
    assertEquals(n, c.sum(0));
    assertEquals(n, c.sum(1));
    assertEquals(n, c.sum(slots - 1));
    assertEquals(3 * n, c.sum(7));
    for (int s = 0; s < slots; s++) {
      if (s != 0 && s != 1 && s != 7 && s != slots - 1) {
        assertEquals(0, c.sum(s), "slot " + s + " was never written");
      }
    }
    assertEquals(slots, c.slots());
  }

  @Test
  void everyStripeCountIsSummed() {
    for (int stripes : new int[] {1, 2, 8, 64}) {
      StripedCounters c = new StripedCounters(3, stripes);
      c.add(2, Long.MAX_VALUE / 4);
      c.add(2, -5);
      assertEquals(Long.MAX_VALUE / 4 - 5, c.sum(2));
      assertEquals(0, c.sum(0));
    }
  }

  @Test
  void stripesMustBeAPowerOfTwo() {
    assertThrows(IllegalArgumentException.class, () -> new StripedCounters(4, 3));
    assertThrows(IllegalArgumentException.class, () -> new StripedCounters(4, 0));
  }
}
