package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LoadShedderTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  private final VirtualTime time = new VirtualTime();

  private LoadShedder shedder(int limit, int capacity) {
    return LoadShedder.builder()
        .timer(time)
        .limit(() -> Limits.fixed(limit))
        .rejector(Rejectors::none)
        .requestTimeout(Duration.ofMillis(300))
        .queueCapacity(capacity)
        .build();
  }

  /** A shedder under {@code rejector}'s control: a 3 s request timeout, so a 1 s queue timeout. */
  private LoadShedder shedder(SetRejector rejector, int limit) {
    return LoadShedder.builder()
        .timer(time)
        .limit(() -> Limits.fixed(limit))
        .rejector(() -> rejector)
        .requestTimeout(Duration.ofSeconds(3))
        .queueCapacity(100)
        .build();
  }

  @Test
  void admitsAtOnceBelowTheLimit() {
    LoadShedder s = shedder(2, 10);
    Recorder a = new Recorder();
    s.submit(Priority.of(3, 0), a);
    assertNotNull(a.permit);
    assertEquals(1, s.inflight());
    assertEquals(0, a.permit.queueWaitNanos());
    assertTrue(a.permit.success());
    assertEquals(0, s.inflight());
  }

  @Test
  void releasingTwiceCountsOnce() {
    LoadShedder s = shedder(1, 10);
    Recorder a = new Recorder();
    Recorder b = new Recorder();
    s.submit(0, a);
    s.submit(0, b);
    assertTrue(a.permit.success());
    assertFalse(a.permit.success());
    assertFalse(a.permit.dropped());
    assertEquals(1, s.inflight(), "b holds the only permit");
    assertTrue(b.permit.success());
    assertEquals(0, s.inflight());
    assertEquals(1, s.snapshot().count(Snapshot.Counter.SUCCEEDED, 0) - 1);
  }

  @Test
  void queuedRequestsAreAdmittedByTierAndInArrivalOrderWithinATier() {
    LoadShedder s = shedder(1, 100);
    List<String> log = new ArrayList<>();
    Recorder holder = new Recorder("holder", log);
    s.submit(Priority.of(0, 0), holder);
    int[][] order = {{5, 3}, {1, 9}, {3, 7}, {1, 0}, {0, 127}, {5, 0}};
    List<Recorder> waiting = new ArrayList<>();
    for (int i = 0; i < order.length; i++) {
      time.advanceTo((i + 1) * MS);
      Recorder r = new Recorder(order[i][0] + ":" + order[i][1] + "#" + i, log);
      waiting.add(r);
      s.submit(Priority.of(order[i][0], order[i][1]), r);
    }
    assertEquals(6, s.queued());
    holder.permit.success();
    for (int i = 0; i < order.length; i++) {
      Recorder admitted = waiting.stream().filter(r -> r.permit != null && !r.permit.isReleased())
          .findFirst().orElseThrow();
      admitted.permit.success();
    }
    // Tiers strictly; within a tier the cohort does not overtake: 1:9 and 5:3 came first.
    assertEquals(List.of("holder", "0:127#4", "1:9#1", "1:0#3", "3:7#2", "5:3#0", "5:0#5"), log);
    assertEquals(0, s.inflight());
    assertEquals(0, s.queued());
  }

  private static List<Recorder> fill(LoadShedder s, int permits) {
    List<Recorder> running = new ArrayList<>();
    for (int i = 0; i < permits; i++) {
      Recorder r = new Recorder();
      s.submit(Priority.of(1, 0), r);
      assertNotNull(r.permit);
      running.add(r);
    }
    return running;
  }

  @Test
  void theCutoffShedsOnlyWhatWouldWait() {
    SetRejector cutAtTier3 = new SetRejector();
    cutAtTier3.cutoff = Priority.of(3, 0);
    cutAtTier3.overloaded = true;
    LoadShedder s = shedder(cutAtTier3, 2);
    time.advanceTo(100 * MS);
    assertEquals(Priority.of(3, 0), s.cutoff());

    // A permit is free and nothing waits: turning it away would idle the permit and delay no one.
    Recorder idlePermit = new Recorder();
    s.submit(Priority.LOWEST, idlePermit);
    assertNotNull(idlePermit.permit, "cut off, but it would not wait");
    Recorder important = new Recorder();
    s.submit(Priority.of(1, 0), important);
    assertNotNull(important.permit);

    // Every permit is in use: what is cut off is shed at the door, what is not waits.
    Recorder cutOff = new Recorder();
    s.submit(Priority.of(4, 0), cutOff);
    assertEquals(RejectReason.SHED, cutOff.reason);
    Recorder waits = new Recorder();
    s.submit(Priority.of(2, 127), waits);
    assertNull(waits.reason);
    assertEquals(1, s.queued());
    // Behind a queue, a cut-off request is shed without a request object: its ticket is answered.
    Recorder behind = new Recorder();
    Ticket ticket = s.submit(Priority.of(4, 9), behind);
    assertEquals(RejectReason.SHED, behind.reason);
    assertEquals(1, behind.calls);
    assertEquals(Priority.of(4, 9), ticket.priority());
    assertFalse(ticket.cancel(), "nothing to withdraw");
    assertThrows(IllegalArgumentException.class, () -> s.submit(Priority.LEVELS, new Recorder()));
    assertThrows(IllegalArgumentException.class,
        () -> s.submit(Priority.of(4, 9), 0, new Recorder()));
    AdmissionCallback throwing = new AdmissionCallback() {
      @Override
      public void onAdmitted(Permit p) {
        throw new AssertionError("cut off and queued behind others");
      }

      @Override
      public void onRejected(RejectReason reason) {
        throw new IllegalStateException("a callback's own failure");
      }
    };
    s.submit(Priority.of(4, 10), throwing); // contained: the caller's thread is not the callback's
    // A freed permit goes to what waits, not to the next cut-off arrival.
    assertTrue(idlePermit.permit.success());
    assertNotNull(waits.permit, "the waiting request takes the freed permit");
    Recorder next = new Recorder();
    s.submit(Priority.LOWEST, next);
    assertEquals(RejectReason.SHED, next.reason);

    assertTrue(important.permit.success());
    assertTrue(waits.permit.success());
    assertEquals(0, s.inflight());
    Snapshot snap = s.snapshot();
    assertEquals(4, snap.total(Snapshot.Counter.SHED));
    assertEquals(3, snap.total(Snapshot.Counter.ADMITTED));
    time.advanceTo(200 * MS);
    assertEquals(7, cutAtTier3.arrivals, "every valid submit is an arrival, shed or not");
  }

  @Test
  void whileOverloadedTheQueueHoldsALimitAndAHalfsWorthAndEvictsTheLeastImportant() {
    SetRejector rejector = new SetRejector();
    // Queue timeout 1 s: nothing times out while the ticks below (every 100 ms) apply the bound.
    LoadShedder s = shedder(rejector, 2);
    s.submit(0, new Recorder());
    s.submit(0, new Recorder());
    List<Recorder> queued = new ArrayList<>();
    for (int cohort = 0; cohort < 6; cohort++) {
      Recorder r = new Recorder();
      queued.add(r);
      s.submit(Priority.of(3, cohort), r);
    }
    assertEquals(6, s.queued(), "not overloaded: the configured capacity");
    rejector.overloaded = true;
    time.advanceTo(100 * MS);
    // The tick that lowers the bound trims the backlog to it at once, least important first.
    assertEquals(3, s.queued(), "a limit and a half's worth");
    for (int i = 3; i < 6; i++) {
      assertEquals(RejectReason.QUEUE_FULL, queued.get(i).reason, "cohort " + i + " is evicted");
    }
    for (int i = 0; i < 3; i++) {
      assertNull(queued.get(i).reason, "cohort " + i + " keeps its place");
    }
    Recorder important = new Recorder();
    s.submit(Priority.of(1, 0), important);
    assertNull(important.reason);
    assertEquals(RejectReason.QUEUE_FULL, queued.get(2).reason, "the least important goes");
    Recorder lessImportant = new Recorder();
    s.submit(Priority.of(3, 100), lessImportant);
    assertEquals(RejectReason.QUEUE_FULL, lessImportant.reason);
    assertEquals(3, s.queued());
    rejector.overloaded = false;
    time.advanceTo(200 * MS);
    Recorder calm = new Recorder();
    s.submit(Priority.of(5, 0), calm);
    assertNull(calm.reason, "the bound lifts with the overload");
    assertEquals(4, s.queued());
    // Everyone is answered exactly once: the two holders and the queue drain, the rest were shed.
    long shed = s.snapshot().total(Snapshot.Counter.QUEUE_FULL);
    assertEquals(5, shed, "cohorts 5 to 2 of tier 3, and the late tier-3 arrival");
    for (Recorder r : queued) {
      assertTrue(r.calls <= 1, "answered at most once");
    }
  }

  /**
   * The bound is longer while the cut spares the most important tier arriving, whose requests go
   * ahead of everything queued: then the queue only buffers less important work. A tier counts as
   * arriving from 1% of recent traffic, so a stray request of a more important tier changes
   * nothing. The rejector is told the bound the shedder keeps.
   */
  @Test
  void theQueueHoldsTwoLimitsWorthWhileTheCutSparesTheMostImportantTierArriving() {
    SetRejector cutInTier5 = new SetRejector();
    cutInTier5.cutoff = Priority.of(5, 64);
    cutInTier5.overloaded = true;
    List<Integer> bounds = cutInTier5.bounds;
    // Every request is admitted at once and released at once: only the arrivals matter here.
    LoadShedder s = LoadShedder.builder().timer(time).limit(() -> Limits.fixed(10))
        .rejector(() -> cutInTier5).queueCapacity(100).build();
    long now = 0;
    for (int tick = 0; tick < 3; tick++) {
      for (int i = 0; i < 200; i++) {
        submitAndRelease(s, Priority.of(5, i % 64));
      }
      submitAndRelease(s, Priority.of(1, 0)); // 1 in 201: not a tier arriving
      time.advanceTo(now += 100 * MS);
    }
    assertEquals(List.of(15, 15, 15), bounds, "the cut falls inside tier 5: a limit and a half");
    for (int tick = 0; tick < 3; tick++) {
      for (int i = 0; i < 50; i++) {
        submitAndRelease(s, Priority.of(5, i));
        submitAndRelease(s, Priority.of(1, i));
      }
      time.advanceTo(now += 100 * MS);
    }
    // A window is judged with the cut in force during it, on the arrivals up to its start.
    assertEquals(List.of(15, 20, 20), bounds.subList(3, 6),
        "the cut in tier 5 spares tier 1, arriving: two limits' worth");
  }

  /**
   * While the cut spares the most important tier arriving and that tier arrives slower than
   * requests are admitted (it fits), its requests may queue past the bound, as far as the permits
   * admit in a queue timeout; less important requests still meet the bound. Once the tier arrives
   * faster than requests are admitted, the bound holds for it too, and the next tick trims the
   * queue to it, least important first.
   */
  @Test
  void aTopTierThatFitsQueuesPastTheBoundWhileTheCutSparesIt() {
    SetRejector cutInTier5 = new SetRejector();
    cutInTier5.cutoff = Priority.of(5, 64);
    cutInTier5.overloaded = true;
    // A 3 s request timeout: a 1 s queue timeout, far past the ticks below.
    LoadShedder s = LoadShedder.builder().timer(time).limit(() -> Limits.fixed(10))
        .rejector(() -> cutInTier5).queueCapacity(1000).build();
    long now = 0;
    for (int tick = 0; tick < 5; tick++) {
      for (int i = 0; i < 50; i++) {
        submitAndRelease(s, Priority.of(1, i));
        submitAndRelease(s, Priority.of(5, i));
      }
      time.advanceTo(now += 100 * MS);
    }
    // Tier 1 is half of what is admitted, and the cut falls in tier 5: tier 1 fits.
    List<Recorder> holders = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      Recorder r = new Recorder();
      s.submit(Priority.of(1, 0), r);
      holders.add(r);
    }
    List<Recorder> tier1 = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      Recorder r = new Recorder();
      s.submit(Priority.of(1, i), r);
      tier1.add(r);
    }
    assertEquals(30, s.queued(), "all of tier 1 waits, past the bound of two limits (20)");
    Recorder tier5 = new Recorder();
    s.submit(Priority.of(5, 0), tier5);
    assertEquals(RejectReason.QUEUE_FULL, tier5.reason, "tier 5 still meets the bound");
    time.advanceTo(now += 100 * MS);
    assertEquals(30, s.queued(), "the tick keeps the spared tier's queue");
    for (Recorder r : tier1) {
      assertNull(r.reason);
    }

    // Tier 1 alone now arrives faster than anything is admitted: it no longer fits.
    List<Recorder> flood = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      Recorder r = new Recorder();
      s.submit(Priority.of(1, 127), r);
      flood.add(r);
    }
    time.advanceTo(now += 100 * MS);
    assertEquals(20, s.queued(), "trimmed to the bound of two limits");
    for (Recorder r : tier1.subList(0, 20)) {
      assertNull(r.reason, "the most important cohorts keep their places");
    }
    for (Recorder r : tier1.subList(20, 30)) {
      assertEquals(RejectReason.QUEUE_FULL, r.reason);
    }
    for (Recorder r : flood) {
      assertEquals(RejectReason.QUEUE_FULL, r.reason, "cohort 127, the least important of tier 1");
    }
    for (Recorder r : holders) {
      assertTrue(r.permit.success());
    }
    assertEquals(10, s.queued(), "the ten freed permits took the ten most important waiting");
    for (Recorder r : tier1.subList(0, 10)) {
      assertNotNull(r.permit);
    }
  }

  private static void submitAndRelease(LoadShedder s, int priority) {
    Recorder r = new Recorder();
    s.submit(priority, r);
    assertTrue(r.permit.success());
  }

  @Test
  void aQueuedRequestTimesOutOnTheTimerWithoutAnyPoll() {
    LoadShedder s = shedder(1, 10);
    Recorder holder = new Recorder();
    Recorder waiter = new Recorder();
    s.submit(0, holder);
    s.submit(0, waiter);
    time.advanceTo(99 * MS);
    assertNull(waiter.reason);
    time.advanceTo(100 * MS);
    assertEquals(RejectReason.QUEUE_TIMEOUT, waiter.reason);
    assertEquals(0, s.queued());
    assertEquals(1, s.snapshot().count(Snapshot.Counter.QUEUE_TIMEOUT, 0));
    holder.permit.success();
    assertEquals(1, waiter.calls);
    assertEquals(0, s.inflight());
  }

  @Test
  void aFullQueueEvictsLessImportantWorkForMoreImportantWork() {
    LoadShedder s = shedder(1, 2);
    s.submit(0, new Recorder());
    Recorder low1 = new Recorder();
    Recorder low2 = new Recorder();
    Recorder high = new Recorder();
    Recorder lowest = new Recorder();
    s.submit(Priority.of(5, 1), low1);
    s.submit(Priority.of(5, 2), low2);
    s.submit(Priority.of(1, 0), high);
    assertEquals(RejectReason.QUEUE_FULL, low2.reason, "the least important waiting is evicted");
    assertNull(high.reason);
    s.submit(Priority.of(5, 100), lowest);
    assertEquals(RejectReason.QUEUE_FULL, lowest.reason, "nothing less important to evict");
    assertEquals(2, s.queued());
  }

  @Test
  void cancelWithdrawsAQueuedRequestAndTellsItsCallback() {
    LoadShedder s = shedder(1, 10);
    Recorder holder = new Recorder();
    Recorder waiter = new Recorder();
    s.submit(0, holder);
    Ticket t = s.submit(0, waiter);
    assertTrue(t.cancel());
    assertFalse(t.cancel());
    assertEquals(RejectReason.CANCELLED, waiter.reason);
    assertEquals(0, s.queued());
    time.advance(1000 * MS);
    assertEquals(1, waiter.calls, "the queue timer must not fire after a cancel");
    Ticket admitted = s.submit(0, new Recorder());
    holder.permit.success();
    assertFalse(admitted.cancel(), "an admitted request cannot be cancelled");
  }

  @Test
  void theDeadlineHookFiresOnceWhenAnAdmittedRequestOverrunsIt() {
    LoadShedder s = shedder(1, 10);
    Recorder a = new Recorder();
    s.submit(0, a);
    int[] fired = {0};
    a.permit.onDeadline(() -> fired[0]++);
    time.advanceTo(299 * MS);
    assertEquals(0, fired[0]);
    time.advanceTo(300 * MS);
    assertEquals(1, fired[0]);
    assertEquals(1, s.snapshot().count(Snapshot.Counter.DEADLINE_MISSED, 0));
    a.permit.dropped();
    assertEquals(1, s.snapshot().count(Snapshot.Counter.DEADLINE_MISSED, 0), "counted once");
  }

  @Test
  void theDeadlineHookDoesNotFireForARequestReleasedInTime() {
    LoadShedder s = shedder(1, 10);
    Recorder a = new Recorder();
    s.submit(0, a);
    int[] fired = {0};
    a.permit.onDeadline(() -> fired[0]++);
    time.advanceTo(100 * MS);
    a.permit.success();
    time.advanceTo(1000 * MS);
    assertEquals(0, fired[0]);
  }

  @Test
  void closeAnswersEveryQueuedRequestAndEveryLaterOne() {
    LoadShedder s = shedder(1, 10);
    Recorder holder = new Recorder();
    s.submit(0, holder);
    List<Recorder> queued = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      Recorder r = new Recorder();
      queued.add(r);
      s.submit(Priority.of(i, 0), r);
    }
    s.close();
    for (Recorder r : queued) {
      assertEquals(RejectReason.SHUTTING_DOWN, r.reason);
      assertEquals(1, r.calls);
    }
    Recorder late = new Recorder();
    s.submit(0, late);
    assertEquals(RejectReason.SHUTTING_DOWN, late.reason);
    assertTrue(holder.permit.success(), "held permits stay valid");
    assertEquals(0, s.inflight());
    assertEquals(0, s.queued());
  }

  @Test
  void aCallbackThatThrowsDoesNotLeakItsPermit() {
    LoadShedder s = shedder(1, 10);
    s.submit(0, new AdmissionCallback() {
      @Override
      public void onAdmitted(Permit permit) {
        throw new IllegalStateException("boom");
      }

      @Override
      public void onRejected(RejectReason reason) {}
    });
    assertEquals(0, s.inflight());
  }

  @Test
  void aCallbackThatReleasesInlineDoesNotRecurse() {
    LoadShedder s = shedder(1, 100_000);
    Recorder holder = new Recorder();
    s.submit(0, holder);
    int[] done = {0};
    AdmissionCallback inline = new AdmissionCallback() {
      @Override
      public void onAdmitted(Permit permit) {
        done[0]++;
        permit.success();
      }

      @Override
      public void onRejected(RejectReason reason) {}
    };
    for (int i = 0; i < 50_000; i++) {
      s.submit(0, inline);
    }
    holder.permit.success();
    assertEquals(50_000, done[0]);
    assertEquals(0, s.inflight());
  }

  @Test
  void blockingAcquireAdmitsOrThrowsWithTheReason() throws Exception {
    LoadShedder s = shedder(1, 10);
    Permit p = s.acquire(0);
    assertEquals(1, s.inflight());
    p.success();
    LoadShedder closed = shedder(1, 10);
    closed.close();
    RejectedException e = assertThrows(RejectedException.class, () -> closed.acquire(0));
    assertEquals(RejectReason.SHUTTING_DOWN, e.reason());
  }

  @Test
  void invalidPrioritiesAreRefusedWithAClearMessage() {
    LoadShedder s = shedder(1, 10);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> s.submit(768, new Recorder()));
    assertTrue(e.getMessage().contains("priority"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> s.submit(-1, new Recorder()));
    assertEquals(0, s.inflight());
  }
}
