package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Permits released at the very moment their processing deadline passes, while the timer thread
 * fires their deadline hooks: each overrun must be counted once, and a hook must not run for a
 * permit that was already released when the hook was claimed.
 */
class DeadlineHookConcurrencyTest {

  @Test
  void aReleaseRacingTheDeadlineHookCountsTheOverrunOnce() throws Exception {
    int batch = 32;
    int rounds = 400;
    try (LoadShedder s = LoadShedder.builder()
        .limit(() -> Limits.fixed(batch))
        .rejector(Rejectors::none)
        .requestTimeout(Duration.ofMillis(2))
        // Holders run past these short timeouts under load: not the watchdog's test.
        .watchdogGrace(Duration.ofDays(1000))
        .build()) {
      AtomicInteger hooks = new AtomicInteger();
      AtomicReference<String> violation = new AtomicReference<>();
      for (int round = 0; round < rounds; round++) {
        List<Permit> permits = new ArrayList<>();
        for (int i = 0; i < batch; i++) {
          Recorder r = new Recorder();
          s.submit(0, r);
          Permit p = r.permit;
          assertTrue(p != null, "admitted at once below the limit");
          AtomicInteger fired = new AtomicInteger();
          p.onDeadline(() -> {
            hooks.incrementAndGet();
            if (fired.incrementAndGet() > 1) {
              violation.compareAndSet(null, "a hook ran twice");
            }
          });
          permits.add(p);
        }
        // Two threads release the batch as soon as each deadline has passed: the timer, due at
        // the same tick, fires hooks for the same permits at the same time.
        Thread[] releasers = new Thread[2];
        for (int t = 0; t < releasers.length; t++) {
          int first = t;
          releasers[t] = new Thread(() -> {
            for (int i = first; i < permits.size(); i += releasers.length) {
              Permit p = permits.get(i);
              while (s.clock().nanoTime() - p.deadlineNanos() <= 0) {
                Thread.onSpinWait();
              }
              if (!p.dropped()) {
                violation.compareAndSet(null, "a permit was released twice");
              }
            }
          });
          releasers[t].start();
        }
        for (Thread t : releasers) {
          t.join(TimeUnit.SECONDS.toMillis(30));
          assertFalse(t.isAlive());
        }
      }
      assertNull(violation.get());
      assertEquals(0, s.inflight());
      int total = batch * rounds;
      // Every permit was released after its deadline, so each overran it exactly once, whether
      // the hook or the release noticed first.
      assertEquals(total, s.snapshot().total(Snapshot.Counter.DEADLINE_MISSED),
          "hooks fired: " + hooks.get());
      assertTrue(hooks.get() <= total);
    }
  }
}
