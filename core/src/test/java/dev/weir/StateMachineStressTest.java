package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import dev.weir.internal.Credits;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.Test;

/**
 * The jcstress-like test of issue 17: many threads race every terminal transition of the same
 * requests (release, cancel, the timer task as queue timeout or deadline, onDeadline, the
 * watchdog's reclaim) and take and return credits, and the invariants are checked at the end.
 * Threads meet on published slots, spinning; nothing sleeps.
 */
class StateMachineStressTest {
  private static final int RACERS = 3;
  private static final int REQUESTS = 60_000;

  @Test
  void everyRequestEndsByExactlyOneTerminalTransition() throws Exception {
    try (LoadShedder s = LoadShedder.builder()
        .limit(() -> Limits.fixed(3))
        .rejector(Rejectors::none)
        .queueCapacity(REQUESTS)
        // Short enough that the real timer's queue timeouts, deadlines and watchdog join in.
        .requestTimeout(Duration.ofMillis(2))
        .watchdogGrace(Duration.ofMillis(1))
        .build()) {
      AtomicReferenceArray<Request> slots = new AtomicReferenceArray<>(REQUESTS);
      AtomicIntegerArray admittedCalls = new AtomicIntegerArray(REQUESTS);
      AtomicIntegerArray rejectedCalls = new AtomicIntegerArray(REQUESTS);
      AtomicIntegerArray releasesWon = new AtomicIntegerArray(REQUESTS);
      AtomicIntegerArray cancelsWon = new AtomicIntegerArray(REQUESTS);
      AtomicIntegerArray hooksRun = new AtomicIntegerArray(REQUESTS);
      AtomicReference<Throwable> failure = new AtomicReference<>();

      Thread[] racers = new Thread[RACERS];
      for (int t = 0; t < RACERS; t++) {
        racers[t] = new Thread(() -> {
          try {
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            for (int i = 0; i < REQUESTS; i++) {
              Request r;
              while ((r = slots.get(i)) == null) {
                Thread.onSpinWait();
              }
              int id = i;
              for (int k = 0; k < 2; k++) {
                switch (rnd.nextInt(5)) {
                  case 0:
                    if (r.release(Outcome.values()[rnd.nextInt(3)])) {
                      releasesWon.incrementAndGet(id);
                    }
                    break;
                  case 1:
                    if (r.cancel()) {
                      cancelsWon.incrementAndGet(id);
                    }
                    break;
                  case 2:
                    r.run(); // the timer task: a queue timeout while queued, else deadline/watchdog
                    break;
                  case 3:
                    r.onDeadline(() -> hooksRun.incrementAndGet(id));
                    break;
                  default:
                    r.admission.watchdog.reclaim(r, r.word()); // the watchdog, whatever the time
                    break;
                }
              }
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        });
        racers[t].start();
      }
      for (int i = 0; i < REQUESTS; i++) {
        int id = i;
        Ticket ticket = s.submit(Priority.of(i % Priority.TIERS, i & 127),
            new AdmissionCallback() {
              @Override
              public void onAdmitted(Permit p) {
                admittedCalls.incrementAndGet(id);
              }

              @Override
              public void onRejected(RejectReason reason) {
                rejectedCalls.incrementAndGet(id);
              }
            });
        slots.set(i, (Request) ticket);
      }
      for (Thread t : racers) {
        t.join(TimeUnit.MINUTES.toMillis(2));
        assertFalse(t.isAlive());
      }
      assertNull(failure.get());
      // End whatever is left: release every permit, cancel every waiter. Each wins at most once.
      for (int i = 0; i < REQUESTS; i++) {
        Request r = slots.get(i);
        if (r.release(Outcome.DROPPED)) {
          releasesWon.incrementAndGet(i);
        }
      }
      for (int i = 0; i < REQUESTS; i++) {
        Request r = slots.get(i);
        if (r.cancel()) {
          cancelsWon.incrementAndGet(i);
        }
        if (r.release(Outcome.DROPPED)) {
          releasesWon.incrementAndGet(i);
        }
      }
      s.close(); // stops the watchdog: from here nothing is reclaimed behind our back

      long admitted = 0;
      long released = 0;
      for (int i = 0; i < REQUESTS; i++) {
        Request r = slots.get(i);
        int calls = admittedCalls.get(i) + rejectedCalls.get(i);
        assertEquals(1, calls, "request " + i + " heard " + calls + " answers");
        assertTrue(releasesWon.get(i) <= 1, "request " + i + " released twice");
        assertTrue(cancelsWon.get(i) <= 1, "request " + i + " cancelled twice");
        assertTrue(hooksRun.get(i) <= 1, "request " + i + "'s hook ran twice");
        if (admittedCalls.get(i) == 1) {
          admitted++;
          assertEquals(Request.RELEASED, r.phase(), "request " + i);
          assertEquals(0, cancelsWon.get(i), "request " + i + " admitted and cancelled");
          released += releasesWon.get(i);
        } else {
          assertEquals(Request.REJECTED, r.phase(), "request " + i);
          assertEquals(0, releasesWon.get(i), "request " + i + " rejected and released");
          assertEquals(0, hooksRun.get(i), "request " + i + " rejected and its hook ran");
        }
      }
      Snapshot snap = s.snapshot();
      long reclaimed = snap.total(Snapshot.Counter.RECLAIMED);
      assertEquals(admitted, released + reclaimed,
          "each admitted permit ends by one release or one reclaim");
      assertEquals(admitted, snap.total(Snapshot.Counter.ADMITTED));
      assertEquals(admitted, snap.total(Snapshot.Counter.SUCCEEDED)
          + snap.total(Snapshot.Counter.FAILED) + snap.total(Snapshot.Counter.DROPPED));
      assertTrue(reclaimed <= snap.total(Snapshot.Counter.DROPPED));
      assertEquals(REQUESTS - admitted, snap.total(Snapshot.Counter.CANCELLED)
          + snap.total(Snapshot.Counter.QUEUE_TIMEOUT) + snap.total(Snapshot.Counter.SHUTTING_DOWN)
          + snap.total(Snapshot.Counter.QUEUE_FULL) + snap.total(Snapshot.Counter.SHED));
      assertEquals(0, s.inflight(), "every credit came back");
      assertEquals(0, s.queued());
      s.credits().drain();
      assertEquals(s.limit(), s.credits().pooled(), "credits conserved");
    }
  }

  @Test
  void creditsAreConservedAndNeverOverHeldUnderRacingTakesReturnsAndCuts() throws Exception {
    int threads = 4;
    int cycles = 300_000;
    Credits credits = new Credits(8);
    AtomicLong held = new AtomicLong();
    AtomicReference<String> violation = new AtomicReference<>();
    int[] limits = {8, 3, 16, 1, 8};
    Thread[] workers = new Thread[threads];
    for (int t = 0; t < threads; t++) {
      workers[t] = new Thread(() -> {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        int mine = 0;
        for (int c = 0; c < cycles; c++) {
          if (mine > 0 && (rnd.nextBoolean() || mine > 2)) {
            held.decrementAndGet();
            mine--;
            credits.release(rnd.nextBoolean());
          } else if (credits.tryAcquire() != Credits.NONE) {
            mine++;
            if (held.incrementAndGet() > 16) {
              violation.compareAndSet(null, "more held than the largest limit");
            }
          }
          if (credits.held() < 0) {
            violation.compareAndSet(null, "held went negative");
          }
        }
        while (mine-- > 0) {
          held.decrementAndGet();
          credits.release(true);
        }
      });
      workers[t].start();
    }
    // The controlling thread cuts and raises the limit and drains, as the tick does.
    int round = 0;
    while (anyAlive(workers)) {
      credits.setLimit(limits[round++ % limits.length]);
      credits.drain();
      credits.takePeak(credits.held());
      Thread.onSpinWait();
    }
    for (Thread t : workers) {
      t.join();
    }
    assertNull(violation.get());
    assertEquals(0, held.get());
    credits.setLimit(8);
    credits.drain();
    assertEquals(0, credits.held(), "every credit is back");
    assertEquals(8, credits.pooled(), "conserved: the pool holds the limit");
    assertEquals(0, credits.cached());
  }

  private static boolean anyAlive(Thread[] threads) {
    for (Thread t : threads) {
      if (t.isAlive()) {
        return true;
      }
    }
    return false;
  }
}
