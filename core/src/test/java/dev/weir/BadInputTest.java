package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.Limits;
import dev.weir.control.PidRejector;
import dev.weir.control.Rejectors;
import dev.weir.control.VegasLimit;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Nonsense in, clear error out: every malformed priority, out-of-range value and invalid setting
 * throws {@link IllegalArgumentException} whose message names what is wrong, and a refused request
 * leaves no trace in the shedder.
 */
class BadInputTest {

  /** Asserts an IllegalArgumentException whose message mentions every one of {@code words}. */
  private static IllegalArgumentException refused(Executable call, String... words) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    String message = e.getMessage();
    for (String w : words) {
      assertTrue(message != null && message.contains(w),
          "message should mention '" + w + "': " + message);
    }
    // Hostile input must not be echoed back in full (headers can be megabytes).
    assertTrue(message.length() < 200, "message too long: " + message.length());
    return e;
  }

  // ------------------------------------------------------------------------------ priority text

  @Test
  void nullPriorityText() {
    refused(() -> Priority.parse(null), "null");
    refused(() -> Priority.parse(null, 3), "null");
    refused(() -> Priority.parseTier(null), "null");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "\t \n"})
  void emptyPriorityText(String text) {
    refused(() -> Priority.parse(text), "empty");
    refused(() -> Priority.parseTier(text), "tier");
  }

  @ParameterizedTest
  @ValueSource(strings = {"x", "one", "0x1", "+1", "1.0", "1e0", "1 2", "\u0661", "1;2", "1,2"})
  void nonNumericTier(String text) {
    refused(() -> Priority.parse(text), "tier");
  }

  @Test
  void missingCohortAfterColon() {
    refused(() -> Priority.parse("1:"), "cohort", "missing");
    refused(() -> Priority.parse("1: "), "cohort", "missing");
  }

  @Test
  void missingTierBeforeColon() {
    refused(() -> Priority.parse(":3"), "tier", "missing");
    refused(() -> Priority.parse(":"), "tier", "missing");
  }

  @Test
  void moreThanOneColon() {
    refused(() -> Priority.parse("1:2:3"), "cohort");
    refused(() -> Priority.parse("1::2"), "cohort");
  }

  @Test
  void negativeTier() {
    refused(() -> Priority.parse("-1"), "tier");
    refused(() -> Priority.parse("1:-1"), "cohort");
    refused(() -> Priority.parseTier("-0"), "tier");
  }

  @Test
  void tierOutOfRange() {
    refused(() -> Priority.parse("6"), "tier", "0..5");
    refused(() -> Priority.parse("6:0"), "tier", "0..5");
    refused(() -> Priority.parseTier("6"), "tier", "0..5");
    refused(() -> Priority.parseTier("10"), "tier");
  }

  @Test
  void cohortOutOfRange() {
    refused(() -> Priority.parse("1:128"), "cohort", "0..127");
    refused(() -> Priority.parse("1:1000"), "cohort", "0..127");
    refused(() -> Priority.parse("3", 128), "cohort", "0..127");
    refused(() -> Priority.parse("3", -1), "cohort");
  }

  @Test
  void hugeNumbersNeitherOverflowNorEchoInFull() {
    String digits = "1".repeat(64 * 1024);
    refused(() -> Priority.parse(digits), "tier");
    refused(() -> Priority.parse("1:" + digits), "cohort");
    refused(() -> Priority.parseTier(digits), "tier");
    // 2^32 + 1 would wrap to 1 in an int accumulator: it must still be out of range.
    refused(() -> Priority.parse("4294967297"), "tier");
    refused(() -> Priority.parse("1:4294967297"), "cohort");
    refused(() -> Priority.parse(" ".repeat(64 * 1024) + "x"), "tier");
    // Leading zeros are just a long way of writing a small number.
    assertEquals(Priority.of(1, 2), Priority.parse("0".repeat(64 * 1024) + "1:02"));
  }

  @Test
  void surroundingWhiteSpaceIsIgnoredButInnerWhiteSpaceIsNot() {
    assertEquals(Priority.of(3, 17), Priority.parse(" 3:17 "));
    assertEquals(Priority.of(3, 17), Priority.parse("\t3:17\r\n"));
    assertEquals(Priority.of(2, 9), Priority.parse(" 2 ", 9));
    refused(() -> Priority.parse("3 :17"), "tier");
    refused(() -> Priority.parse("3: 17"), "cohort");
  }

  @Test
  void validTextRoundTrips() {
    for (int p = 0; p < Priority.LEVELS; p++) {
      assertEquals(p, Priority.parse(Priority.toString(p)));
    }
    assertEquals(Priority.of(4, 0), Priority.parse("4"));
    assertEquals(5, Priority.parseTier("5"));
  }

  // --------------------------------------------------------------------------- packed priority

  @Test
  void priorityOfRefusesOutOfRangeTiersAndCohorts() {
    for (int tier : new int[] {-1, 6, 7, Integer.MIN_VALUE, Integer.MAX_VALUE}) {
      refused(() -> Priority.of(tier, 0), "tier", "0..5", Integer.toString(tier));
    }
    for (int cohort : new int[] {-1, 128, 129, Integer.MIN_VALUE, Integer.MAX_VALUE}) {
      refused(() -> Priority.of(0, cohort), "cohort", "0..127", Integer.toString(cohort));
    }
    assertEquals(Priority.LOWEST, Priority.of(5, 127));
    assertEquals(Priority.HIGHEST, Priority.of(0, 0));
  }

  @Test
  void packedPriorityChecks() {
    for (int p : new int[] {-1, Priority.LEVELS, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
      assertFalse(Priority.isValid(p));
      refused(() -> Priority.check(p), "priority", "0..767");
      refused(() -> Priority.toString(p), "priority");
    }
  }

  // ------------------------------------------------------------------------------------ builder

  private static void refusedSetting(String setting, Consumer<LoadShedder.Builder> set) {
    refused(() -> set.accept(LoadShedder.builder()), setting);
  }

  @Test
  void requestTimeoutMustBePositiveAndRepresentable() {
    refusedSetting("requestTimeout", b -> b.requestTimeout(null));
    refusedSetting("requestTimeout", b -> b.requestTimeout(Duration.ZERO));
    refusedSetting("requestTimeout", b -> b.requestTimeout(Duration.ofMillis(-1)));
    refusedSetting("requestTimeout", b -> b.requestTimeout(Duration.ofSeconds(Long.MAX_VALUE)));
    refusedSetting("requestTimeout", b -> b.requestTimeout(Duration.ofDays(365L * 1000)));
  }

  @Test
  void queueTimeoutMustBePositiveAndRepresentable() {
    refusedSetting("queueTimeout", b -> b.queueTimeout(null));
    refusedSetting("queueTimeout", b -> b.queueTimeout(Duration.ZERO));
    refusedSetting("queueTimeout", b -> b.queueTimeout(Duration.ofNanos(-1)));
    refusedSetting("queueTimeout", b -> b.queueTimeout(Duration.ofSeconds(Long.MAX_VALUE)));
  }

  @Test
  void aTinyRequestTimeoutStillGivesAPositiveQueueTimeout() {
    LoadShedder s = LoadShedder.builder().timer(new VirtualTime())
        .requestTimeout(Duration.ofNanos(2)).build();
    assertTrue(s.queueTimeoutNanos() > 0, "queueTimeoutNanos " + s.queueTimeoutNanos());
    s.close();
  }

  @Test
  void aSnapshotsCountOfATierOutOfRangeNamesTheTier() {
    LoadShedder s = LoadShedder.builder().timer(new VirtualTime()).build();
    for (int tier : new int[] {-1, 6}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> s.snapshot().count(Snapshot.Counter.ADMITTED, tier));
      assertTrue(e.getMessage().startsWith("tier"), e.getMessage());
      assertThrows(IllegalArgumentException.class, () -> s.count(Snapshot.Counter.ADMITTED, tier));
    }
    s.close();
  }

  @Test
  void aWorkerPoolsKeepAliveBeyondNanosecondsNamesTheSetting() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> WorkerPool.elastic("x", 0, 1, Duration.ofSeconds(Long.MAX_VALUE)));
    assertTrue(e.getMessage().startsWith("keepAlive"), e.getMessage());
  }

  @Test
  void queueTimeoutMustNotExceedRequestTimeout() {
    refused(() -> LoadShedder.builder()
        .requestTimeout(Duration.ofSeconds(1))
        .queueTimeout(Duration.ofMillis(1001))
        .timer(new VirtualTime())
        .build(), "queueTimeout", "requestTimeout");
    // Equal is fine.
    LoadShedder.builder().requestTimeout(Duration.ofSeconds(1)).queueTimeout(Duration.ofSeconds(1))
        .timer(new VirtualTime()).build().close();
  }

  @Test
  void queueCapacityMustBeAtLeastOne() {
    for (int c : new int[] {0, -1, Integer.MIN_VALUE}) {
      refusedSetting("queueCapacity", b -> b.queueCapacity(c));
    }
  }

  @Test
  void controlIntervalMustBeAtLeastOneMillisecond() {
    refusedSetting("controlInterval", b -> b.controlInterval(null));
    refusedSetting("controlInterval", b -> b.controlInterval(Duration.ZERO));
    refusedSetting("controlInterval", b -> b.controlInterval(Duration.ofSeconds(-1)));
    refusedSetting("controlInterval", b -> b.controlInterval(Duration.ofNanos(999_999)));
    refusedSetting("controlInterval", b -> b.controlInterval(Duration.ofSeconds(Long.MAX_VALUE)));
    LoadShedder.builder().controlInterval(Duration.ofMillis(1)).timer(new VirtualTime()).build()
        .close();
  }

  @Test
  void nameMustNotBeBlank() {
    refusedSetting("name", b -> b.name(null));
    refusedSetting("name", b -> b.name(""));
    refusedSetting("name", b -> b.name(" \t"));
  }

  @Test
  void controllersAndTimerMustNotBeNull() {
    refusedSetting("timer", b -> b.timer(null));
    refusedSetting("limit", b -> b.limit(null));
    refusedSetting("rejector", b -> b.rejector(null));
  }

  @Test
  void aLimitWhoseInitialValueIsOutOfRangeIsRefused() {
    Limit broken = new Limit() {
      @Override
      public int initialLimit() {
        return 0;
      }

      @Override
      public int maxLimit() {
        return 10;
      }

      @Override
      public int update(ControlWindow window) {
        return 1;
      }
    };
    refused(() -> LoadShedder.builder().limit(() -> broken).timer(new VirtualTime()).build(), "limit");
  }

  @Test
  void fixedLimitMustBeAtLeastOne() {
    refused(() -> Limits.fixed(0), "limit");
    refused(() -> Limits.fixed(-5), "limit");
    assertEquals(1, Limits.fixed(1).maxLimit());
  }

  /** Each setting is checked by its setter, at once, not later by build(). */
  @Test
  void vegasLimitSettersRefuseBadValuesAtOnce() {
    refused(() -> VegasLimit.builder().targetQueue(0), "targetQueue");
    refused(() -> VegasLimit.builder().targetQueue(1), "targetQueue");
    refused(() -> VegasLimit.builder().targetQueue(Double.NaN), "targetQueue");
    refused(() -> VegasLimit.builder().initialLimit(0), "initialLimit");
    refused(() -> VegasLimit.builder().minLimit(0), "minLimit");
    refused(() -> VegasLimit.builder().maxLimit(0), "maxLimit");
    refused(() -> VegasLimit.builder().minSamples(0), "minSamples");
    refused(() -> VegasLimit.builder().maxWindow(null), "maxWindow");
    refused(() -> VegasLimit.builder().maxWindow(Duration.ZERO), "maxWindow");
    refused(() -> VegasLimit.builder().dropTolerance(-0.01), "dropTolerance");
    refused(() -> VegasLimit.builder().dropTolerance(1), "dropTolerance");
    refused(() -> VegasLimit.builder().baselineHorizon(null), "baselineHorizon");
    refused(() -> VegasLimit.builder().baselineHorizon(Duration.ofMillis(999)), "baselineHorizon");
  }

  /** Settings that are only wrong together are checked together, by build(). */
  @Test
  void vegasLimitChecksItsLimitsTogetherInBuild() {
    VegasLimit.Builder crossed = VegasLimit.builder().minLimit(10).maxLimit(5);
    refused(crossed::build, "maxLimit", "minLimit");
    refused(() -> VegasLimit.builder().initialLimit(2000).build(), "initialLimit");
    refused(() -> VegasLimit.builder().minLimit(8).build(), "initialLimit");
    assertEquals(8, VegasLimit.builder().minLimit(8).initialLimit(8).build().initialLimit());
  }

  @Test
  void pidRejectorSettersRefuseBadValuesAtOnce() {
    refused(() -> PidRejector.builder().detectionWindow(null), "detectionWindow");
    refused(() -> PidRejector.builder().detectionWindow(Duration.ZERO), "detectionWindow");
    refused(() -> PidRejector.builder().kp(-0.1), "kp");
    refused(() -> PidRejector.builder().kp(10.5), "kp");
    refused(() -> PidRejector.builder().ki(0), "ki");
    refused(() -> PidRejector.builder().ki(Double.NaN), "ki");
    refused(() -> PidRejector.builder().decay(0), "decay");
    refused(() -> PidRejector.builder().decay(1), "decay");
    refused(() -> PidRejector.builder().minArrivals(0), "minArrivals");
    refused(() -> PidRejector.builder().distributionDecay(1), "distributionDecay");
    refused(() -> PidRejector.builder().distributionDecay(-0.5), "distributionDecay");
    // The bounds themselves, where included, are accepted.
    PidRejector.builder().kp(0).kp(10).ki(10).distributionDecay(0).build();
  }

  @Test
  void workerPoolNeedsAThread() {
    refused(() -> WorkerPool.of("pool", 0), "threads");
    refused(() -> WorkerPool.of("pool", -1), "threads");
  }

  @Test
  void cohortRotationMustBeAtLeastOneSecond() {
    refused(() -> Cohorts.rotating(null), "cohortRotation");
    refused(() -> Cohorts.rotating(Duration.ZERO), "cohortRotation");
    refused(() -> Cohorts.rotating(Duration.ofSeconds(-1)), "cohortRotation");
    refused(() -> Cohorts.rotating(Duration.ofMillis(999)), "cohortRotation");
    assertEquals(1000, Cohorts.rotating(Duration.ofSeconds(1)).periodMillis());
  }

  @Test
  void anAbsurdlyLongCohortRotationMeansNever() {
    Cohorts never = Cohorts.rotating(Duration.ofSeconds(Long.MAX_VALUE));
    long now = System.currentTimeMillis();
    int c = never.cohort("user-42", now);
    assertEquals(c, never.cohort("user-42", 0));
    assertEquals(c, never.cohort("user-42", now + Duration.ofDays(365L * 1000).toMillis()));
    assertTrue(c >= 0 && c < Priority.COHORTS);
  }

  // ----------------------------------------------------------------------------------- requests

  private static LoadShedder smallShedder() {
    return LoadShedder.builder()
        .timer(new VirtualTime())
        .limit(() -> Limits.fixed(1))
        .rejector(Rejectors::none)
        .queueCapacity(4)
        .build();
  }

  private static void assertUntouched(LoadShedder s) {
    assertEquals(0, s.inflight());
    assertEquals(0, s.queued());
    Snapshot snap = s.snapshot();
    for (Snapshot.Counter c : Snapshot.Counter.values()) {
      assertEquals(0, snap.total(c), c + " counted a refused request");
    }
  }

  @Test
  void submitWithAnInvalidPriorityLeavesNoTrace() {
    LoadShedder s = smallShedder();
    Recorder r = new Recorder();
    for (int p : new int[] {-1, Priority.LEVELS, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
      refused(() -> s.submit(p, r), "priority");
      refused(() -> s.submit(p, TimeUnit.SECONDS.toNanos(1), r), "priority");
      refused(() -> s.acquire(p), "priority");
    }
    assertEquals(0, r.calls, "a refused request's callback is never called");
    assertUntouched(s);
  }

  @Test
  void submitWithANonPositiveTimeoutLeavesNoTrace() {
    LoadShedder s = smallShedder();
    Recorder r = new Recorder();
    for (long t : new long[] {0, -1, Long.MIN_VALUE}) {
      refused(() -> s.submit(0, t, r), "timeout");
      refused(() -> s.acquire(0, t, TimeUnit.MILLISECONDS), "timeout");
    }
    assertEquals(0, r.calls);
    assertUntouched(s);
  }

  @Test
  void submitWithANullCallbackLeavesNoTrace() {
    LoadShedder s = smallShedder();
    assertThrows(NullPointerException.class, () -> s.submit(0, null));
    assertUntouched(s);
  }

  @Test
  void invalidRequestsWhileQueuedDoNotDisturbTheQueue() {
    LoadShedder s = smallShedder();
    Recorder holder = new Recorder();
    Recorder waiter = new Recorder();
    s.submit(0, holder);
    s.submit(0, waiter);
    refused(() -> s.submit(Priority.LEVELS, new Recorder()), "priority");
    refused(() -> s.submit(0, 0, new Recorder()), "timeout");
    assertEquals(1, s.inflight());
    assertEquals(1, s.queued());
    holder.permit.success();
    waiter.permit.success();
    assertEquals(0, s.inflight());
    assertEquals(0, s.queued());
  }

  @Test
  void releaseWithANullOutcomeKeepsThePermit() {
    LoadShedder s = smallShedder();
    Recorder r = new Recorder();
    s.submit(0, r);
    assertThrows(NullPointerException.class, () -> r.permit.release(null));
    assertFalse(r.permit.isReleased());
    assertEquals(1, s.inflight());
    assertThrows(NullPointerException.class, () -> r.permit.onDeadline(null));
    assertTrue(r.permit.success());
    assertEquals(0, s.inflight());
  }

  @Test
  void countersRefuseTiersOutOfRange() {
    LoadShedder s = smallShedder();
    for (int tier : new int[] {-1, Priority.TIERS, 1000}) {
      refused(() -> s.count(Snapshot.Counter.ADMITTED, tier), "tier");
      refused(() -> s.totalQueueWaitNanos(tier), "tier");
    }
  }

  /** The same in virtual time, whose timer takes a wrapped deadline for one in the past. */
  @Test
  void aHugePerRequestTimeoutDoesNotTimeOutInVirtualTimeEither() {
    VirtualTime time = new VirtualTime(TimeUnit.DAYS.toNanos(1));
    LoadShedder s = LoadShedder.builder()
        .timer(time)
        .limit(() -> Limits.fixed(1))
        .rejector(Rejectors::none)
        .requestTimeout(Duration.ofSeconds(1))
        .queueTimeout(Duration.ofSeconds(1))
        .controlInterval(Duration.ofDays(100)) // a few control ticks, not a year's worth
        // The holder keeps its permit for a year: not the watchdog's test.
        .watchdogGrace(Duration.ofDays(1000))
        .build();
    Recorder holder = new Recorder();
    s.submit(0, holder);
    Recorder forever = new Recorder();
    s.submit(0, Long.MAX_VALUE, forever);
    time.advance(TimeUnit.DAYS.toNanos(365));
    assertEquals(0, forever.calls, "timed out: " + forever.reason);
    assertEquals(1, s.queued());
    holder.permit.success();
    forever.permit.onDeadline(() -> {
      throw new AssertionError("a deadline a lifetime away passed");
    });
    time.advance(TimeUnit.DAYS.toNanos(365));
    assertTrue(forever.permit.success());
    assertEquals(1, s.snapshot().total(Snapshot.Counter.DEADLINE_MISSED), "only the holder's");
  }

  /**
   * A huge per-request timeout (a client asking for "forever") makes {@code now + timeout} wrap
   * past {@link Long#MAX_VALUE}. With the queue timeout equal to the request timeout the request may
   * wait that long too; it must stay queued, not time out at the timer's next tick.
   */
  @Test
  void aHugePerRequestTimeoutDoesNotTimeOutAtOnce() throws Exception {
    try (LoadShedder s = LoadShedder.builder()
        .limit(() -> Limits.fixed(1))
        .rejector(Rejectors::none)
        .requestTimeout(Duration.ofSeconds(1))
        .queueTimeout(Duration.ofSeconds(1))
        .build()) {
      Recorder holder = new Recorder();
      s.submit(0, holder);
      Recorder forever = new Recorder();
      s.submit(0, Long.MAX_VALUE, forever);
      CountDownLatch timedOut = new CountDownLatch(1);
      RejectReason[] reason = {null};
      // Queued behind the first; it times out after 50 ms, proving the timer has run since.
      s.submit(0, TimeUnit.MILLISECONDS.toNanos(50), new AdmissionCallback() {
        @Override
        public void onAdmitted(Permit permit) {
          permit.success();
        }

        @Override
        public void onRejected(RejectReason r) {
          reason[0] = r;
          timedOut.countDown();
        }
      });
      assertTrue(timedOut.await(10, TimeUnit.SECONDS));
      assertEquals(RejectReason.QUEUE_TIMEOUT, reason[0]);
      // Both timeouts run on the timer thread, in deadline order; the latch publishes both.
      assertEquals(0, forever.calls, "timed out at once: " + forever.reason);
      assertEquals(1, s.queued());
      holder.permit.success();
      assertNull(forever.reason);
      forever.permit.success();
      assertEquals(0, s.inflight());
    }
  }
}
