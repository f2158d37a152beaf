package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The permit watchdog, in virtual time. */
class WatchdogTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  private final VirtualTime time = new VirtualTime();

  /** Request timeout 1 s (so the default grace is 1 s), queue timeout 1 s, a fixed limit. */
  private LoadShedder.Builder builder(int limit) {
    return LoadShedder.builder()
        .timer(time)
        .limit(() -> Limits.fixed(limit))
        .rejector(Rejectors::none)
        .requestTimeout(Duration.ofSeconds(1))
        .queueTimeout(Duration.ofSeconds(1))
        .queueCapacity(100);
  }

  private static long count(LoadShedder s, Snapshot.Counter c) {
    return s.snapshot().total(c);
  }

  @Test
  void aNeverReleasedPermitIsReclaimedAtItsDeadlinePlusTheDefaultGrace() {
    LoadShedder s = builder(1).build();
    Recorder stuck = new Recorder();
    s.submit(0, stuck);
    time.advanceTo(2000 * MS - 1);
    assertEquals(1, s.inflight(), "held until the deadline (1 s) plus the grace (1 s)");
    assertFalse(stuck.permit.isReleased());
    time.advanceTo(2000 * MS);
    assertEquals(0, s.inflight());
    assertTrue(stuck.permit.isReleased());
    assertEquals(1, count(s, Snapshot.Counter.RECLAIMED));
    assertEquals(1, count(s, Snapshot.Counter.DROPPED));
  }

  @Test
  void aDeadlineHookThatThrowsStillLeavesEveryStuckPermitToTheWatchdog() {
    // One thread: 16 permits take the watchlist's slots, the rest are watched by timer entries,
    // the same entries that run the deadline hooks.
    int n = 40;
    LoadShedder s = builder(n).build();
    for (int i = 0; i < n; i++) {
      Recorder r = new Recorder();
      s.submit(Priority.of(1, 0), r);
      r.permit.onDeadline(() -> {
        throw new IllegalStateException("the hook failed");
      });
    }
    int thrown = 0;
    for (;;) {
      try {
        time.advanceTo(60_000 * MS); // the system timer logs a task's throw and goes on
        break;
      } catch (IllegalStateException e) {
        thrown++;
      }
    }
    assertEquals(n, thrown, "every hook ran once");
    assertEquals(0, s.inflight(), "every stuck permit reclaimed after its deadline and grace");
    assertEquals(n, count(s, Snapshot.Counter.RECLAIMED));
  }

  @Test
  void theReclaimedPermitGoesToTheNextQueuedRequestAndALateReleaseCountsNothing() {
    LoadShedder s = builder(1).watchdogGrace(Duration.ofMillis(200)).build();
    Recorder stuck = new Recorder();
    s.submit(0, stuck);
    time.advanceTo(900 * MS);
    Recorder waiting = new Recorder();
    s.submit(0, waiting);
    assertEquals(1, s.queued());
    time.advanceTo(1200 * MS - 1);
    assertNull(waiting.permit);
    time.advanceTo(1200 * MS);
    assertEquals(0, s.queued());
    assertTrue(waiting.permit != null, "admitted into the reclaimed permit");
    assertEquals(300 * MS, waiting.permit.queueWaitNanos());
    assertEquals(1, s.inflight());

    assertFalse(stuck.permit.success(), "the late release loses to the watchdog");
    assertFalse(stuck.permit.dropped());
    assertEquals(1, s.inflight(), "the late release gave nothing back");
    assertEquals(1, count(s, Snapshot.Counter.DROPPED));
    assertEquals(0, count(s, Snapshot.Counter.SUCCEEDED));
    assertEquals(1, count(s, Snapshot.Counter.RECLAIMED));

    assertTrue(waiting.permit.success());
    assertEquals(0, s.inflight());
    time.advanceTo(10_000 * MS);
    assertEquals(1, count(s, Snapshot.Counter.RECLAIMED), "a released permit is not reclaimed");
    assertEquals(1, count(s, Snapshot.Counter.SUCCEEDED));
  }

  @Test
  void theDeadlineHookStillFiresAtTheDeadlineAndTheWatchdogAfterTheGrace() {
    LoadShedder s = builder(1).watchdogGrace(Duration.ofMillis(500)).build();
    Recorder stuck = new Recorder();
    s.submit(0, stuck);
    List<Long> fired = new ArrayList<>();
    stuck.permit.onDeadline(() -> fired.add(time.nanoTime()));
    time.advanceTo(1000 * MS);
    assertEquals(List.of(1000 * MS), fired);
    assertEquals(1, s.inflight(), "the hook answers; the permit is still held");
    assertEquals(1, count(s, Snapshot.Counter.DEADLINE_MISSED));
    time.advanceTo(1500 * MS);
    assertEquals(0, s.inflight());
    assertEquals(1, count(s, Snapshot.Counter.RECLAIMED));
    assertEquals(1, count(s, Snapshot.Counter.DEADLINE_MISSED), "the overrun counts once");
    assertEquals(List.of(1000 * MS), fired, "the hook fired once");
  }

  @Test
  void aZeroGraceReclaimsRightAfterTheDeadlineHook() {
    LoadShedder s = builder(1).watchdogGrace(Duration.ZERO).build();
    Recorder stuck = new Recorder();
    s.submit(0, stuck);
    List<String> log = new ArrayList<>();
    stuck.permit.onDeadline(() -> log.add("hook, held=" + s.inflight()));
    time.advanceTo(1000 * MS);
    assertEquals(List.of("hook, held=1"), log);
    assertEquals(0, s.inflight());
  }

  @Test
  void aBlockingAcquiresPermitIsWatchedToo() throws Exception {
    LoadShedder s = builder(1).build();
    Permit p = s.acquire(0);
    time.advanceTo(2000 * MS);
    assertTrue(p.isReleased());
    assertFalse(p.success());
    assertEquals(0, s.inflight());
    assertEquals(1, count(s, Snapshot.Counter.RECLAIMED));
  }

  @Test
  void permitsBeyondTheWatchlistsSlotsHaveTimerEntriesAndAreReclaimedOnTime() {
    // One thread: every permit lands in one stripe's slots, and the rest get timer entries.
    int n = 100;
    LoadShedder s = builder(n).build();
    List<Recorder> held = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Recorder r = new Recorder();
      s.submit(Priority.of(i % Priority.TIERS, 0), r);
      held.add(r);
      time.advance(MS);
    }
    // Request i arrived at i ms: due at 2000 + i ms.
    time.advanceTo(2000 * MS - 1);
    assertEquals(n, s.inflight());
    for (int i = 0; i < n; i++) {
      time.advanceTo((2000 + i) * MS);
      assertTrue(held.get(i).permit.isReleased(), "request " + i + " reclaimed at its due");
      assertEquals(n - i - 1, s.inflight());
    }
    assertEquals(n, count(s, Snapshot.Counter.RECLAIMED));
    assertEquals(n, count(s, Snapshot.Counter.DROPPED));
  }

  @Test
  void aPermitReleasedInTimeIsNeverReclaimed() {
    LoadShedder s = builder(4).build();
    for (int i = 0; i < 50; i++) {
      Recorder r = new Recorder();
      s.submit(0, r);
      time.advance(30 * MS);
      assertTrue(r.permit.success());
    }
    time.advance(10_000 * MS);
    assertEquals(0, count(s, Snapshot.Counter.RECLAIMED));
    assertEquals(0, count(s, Snapshot.Counter.DROPPED));
    assertEquals(50, count(s, Snapshot.Counter.SUCCEEDED));
  }

  @Test
  void unsampledPermitsAreReclaimedNoEarlierThanDueAndWithinAControlInterval() {
    LoadShedder s = builder(10).build();
    // A busy first interval makes the tick sample only some immediate admissions.
    for (int i = 0; i < 5000; i++) {
      Recorder r = new Recorder();
      s.submit(0, r);
      r.permit.success();
    }
    time.advanceTo(100 * MS);
    List<Recorder> held = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      Recorder r = new Recorder();
      s.submit(0, r);
      held.add(r);
    }
    assertTrue(held.stream().anyMatch(r -> r.permit.queueWaitNanos() == 0
        && !((Request) r.permit).timed), "some are unsampled");
    time.advanceTo(2100 * MS - 1);
    assertEquals(8, s.inflight(), "none reclaimed before its deadline plus the grace");
    time.advanceTo(2200 * MS);
    assertEquals(0, s.inflight(), "all reclaimed within a control interval of it");
    assertEquals(8, count(s, Snapshot.Counter.RECLAIMED));
  }

  @Test
  void theWatchdogStopsWhenTheShedderCloses() {
    LoadShedder s = builder(1).build();
    Recorder r = new Recorder();
    s.submit(0, r);
    s.close();
    time.advanceTo(10_000 * MS);
    assertEquals(1, s.inflight());
    assertTrue(r.permit.success(), "a permit held at close stays valid");
    assertEquals(0, s.inflight());
  }

  @Test
  void theGraceIsValidated() {
    assertThrows(IllegalArgumentException.class,
        () -> LoadShedder.builder().watchdogGrace(Duration.ofMillis(-1)));
    assertThrows(IllegalArgumentException.class, () -> LoadShedder.builder().watchdogGrace(null));
    LoadShedder.Builder b = LoadShedder.builder().watchdogGrace(Duration.ZERO);
    assertSame(b, b.validate());
  }
}
