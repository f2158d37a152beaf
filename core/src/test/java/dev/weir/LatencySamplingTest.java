package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.Rejectors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The fast path reads the clock only for the admissions it samples. */
class LatencySamplingTest {
  private static final long INTERVAL = TimeUnit.MILLISECONDS.toNanos(100);

  /** Virtual time that counts how often it is read. */
  private static final class CountingTime implements Timer, Clock {
    final VirtualTime time = new VirtualTime();
    long reads;

    @Override
    public long nanoTime() {
      reads++;
      return time.nanoTime();
    }

    @Override
    public Clock clock() {
      return this;
    }

    @Override
    public Timeout schedule(Runnable task, long deadlineNanos) {
      return time.schedule(task, deadlineNanos);
    }
  }

  /**
   * A fixed limit that remembers the latency samples of the last window it saw, and the mean
   * latency of the last window with samples.
   */
  private static final class Recording implements Limit {
    final int limit;
    long samples;
    long successes;
    long meanNanos = -1;

    Recording() {
      this(100);
    }

    Recording(int limit) {
      this.limit = limit;
    }

    @Override
    public int initialLimit() {
      return limit;
    }

    @Override
    public int maxLimit() {
      return limit;
    }

    @Override
    public int update(ControlWindow w) {
      samples = w.latencySamples();
      successes = w.successes();
      if (samples > 0) {
        meanNanos = w.meanLatencyNanos();
      }
      return limit;
    }
  }

  private static final AdmissionCallback RELEASE = new AdmissionCallback() {
    @Override
    public void onAdmitted(Permit permit) {
      permit.success();
    }

    @Override
    public void onRejected(RejectReason reason) {
      throw new AssertionError(reason);
    }
  };

  @Test
  void theSampleRateFollowsTheAdmissionRate() {
    assertEquals(0, ControlLoop.sampleMaskFor(0));
    assertEquals(0, ControlLoop.sampleMaskFor(511));
    assertEquals(1, ControlLoop.sampleMaskFor(512));
    assertEquals(3, ControlLoop.sampleMaskFor(2_000));
    assertEquals(127, ControlLoop.sampleMaskFor(50_000));
  }

  @Test
  void atHighRatesMostAdmissionsSkipTheClockAndTheControllerStillGetsItsSamples() {
    CountingTime t = new CountingTime();
    Recording limit = new Recording();
    LoadShedder s = LoadShedder.builder().timer(t).limit(() -> limit).rejector(Rejectors::none)
        .build();
    // First interval: 10,000 admissions, every one read (nothing is known of the rate yet).
    for (int i = 0; i < 10_000; i++) {
      s.submit(Priority.of(i % 6, i % 128), RELEASE);
    }
    t.time.advance(INTERVAL);
    assertEquals(10_000, limit.samples, "the first interval samples everything");
    // Second interval, at the same rate: one admission in 32 reads the clock, twice.
    long before = t.reads;
    for (int i = 0; i < 10_000; i++) {
      s.submit(Priority.of(i % 6, i % 128), RELEASE);
    }
    long reads = t.reads - before;
    assertTrue(reads <= 2 * 10_000 / 32 + 100, reads + " clock reads for 10,000 admissions");
    t.time.advance(INTERVAL);
    assertEquals(10_000, limit.successes, "every release is still counted");
    assertTrue(limit.samples >= ControlLoop.SAMPLES_PER_INTERVAL, limit.samples + " samples");
    assertEquals(0, s.inflight());
  }

  @Test
  void aWatchedDeadlineIsTimedEvenWhenTheAdmissionIsNotSampled() {
    CountingTime t = new CountingTime();
    LoadShedder s = LoadShedder.builder().timer(t).limit(() -> new Recording())
        .rejector(Rejectors::none).requestTimeout(java.time.Duration.ofMillis(300)).build();
    for (int i = 0; i < 10_000; i++) {
      s.submit(0, RELEASE);
    }
    t.time.advance(INTERVAL);
    int[] fired = {0};
    Permit[] held = new Permit[1];
    s.submit(0, new AdmissionCallback() {
      @Override
      public void onAdmitted(Permit permit) {
        held[0] = permit;
        permit.onDeadline(() -> fired[0]++);
      }

      @Override
      public void onRejected(RejectReason reason) {
        throw new AssertionError(reason);
      }
    });
    t.time.advance(TimeUnit.MILLISECONDS.toNanos(299));
    assertEquals(0, fired[0]);
    t.time.advance(TimeUnit.MILLISECONDS.toNanos(2));
    assertEquals(1, fired[0]);
    assertEquals(1, s.count(Snapshot.Counter.DEADLINE_MISSED, 0));
    held[0].dropped();
    assertEquals(1, s.count(Snapshot.Counter.DEADLINE_MISSED, 0), "counted once");
  }

  @Test
  void askingAnUnsampledPermitsDeadlineLateMakesNoLatencySampleOfIt() {
    // Past the first interval one admission in four is sampled. Eight admitted at once and held
    // 600 ms, their deadlines asked for at 500 ms (an application checking the time it has
    // left): only the sampled ones count, each at its 600 ms from admission.
    VirtualTime t = new VirtualTime();
    Recording limit = new Recording();
    LoadShedder s = LoadShedder.builder().timer(t).limit(() -> limit).rejector(Rejectors::none)
        .requestTimeout(java.time.Duration.ofSeconds(1)).build();
    for (int i = 0; i < 2_000; i++) {
      s.submit(Priority.of(1, 0), RELEASE);
    }
    t.advance(INTERVAL);
    java.util.List<Permit> held = new java.util.ArrayList<>();
    for (int i = 0; i < 8; i++) {
      s.submit(Priority.of(1, 0), new AdmissionCallback() {
        @Override
        public void onAdmitted(Permit permit) {
          held.add(permit);
        }

        @Override
        public void onRejected(RejectReason reason) {
          throw new AssertionError(reason);
        }
      });
    }
    t.advance(TimeUnit.MILLISECONDS.toNanos(500));
    held.forEach(Permit::deadlineNanos);
    t.advance(TimeUnit.MILLISECONDS.toNanos(100));
    held.forEach(Permit::success);
    t.advance(INTERVAL); // the tick that sees the releases
    assertEquals(2, limit.samples, "one in four of the eight");
    assertEquals(TimeUnit.MILLISECONDS.toNanos(600), limit.meanNanos);
  }

  @Test
  void aHandOffBeforeTheApplicationStartsIsNotTheServicesLatency() {
    // A queued request is admitted on the thread that releases the permit before it; an adapter
    // hands it to another thread, which starts 40 ms later on a saturated machine, and the
    // application then takes 5 ms. The limit must learn 5 ms, not 45.
    VirtualTime t = new VirtualTime();
    Recording limit = new Recording(1);
    LoadShedder s = LoadShedder.builder().timer(t).limit(() -> limit).rejector(Rejectors::none)
        .build();
    Permit[] held = new Permit[2];
    for (int i = 0; i < 2; i++) {
      int slot = i;
      s.submit(0, new AdmissionCallback() {
        @Override
        public void onAdmitted(Permit permit) {
          held[slot] = permit;
        }

        @Override
        public void onRejected(RejectReason reason) {
          throw new AssertionError(reason);
        }
      });
    }
    assertEquals(1, s.queued());
    t.advance(TimeUnit.MILLISECONDS.toNanos(10));
    held[0].success(); // hands the permit to the queued request, on this thread
    Permit handedOff = held[1];
    t.advance(TimeUnit.MILLISECONDS.toNanos(40));
    handedOff.started();
    t.advance(TimeUnit.MILLISECONDS.toNanos(5));
    handedOff.success();
    assertEquals(TimeUnit.MILLISECONDS.toNanos(50), handedOff.queueWaitNanos(),
        "the wait until the application started, hand-off included");
    t.advance(INTERVAL);
    // One window holds both: the first request's 10 ms and the handed-off one's 5 ms (45 ms
    // counted from its admission would make the mean 27.5 ms).
    assertEquals(TimeUnit.MICROSECONDS.toNanos(7_500), limit.meanNanos,
        TimeUnit.MICROSECONDS.toNanos(100));
  }
}
