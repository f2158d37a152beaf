package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.Limits;
import dev.weir.control.PidRejector;
import dev.weir.control.Rejectors;
import dev.weir.internal.WheelTimer;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Regression tests for the smaller faults of issue 17, item 10. */
class SmallFaultsTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  /**
   * A timer over virtual time that can run an action inside a schedule() or a clock read, the
   * places where an enqueuer or onDeadline calls foreign code, and records every entry.
   */
  static final class TrapTimer implements Timer, Clock {
    final VirtualTime time = new VirtualTime();
    volatile Runnable onSchedule;
    volatile Runnable onClockRead;
    final List<Object[]> entries = new ArrayList<>();

    @Override
    public synchronized Timeout schedule(Runnable task, long deadlineNanos) {
      Runnable trap = onSchedule;
      onSchedule = null;
      if (trap != null) {
        trap.run();
      }
      Timeout t = time.schedule(task, deadlineNanos);
      entries.add(new Object[] {task, t});
      return t;
    }

    @Override
    public Clock clock() {
      return this;
    }

    @Override
    public long nanoTime() {
      Runnable trap = onClockRead;
      onClockRead = null;
      if (trap != null) {
        trap.run();
      }
      return time.nanoTime();
    }

    /** Entries for {@code task} not cancelled (VirtualTime's cancel answers false once done). */
    synchronized int liveEntriesFor(Object task) {
      int n = 0;
      for (Object[] e : entries) {
        if (e[0] == task && ((Timeout) e[1]).cancel()) {
          n++;
        }
      }
      return n;
    }

    synchronized int entriesFor(Object task) {
      int n = 0;
      for (Object[] e : entries) {
        if (e[0] == task) {
          n++;
        }
      }
      return n;
    }
  }

  private static LoadShedder shedder(Timer timer, int limit) {
    return LoadShedder.builder()
        .timer(timer)
        .limit(() -> Limits.fixed(limit))
        .rejector(Rejectors::none)
        .requestTimeout(Duration.ofSeconds(1))
        .build();
  }

  // ---- PidRejector's published values

  @Test
  void pidRejectorPublishesWhatScrapeThreadsReadThroughVolatileFields() throws Exception {
    for (String name : new String[] {"ratio", "shedding", "cutoff"}) {
      Field f = PidRejector.class.getDeclaredField(name);
      assertTrue(Modifier.isVolatile(f.getModifiers()), name + " is read by scrape threads");
    }
  }

  // ---- WheelTimer

  @Test
  void aCancelledTimerEntryDropsItsTask() throws Exception {
    Timer shared = Timer.system();
    Runnable task = () -> { };
    Timer.Timeout t = shared.schedule(task, shared.clock().nanoTime() + TimeUnit.HOURS.toNanos(1));
    Field f = t.getClass().getDeclaredField("task");
    f.setAccessible(true);
    assertEquals(task, f.get(t));
    assertTrue(t.cancel());
    assertNull(f.get(t), "a cancelled entry must not keep its task alive for a wheel turn");
    assertFalse(t.cancel());
  }

  @Test
  void theSharedTimerCannotBeClosed() throws Exception {
    Timer shared = Timer.system();
    assertThrows(UnsupportedOperationException.class, () -> ((AutoCloseable) shared).close());
    assertThrows(UnsupportedOperationException.class, () -> ((WheelTimer) shared).close());
    CountDownLatch ran = new CountDownLatch(1);
    shared.schedule(ran::countDown, shared.clock().nanoTime() + MS);
    assertTrue(ran.await(30, TimeUnit.SECONDS), "the shared timer still runs");
  }

  // ---- the dispatch hand-over

  @Test
  void aReleaseOnTheEnqueuingThreadBetweenReserveAndOfferDoesNotSpin() {
    TrapTimer timer = new TrapTimer();
    LoadShedder s = shedder(timer, 1);
    Recorder holder = new Recorder();
    s.submit(0, holder);
    // The queued request's timeout is scheduled between its reserve and its offer: the holder
    // releases right there, on this thread. Its dispatch meets a reserved, empty place.
    timer.onSchedule = () -> assertTrue(holder.permit.success());
    Recorder waiter = new Recorder();
    assertTimeoutPreemptively(Duration.ofSeconds(20), () -> s.submit(0, waiter),
        "the release's dispatch spun on a place only this thread could fill");
    assertNotNull(waiter.permit, "the enqueuer's own dispatch admitted it");
    assertEquals(1, s.inflight());
    assertEquals(0, s.queued());
    assertTrue(waiter.permit.success());
    assertEquals(0, s.inflight());
  }

  @Test
  void aReleaseOnAnotherThreadDoesNotWaitForAStalledEnqueuer() throws Exception {
    TrapTimer timer = new TrapTimer();
    LoadShedder s = shedder(timer, 1);
    Recorder holder = new Recorder();
    s.submit(0, holder);
    CountDownLatch inSchedule = new CountDownLatch(1);
    CountDownLatch go = new CountDownLatch(1);
    timer.onSchedule = () -> {
      inSchedule.countDown();
      try {
        go.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    };
    AtomicReference<Permit> admitted = new AtomicReference<>();
    Thread enqueuer = new Thread(() -> s.submit(0, new AdmissionCallback() {
      @Override
      public void onAdmitted(Permit p) {
        admitted.set(p);
      }

      @Override
      public void onRejected(RejectReason reason) {}
    }));
    enqueuer.start();
    assertTrue(inSchedule.await(30, TimeUnit.SECONDS));
    try {
      // The enqueuer is stalled between reserve and offer, holding no lock we need.
      assertTimeoutPreemptively(Duration.ofSeconds(20), () -> holder.permit.success(),
          "the release waited for the stalled enqueuer");
    } finally {
      go.countDown();
    }
    enqueuer.join(TimeUnit.SECONDS.toMillis(30));
    assertFalse(enqueuer.isAlive());
    assertNotNull(admitted.get(), "the enqueuer's dispatch found the credit the release left");
    assertEquals(1, s.inflight());
    assertTrue(admitted.get().success());
  }

  // ---- onDeadline is one CAS

  /** A permit admitted on the fast path without a latency sample, so onDeadline reads the clock. */
  private static Request unsampledPermit(TrapTimer timer, LoadShedder s) {
    for (int i = 0; i < 5000; i++) {
      Recorder r = new Recorder();
      s.submit(0, r);
      r.permit.success();
    }
    timer.time.advance(100 * MS); // the tick now samples only some immediate admissions
    List<Permit> sampled = new ArrayList<>();
    try {
      for (;;) {
        Recorder r = new Recorder();
        s.submit(0, r);
        Request p = (Request) r.permit;
        if (!p.timed) {
          return p;
        }
        sampled.add(p);
      }
    } finally {
      sampled.forEach(Permit::success);
    }
  }

  @Test
  void aSecondOnDeadlineInsideTheFirstDoesNotScheduleASecondEntry() {
    TrapTimer timer = new TrapTimer();
    LoadShedder s = shedder(timer, 10);
    Request p = unsampledPermit(timer, s);
    List<String> fired = new ArrayList<>();
    // The first call reads the clock to time the unsampled permit; the second comes in there.
    timer.onClockRead = () -> p.onDeadline(() -> fired.add("second"));
    p.onDeadline(() -> fired.add("first"));
    assertEquals(1, timer.entriesFor(p), "one hook, one timer entry");
    timer.time.advance(TimeUnit.SECONDS.toNanos(1));
    assertEquals(1, fired.size(), "one hook ran: " + fired);
    assertTrue(p.dropped());
  }

  @Test
  void anOnDeadlineRacingTheReleaseLeavesNoEntryBehind() {
    TrapTimer timer = new TrapTimer();
    LoadShedder s = shedder(timer, 10);
    Request p = unsampledPermit(timer, s);
    timer.onClockRead = () -> assertTrue(p.success());
    p.onDeadline(() -> { throw new AssertionError("released before its deadline"); });
    assertEquals(0, timer.liveEntriesFor(p), "the entry of a released permit is cancelled");
    timer.time.advance(TimeUnit.SECONDS.toNanos(5));
    assertEquals(0, s.inflight());
  }
}
