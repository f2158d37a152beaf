package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Permit#recycle}, in virtual time: which lives are reused, and that what an earlier life
 * left behind (a sweep's read, a sweep's timer entry) cannot act on a later one.
 */
class PermitRecycleTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  private final VirtualTime time = new VirtualTime();

  /** Request and queue timeout 1 s, grace 1 s (the default), control every 100 ms. */
  private LoadShedder shedder(int limit) {
    return LoadShedder.builder()
        .timer(time)
        .limit(() -> Limits.fixed(limit))
        .rejector(Rejectors::none)
        .requestTimeout(Duration.ofSeconds(1))
        .queueTimeout(Duration.ofSeconds(1))
        .queueCapacity(100)
        .build();
  }

  @BeforeEach
  void noSpareFromAnEarlierTest() {
    Request.takeSpare();
  }

  private static long count(LoadShedder s, Snapshot.Counter c) {
    return s.snapshot().total(c);
  }

  /**
   * A callback that hands its permit on and then throws: the shedder releases the permit as an
   * error only if it is still the life it admitted. Here the holder has already released it,
   * recycled it and submitted again, so the object is the holder's next, held request.
   */
  @Test
  void aCallbackThatThrowsAfterItsPermitWasRecycledLeavesTheNextLifeAlone() {
    LoadShedder s = shedder(4);
    Recorder next = new Recorder();
    Permit[] first = new Permit[1];
    s.submit(0, new AdmissionCallback() {
      @Override
      public void onAdmitted(Permit p) {
        first[0] = p;
        assertTrue(p.success());
        p.recycle();
        s.submit(0, next);
        throw new IllegalStateException("after the hand-off");
      }

      @Override
      public void onRejected(RejectReason reason) {
        throw new AssertionError(reason);
      }
    });
    assertSame(first[0], next.permit, "the same object, renewed");
    assertFalse(next.permit.isReleased(), "the next request still holds it");
    assertEquals(1, s.inflight());
    assertEquals(0, count(s, Snapshot.Counter.FAILED));
    assertTrue(next.permit.success(), "its holder's release counts");
    assertEquals(0, s.inflight());
    assertEquals(2, count(s, Snapshot.Counter.SUCCEEDED));
  }

  @Test
  void aCallbackThatThrowsWithItsPermitStillHeldHasItReleasedAsAnError() {
    LoadShedder s = shedder(4);
    s.submit(0, new AdmissionCallback() {
      @Override
      public void onAdmitted(Permit p) {
        throw new IllegalStateException("before any hand-off");
      }

      @Override
      public void onRejected(RejectReason reason) {
        throw new AssertionError(reason);
      }
    });
    assertEquals(0, s.inflight());
    assertEquals(1, count(s, Snapshot.Counter.FAILED));
  }

  @Test
  void aRecycledPermitIsTheThreadsNextRequestAndCountsAsANewOne() {
    LoadShedder s = shedder(4);
    Recorder first = new Recorder();
    s.submit(Priority.of(0, 1), first);
    Permit p = first.permit;
    assertTrue(p.success());
    p.recycle();

    Recorder second = new Recorder();
    Ticket t = s.submit(Priority.of(3, 9), second);
    assertSame(p, second.permit, "the same object, renewed");
    assertSame(p, t);
    assertEquals(Priority.of(3, 9), second.permit.priority());
    assertFalse(second.permit.isReleased(), "a new life, held");
    assertEquals(1, s.inflight());
    assertTrue(second.permit.error());
    assertEquals(0, s.inflight());
    assertEquals(2, count(s, Snapshot.Counter.ADMITTED));
    assertEquals(1, count(s, Snapshot.Counter.SUCCEEDED));
    assertEquals(1, count(s, Snapshot.Counter.FAILED));
  }

  @Test
  void aPermitIsReusedOnlyIfItsLifeLeftNothingBehind() {
    LoadShedder s = shedder(1);

    Recorder held = new Recorder();
    s.submit(0, held);
    held.permit.recycle(); // still held: ignored
    Recorder waiter = new Recorder();
    s.submit(0, waiter); // queued behind it
    assertNull(waiter.permit);
    assertTrue(held.permit.success());
    assertTrue(waiter.permit != null);
    assertNotSame(held.permit, waiter.permit, "not recycled while held");
    assertTrue(waiter.permit.success());
    waiter.permit.recycle(); // it waited in the queue: never reused
    Recorder next = new Recorder();
    s.submit(0, next);
    assertNotSame(waiter.permit, next.permit);

    next.permit.onDeadline(() -> { });
    assertTrue(next.permit.success());
    next.permit.recycle(); // it had a deadline hook: never reused
    Recorder afterHook = new Recorder();
    s.submit(0, afterHook);
    assertNotSame(next.permit, afterHook.permit);

    time.advanceTo(2000 * MS + 100 * MS); // past deadline and grace: the watchdog reclaims it
    assertTrue(afterHook.permit.isReleased());
    assertEquals(1, count(s, Snapshot.Counter.RECLAIMED));
    assertFalse(afterHook.permit.success());
    afterHook.permit.recycle(); // reclaimed, not released by its holder: never reused
    Recorder afterReclaim = new Recorder();
    s.submit(0, afterReclaim);
    assertNotSame(afterHook.permit, afterReclaim.permit);

    assertTrue(afterReclaim.permit.success());
    afterReclaim.permit.recycle();
    afterReclaim.permit.recycle(); // twice: the first one counts
    Recorder a = new Recorder();
    s.submit(0, a);
    assertSame(afterReclaim.permit, a.permit);
    assertTrue(a.permit.success());
    Recorder b = new Recorder();
    s.submit(0, b);
    assertNotSame(a.permit, b.permit, "one recycle, one reuse");
    assertTrue(b.permit.success());
    assertEquals(0, s.inflight());
  }

  @Test
  void aSweepThatReadAnEarlierLifeCannotReclaimTheNextOne() {
    LoadShedder s = shedder(2);
    Recorder first = new Recorder();
    s.submit(0, first);
    Request r = (Request) first.permit;
    int staleWord = r.word(); // what a sweep read while the first life was held
    assertTrue(first.permit.success());
    first.permit.recycle();
    Recorder second = new Recorder();
    s.submit(0, second);
    assertSame(r, second.permit);

    assertFalse(r.admission.watchdog.reclaim(r, staleWord), "the stale CAS fails");
    assertFalse(second.permit.isReleased());
    assertEquals(1, s.inflight());
    assertEquals(0, count(s, Snapshot.Counter.RECLAIMED));
    assertTrue(r.admission.watchdog.reclaim(r, r.word()), "the live word reclaims");
    assertEquals(0, s.inflight());
  }

  @Test
  void aSweepsTimerEntryForAnEarlierLifeDoesNotTimeOutTheNextLifeInTheQueue() {
    LoadShedder s = shedder(2);
    time.advanceTo(50 * MS);
    Recorder first = new Recorder();
    s.submit(0, first);
    Request r = (Request) first.permit;
    r.deadlineNanos(); // timed from 50 ms: due at 2.05 s, so the sweep at 2 s schedules 2.05 s
    time.advanceTo(1050 * MS);
    Recorder other = new Recorder();
    s.submit(0, other); // holds the second permit until after 3.05 s
    time.advanceTo(2010 * MS);
    assertTrue(first.permit.success());
    Recorder filler = new Recorder();
    s.submit(0, filler); // takes the freed permit before the recycled object is renewed
    assertNotSame(r, filler.permit);
    first.permit.recycle();

    Recorder queued = new Recorder();
    Ticket t = s.submit(0, queued); // both permits held: the renewed object waits
    assertSame(r, t);
    assertEquals(1, s.queued());
    time.advanceTo(2100 * MS); // the first life's entry has run
    assertEquals(1, s.queued(), "the stale entry left the later life in the queue");
    assertNull(queued.reason);
    time.advanceTo(3010 * MS - 1);
    assertEquals(1, s.queued());
    time.advanceTo(3010 * MS);
    assertEquals(RejectReason.QUEUE_TIMEOUT, queued.reason, "its own timeout, 1 s after arrival");
    assertEquals(0, s.queued());
    assertTrue(other.permit.success());
    assertTrue(filler.permit.success());
    assertEquals(0, s.inflight());
  }

  @Test
  void onlyTheThreadThatReleasedAPermitCanRecycleIt() throws Exception {
    LoadShedder s = shedder(4);
    Recorder first = new Recorder();
    s.submit(0, first);
    assertTrue(first.permit.success());
    Permit[] elsewhere = new Permit[1];
    Thread other = new Thread(() -> {
      first.permit.recycle(); // not the releasing thread: ignored
      Recorder r = new Recorder();
      s.submit(0, r);
      elsewhere[0] = r.permit;
      r.permit.success();
    });
    other.start();
    other.join();
    assertNotSame(first.permit, elsewhere[0], "the other thread's submission got no spare");
    Recorder next = new Recorder();
    s.submit(0, next);
    assertNotSame(first.permit, next.permit, "nor this thread's: it never recycled it");
    assertTrue(next.permit.success());
    assertEquals(0, s.inflight());
  }
}
