package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.Rejectors;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * {@link LoadShedder#tryEnter} and {@link LoadShedder#exit}, the fast path without a request object
 * that tests use to hold a permit (not for applications; see their javadoc): it admits
 * exactly when {@code submit} would admit at once, counts what {@code submit} counts, and refuses
 * everything else without a trace.
 */
class TryEnterTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
  private static final long INTERVAL = 100 * MS;

  private final VirtualTime time = new VirtualTime();

  /** A limit that returns what the test sets, and keeps what it saw of the last window. */
  private static final class Controlled implements Limit {
    int limit;

    Controlled(int limit) {
      this.limit = limit;
    }

    @Override
    public int initialLimit() {
      return limit;
    }

    @Override
    public int maxLimit() {
      return 1000;
    }

    @Override
    public int update(ControlWindow w) {
      // Copy what the tests look at: the window is reused.
      arrivals = w.arrivals();
      levelArrivals = w.levelArrivals().clone();
      samples = w.latencySamples();
      meanLatency = w.meanLatencyNanos();
      successes = w.successes();
      peak = w.peakInflight();
      return limit;
    }

    long arrivals;
    long[] levelArrivals;
    long samples;
    long meanLatency;
    long successes;
    int peak;
  }

  private final SetRejector rejector = new SetRejector();

  private LoadShedder shedder(Controlled c) {
    return LoadShedder.builder()
        .timer(time)
        .limit(() -> c)
        .rejector(() -> rejector)
        .requestTimeout(Duration.ofMillis(300))
        .queueCapacity(10)
        .build();
  }

  private void tick() {
    time.advance(INTERVAL);
  }

  @Test
  void admitsAndCountsAsAnImmediateSubmitDoes() {
    Controlled c = new Controlled(10);
    LoadShedder s = shedder(c);
    int p = Priority.of(2, 5);
    long e = s.tryEnter(p);
    assertTrue(e >= 0, "admitted: " + e);
    assertEquals(1, s.inflight());
    assertEquals(1, s.count(Snapshot.Counter.ADMITTED, 2));
    s.exit(e, Outcome.SUCCESS);
    assertEquals(0, s.inflight());
    assertEquals(1, s.count(Snapshot.Counter.SUCCEEDED, 2));

    long e2 = s.tryEnter(Priority.of(4, 0));
    s.exit(e2, Outcome.ERROR);
    long e3 = s.tryEnter(Priority.of(4, 0));
    s.exit(e3, Outcome.DROPPED);
    assertEquals(1, s.count(Snapshot.Counter.FAILED, 4));
    assertEquals(1, s.count(Snapshot.Counter.DROPPED, 4));
    assertEquals(2, s.count(Snapshot.Counter.ADMITTED, 4));

    tick();
    assertEquals(3, c.arrivals);
    assertEquals(1, c.levelArrivals[p]);
    assertEquals(2, c.levelArrivals[Priority.of(4, 0)]);
    assertEquals(1, c.successes);
    assertEquals(1, c.peak);
  }

  @Test
  void respectsTheLimitAndRefusesWithoutATrace() {
    Controlled c = new Controlled(2);
    LoadShedder s = shedder(c);
    long a = s.tryEnter(0);
    long b = s.tryEnter(0);
    assertTrue(a >= 0 && b >= 0);
    assertEquals(LoadShedder.NOT_ADMITTED, s.tryEnter(0), "at the limit");
    assertEquals(2, s.inflight());
    assertEquals(2, s.count(Snapshot.Counter.ADMITTED, 0));
    assertNoRejections(s);
    s.exit(a, Outcome.SUCCESS);
    long d = s.tryEnter(0);
    assertTrue(d >= 0, "the released permit is free again");
    s.exit(b, Outcome.SUCCESS);
    s.exit(d, Outcome.SUCCESS);
    assertEquals(0, s.inflight());
    tick();
    assertEquals(3, c.arrivals, "the refusal counted no arrival");
    assertEquals(2, c.peak);
  }

  @Test
  void refusesWhileAnythingIsQueuedEvenWithAPermitFree() {
    Controlled c = new Controlled(2);
    LoadShedder s = shedder(c);
    long a = s.tryEnter(0);
    long b = s.tryEnter(0);
    long[] seen = new long[1];
    Recorder second = new Recorder();
    // The first waiter, once admitted, releases at once and, with the second still queued and its
    // permit free for a moment, tries the fast path: it must not overtake the queue.
    AdmissionCallback first = new AdmissionCallback() {
      @Override
      public void onAdmitted(Permit permit) {
        permit.success();
        assertEquals(1, s.queued());
        seen[0] = s.tryEnter(Priority.HIGHEST);
      }

      @Override
      public void onRejected(RejectReason reason) {
        throw new AssertionError(reason);
      }
    };
    s.submit(Priority.of(1, 0), first);
    s.submit(Priority.of(1, 1), second);
    assertEquals(2, s.queued());
    assertEquals(LoadShedder.NOT_ADMITTED, s.tryEnter(Priority.HIGHEST), "queued, no permit");
    s.exit(a, Outcome.SUCCESS);
    assertEquals(LoadShedder.NOT_ADMITTED, seen[0], "a request was queued");
    assertNotNull(second.permit, "the queued request got the permit");
    assertEquals(0, s.queued());
    second.permit.success();
    s.exit(b, Outcome.SUCCESS);
    assertEquals(0, s.inflight());
  }

  @Test
  void theCutoffRefusesOnlyWhatWouldWaitAndCountsNothing() {
    Controlled c = new Controlled(2);
    LoadShedder s = shedder(c);
    rejector.cutoff = Priority.of(3, 0);
    tick();
    assertEquals(Priority.of(3, 0), s.cutoff());
    long low = s.tryEnter(Priority.LOWEST);
    assertTrue(low >= 0, "a free permit and nothing queued: it would not wait, so it runs");
    long high = s.tryEnter(Priority.of(2, 127));
    assertTrue(high >= 0, "above the cutoff");
    assertEquals(LoadShedder.NOT_ADMITTED, s.tryEnter(Priority.of(3, 0)), "cut off and no permit");
    assertEquals(LoadShedder.NOT_ADMITTED, s.tryEnter(Priority.HIGHEST), "no permit");
    assertNoRejections(s);
    tick();
    assertEquals(2, c.arrivals, "the two refusals counted no arrival");
    assertEquals(1, s.count(Snapshot.Counter.ADMITTED, 5));
    assertEquals(1, s.count(Snapshot.Counter.ADMITTED, 2));

    // What tryEnter refused, submit decides: below the cut's tier with no permit free is shed.
    Recorder shed = new Recorder();
    s.submit(Priority.of(4, 0), shed);
    assertEquals(RejectReason.SHED, shed.reason);
    s.exit(low, Outcome.SUCCESS);
    s.exit(high, Outcome.SUCCESS);
    assertEquals(0, s.inflight());
  }

  @Test
  void refusesWhenClosedWithoutCounting() {
    Controlled c = new Controlled(5);
    LoadShedder s = shedder(c);
    long e = s.tryEnter(Priority.of(2, 127));
    assertTrue(e >= 0);
    s.close();
    assertEquals(LoadShedder.NOT_ADMITTED, s.tryEnter(Priority.HIGHEST));
    assertNoRejections(s);
    s.exit(e, Outcome.SUCCESS);
    assertEquals(0, s.inflight(), "a permit held over close() may still be given back");
    assertEquals(1, s.count(Snapshot.Counter.ADMITTED, 2));
    assertEquals(1, s.count(Snapshot.Counter.SUCCEEDED, 2));
  }

  @Test
  void refusesBadArgumentsWithoutReleasingAnything() {
    LoadShedder s = shedder(new Controlled(5));
    long e = s.tryEnter(Priority.of(5, 127));
    assertTrue(e >= 0);
    refused(() -> s.exit(LoadShedder.NOT_ADMITTED, Outcome.SUCCESS), "entry", "NOT_ADMITTED");
    refused(() -> s.exit(-2, Outcome.SUCCESS), "entry", "-2");
    refused(() -> s.exit(Long.MIN_VALUE, Outcome.SUCCESS), "entry");
    refused(() -> s.exit(6, Outcome.SUCCESS), "entry", "6");
    refused(() -> s.exit(7, Outcome.SUCCESS), "entry");
    refused(() -> s.exit(1L << 20, Outcome.SUCCESS), "entry");
    NullPointerException npe =
        assertThrows(NullPointerException.class, () -> s.exit(e, null));
    assertEquals("outcome", npe.getMessage());
    refused(() -> s.tryEnter(-1), "priority");
    refused(() -> s.tryEnter(Priority.LEVELS), "priority");
    assertEquals(1, s.inflight(), "nothing was released");
    assertEquals(0, s.snapshot().total(Snapshot.Counter.SUCCEEDED));
    s.exit(e, Outcome.SUCCESS);
    assertEquals(0, s.inflight());
  }

  @Test
  void aSampledEntryRecordsItsLatencyOnSuccessOnly() {
    Controlled c = new Controlled(10);
    LoadShedder s = shedder(c);
    // The first interval samples every admission.
    long ok = s.tryEnter(0);
    long failed = s.tryEnter(0);
    time.advance(7 * MS);
    s.exit(ok, Outcome.SUCCESS);
    s.exit(failed, Outcome.ERROR);
    tick();
    assertEquals(1, c.samples);
    assertEquals(7 * MS, c.meanLatency);
  }

  @Test
  void latencyIsRightAcrossTheWrapOfTheEntrysClockBits() {
    // A clock just below a multiple of 2^59: the entry keeps only the low 59 bits of the start.
    long offset = (3L << 59) - 2 * MS;
    Timer shifted = new Timer() {
      @Override
      public Clock clock() {
        return () -> time.nanoTime() + offset;
      }

      @Override
      public Timeout schedule(Runnable task, long deadlineNanos) {
        return time.schedule(task, deadlineNanos - offset);
      }
    };
    Controlled c = new Controlled(10);
    LoadShedder s = LoadShedder.builder().timer(shifted).limit(() -> c)
        .rejector(Rejectors::none).build();
    long e = s.tryEnter(0);
    assertTrue(e >= 0);
    time.advance(5 * MS);
    s.exit(e, Outcome.SUCCESS);
    time.advance(INTERVAL);
    assertEquals(1, c.samples);
    assertEquals(5 * MS, c.meanLatency);
  }

  @Test
  void mixesWithTheRequestPathOnOneLimit() {
    Controlled c = new Controlled(2);
    LoadShedder s = shedder(c);
    Recorder a = new Recorder();
    s.submit(0, a);
    long e = s.tryEnter(0);
    assertTrue(e >= 0);
    Recorder queued = new Recorder();
    s.submit(0, queued);
    assertEquals(1, s.queued());
    s.exit(e, Outcome.SUCCESS);
    assertNotNull(queued.permit, "exit hands the permit to the waiting request");
    assertNull(queued.reason);
    a.permit.success();
    queued.permit.success();
    assertEquals(0, s.inflight());
    assertEquals(3, s.count(Snapshot.Counter.ADMITTED, 0));
    assertEquals(3, s.count(Snapshot.Counter.SUCCEEDED, 0));
  }

  @Test
  void allocatesNothing() {
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    LoadShedder s = LoadShedder.builder().limit(() -> new Controlled(100))
        .rejector(Rejectors::none).build();
    try {
      for (int i = 0; i < 20_000; i++) {
        cycle(s, i);
      }
      long before = threads.getCurrentThreadAllocatedBytes();
      for (int i = 0; i < 100_000; i++) {
        cycle(s, i);
      }
      long allocated = threads.getCurrentThreadAllocatedBytes() - before;
      // One allocation of the smallest object, 16 bytes, every thousand cycles would show.
      assertTrue(allocated < 1_000, allocated + " bytes for 100,000 cycles");
      assertEquals(0, s.inflight());
    } finally {
      s.close();
    }
  }

  private static void cycle(LoadShedder s, int i) {
    long e = s.tryEnter(Priority.of(i % Priority.TIERS, 7));
    if (e < 0) {
      throw new AssertionError("not admitted");
    }
    s.exit(e, Outcome.SUCCESS);
  }

  private static void assertNoRejections(LoadShedder s) {
    Snapshot snap = s.snapshot();
    for (Snapshot.Counter k : new Snapshot.Counter[] {Snapshot.Counter.SHED,
        Snapshot.Counter.QUEUE_FULL, Snapshot.Counter.SHUTTING_DOWN}) {
      assertEquals(0, snap.total(k), k.toString());
    }
  }

  private static void refused(Executable call, String... words) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    for (String w : words) {
      assertTrue(e.getMessage().contains(w), "message should mention '" + w + "': "
          + e.getMessage());
    }
  }
}
