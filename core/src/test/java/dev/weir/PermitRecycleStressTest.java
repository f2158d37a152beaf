package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Recycled permits under races, on the real timer: workers submit, hold, release and recycle, so
 * their threads' requests live many lives, some queued, some with deadline hooks, some reclaimed
 * by the real watchdog; meanwhile a stale reader, like a sweep that read a slot a moment too
 * early, tries to reclaim each life it saw once that life has ended. Nothing sleeps: threads spin
 * on published fields. Checked at the end: no stale reclaim ever succeeded, every submission heard
 * exactly one answer, every admitted life ended by exactly one release or reclaim, and the
 * credits are all back.
 */
class PermitRecycleStressTest {
  private static final int WORKERS = 3;
  private static final int CYCLES = 60_000;

  /** What a worker publishes about its current life, for the stale reader. */
  private static final class Lives {
    volatile Request current;
    /** The number of the life in {@link #current}, written after it was admitted. */
    volatile long admitted;
    /** The number of the last life that ended, written after its release. */
    volatile long ended;
    volatile boolean done;
  }

  /** A callback that publishes its answer; a worker spins on it. */
  private static final class Answer implements AdmissionCallback {
    volatile Permit permit;
    volatile RejectReason reason;
    final AtomicLong calls;

    Answer(AtomicLong calls) {
      this.calls = calls;
    }

    @Override
    public void onAdmitted(Permit p) {
      calls.incrementAndGet();
      permit = p;
    }

    @Override
    public void onRejected(RejectReason r) {
      calls.incrementAndGet();
      reason = r;
    }
  }

  private static boolean allDone(Lives[] lives) {
    for (Lives l : lives) {
      if (!l.done) {
        return false;
      }
    }
    return true;
  }

  @Test
  void aRecycledPermitIsNeverActedOnThroughAnEarlierLife() throws Exception {
    try (LoadShedder s = LoadShedder.builder()
        .limit(() -> Limits.fixed(2))
        .rejector(Rejectors::none)
        .queueCapacity(64)
        // Short enough that the real watchdog reclaims the lives held longest.
        .requestTimeout(Duration.ofMillis(3))
        .watchdogGrace(Duration.ofMillis(1))
        .controlInterval(Duration.ofMillis(1))
        .build()) {
      Lives[] lives = new Lives[WORKERS];
      AtomicLong answers = new AtomicLong();
      AtomicLong admitted = new AtomicLong();
      AtomicLong releasesWon = new AtomicLong();
      AtomicLong releasesLost = new AtomicLong();
      AtomicLong reused = new AtomicLong();
      AtomicLong staleTries = new AtomicLong();
      AtomicLong staleWins = new AtomicLong();
      AtomicReference<Throwable> failure = new AtomicReference<>();

      Thread[] workers = new Thread[WORKERS];
      for (int k = 0; k < WORKERS; k++) {
        Lives mine = new Lives();
        lives[k] = mine;
        workers[k] = new Thread(() -> {
          try {
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            Permit last = null;
            for (long life = 1; life <= CYCLES; life++) {
              Answer a = new Answer(answers);
              s.submit(rnd.nextInt(Priority.LEVELS), a);
              Permit p;
              while ((p = a.permit) == null && a.reason == null) {
                Thread.onSpinWait();
              }
              if (p == null) {
                continue; // timed out of the queue
              }
              admitted.incrementAndGet();
              if (p == last) {
                reused.incrementAndGet();
              }
              mine.current = (Request) p;
              mine.admitted = life;
              if (rnd.nextInt(8) == 0) {
                p.onDeadline(() -> { });
              }
              int hold = rnd.nextInt(300) == 0 ? 200_000 : rnd.nextInt(200);
              for (int i = 0; i < hold; i++) {
                Thread.onSpinWait();
              }
              if (p.release(Outcome.values()[rnd.nextInt(3)])) {
                releasesWon.incrementAndGet();
                p.recycle();
              } else {
                releasesLost.incrementAndGet();
              }
              last = p;
              mine.ended = life;
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          } finally {
            mine.done = true;
          }
        });
      }

      Thread stale = new Thread(() -> {
        try {
          for (int round = 0; ; round++) {
            Lives w = lives[round % WORKERS];
            if (allDone(lives)) {
              return;
            }
            long life = w.admitted;
            Request r = w.current;
            if (r == null) {
              continue;
            }
            int word = r.word();
            // If the life had not ended after the word was read, the word is that life's.
            if (w.ended >= life || Request.phaseOf(word) != Request.ADMITTED) {
              continue;
            }
            while (w.ended < life && !w.done) {
              Thread.onSpinWait();
            }
            staleTries.incrementAndGet();
            if (r.admission.watchdog.reclaim(r, word)) {
              staleWins.incrementAndGet();
            }
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      });
      for (Thread t : workers) {
        t.start();
      }
      stale.start();
      for (Thread t : workers) {
        t.join(TimeUnit.MINUTES.toMillis(2));
        assertFalse(t.isAlive());
      }
      stale.join(TimeUnit.MINUTES.toMillis(1));
      assertFalse(stale.isAlive());
      assertNull(failure.get());

      assertEquals(0, staleWins.get(), "a stale reclaim hit a later life");
      assertTrue(staleTries.get() > 1000, "the stale reader raced often: " + staleTries.get());
      assertTrue(reused.get() > CYCLES / 10, "permits were reused: " + reused.get());
      assertEquals((long) WORKERS * CYCLES, answers.get(), "one answer per submission");
      Snapshot snap = s.snapshot();
      long reclaimed = snap.total(Snapshot.Counter.RECLAIMED);
      assertTrue(reclaimed > 0, "the watchdog raced too");
      assertEquals(admitted.get(), snap.total(Snapshot.Counter.ADMITTED));
      assertEquals(admitted.get(), releasesWon.get() + releasesLost.get());
      assertEquals(releasesLost.get(), reclaimed, "a lost release is exactly a reclaim");
      assertEquals(admitted.get(), snap.total(Snapshot.Counter.SUCCEEDED)
          + snap.total(Snapshot.Counter.FAILED) + snap.total(Snapshot.Counter.DROPPED));
      assertEquals(0, s.inflight(), "every credit came back");
      assertEquals(0, s.queued());
      s.credits().drain();
      assertEquals(s.limit(), s.credits().pooled(), "credits conserved");
    }
  }
}
