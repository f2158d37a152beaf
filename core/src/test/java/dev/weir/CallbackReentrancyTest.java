package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Callbacks may call back into the shedder (release, submit, cancel) from inside the call that
 * answers them. These run the shedder's entry points on a separate daemon thread so that a bug that
 * spins for ever fails the test instead of hanging the build.
 */
class CallbackReentrancyTest {
  private final VirtualTime time = new VirtualTime();

  private LoadShedder shedder(int limit, int capacity) {
    return LoadShedder.builder()
        .timer(time)
        .limit(() -> Limits.fixed(limit))
        .rejector(Rejectors::none)
        .requestTimeout(Duration.ofSeconds(3))
        .queueCapacity(capacity)
        .build();
  }

  private static void within(long seconds, Runnable body) throws Exception {
    CompletableFuture<Void> done = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        body.run();
        done.complete(null);
      } catch (Throwable e) {
        done.completeExceptionally(e);
      }
    }, "reentrancy-test");
    t.setDaemon(true);
    t.start();
    done.get(seconds, TimeUnit.SECONDS);
  }

  /**
   * An evicted request's callback releases the permit its client held for a related request (both
   * abandoned together). The evicting submit has reserved the victim's place but not yet filled
   * it; the release must not spin waiting for a fill that only this very thread can do.
   */
  @Test
  void anEvictedRequestsCallbackMayReleaseAPermit() throws Exception {
    LoadShedder s = shedder(1, 1);
    Recorder holder = new Recorder();
    s.submit(Priority.of(0, 0), holder);
    Recorder high = new Recorder();
    int[] victimCalls = {0};
    RejectReason[] victimReason = {null};
    s.submit(Priority.of(5, 0), new AdmissionCallback() {
      @Override
      public void onAdmitted(Permit permit) {
        victimCalls[0]++;
      }

      @Override
      public void onRejected(RejectReason reason) {
        victimCalls[0]++;
        victimReason[0] = reason;
        holder.permit.success();
      }
    });
    assertEquals(1, s.queued());

    within(10, () -> s.submit(Priority.of(1, 0), high));

    assertEquals(1, victimCalls[0]);
    assertEquals(RejectReason.QUEUE_FULL, victimReason[0]);
    assertNotNull(high.permit, "the freed permit goes to the request that evicted the victim");
    assertNull(high.reason);
    assertEquals(1, s.inflight());
    assertEquals(0, s.queued());
    assertTrue(high.permit.success());
    assertEquals(0, s.inflight());
  }

  /** An evicted request's callback submits a replacement at once (a client-side retry). */
  @Test
  void anEvictedRequestsCallbackMaySubmitAgain() throws Exception {
    LoadShedder s = shedder(1, 1);
    Recorder holder = new Recorder();
    s.submit(Priority.of(0, 0), holder);
    Recorder retry = new Recorder();
    s.submit(Priority.of(5, 0), new AdmissionCallback() {
      @Override
      public void onAdmitted(Permit permit) {}

      @Override
      public void onRejected(RejectReason reason) {
        s.submit(Priority.of(5, 1), retry);
      }
    });
    Recorder high = new Recorder();
    within(10, () -> s.submit(Priority.of(1, 0), high));
    assertEquals(RejectReason.QUEUE_FULL, retry.reason, "the queue holds the more important one");
    assertEquals(1, retry.calls);
    assertEquals(1, s.queued());
    holder.permit.success();
    assertNotNull(high.permit);
    high.permit.success();
    assertEquals(0, s.inflight());
    assertEquals(0, s.queued());
  }

  /** A timed-out request's callback, on the timer, releases another permit and submits again. */
  @Test
  void aTimedOutRequestsCallbackMayReleaseAndSubmit() throws Exception {
    LoadShedder s = shedder(1, 10);
    Recorder holder = new Recorder();
    s.submit(0, holder);
    Recorder resubmitted = new Recorder();
    s.submit(3, new AdmissionCallback() {
      @Override
      public void onAdmitted(Permit permit) {}

      @Override
      public void onRejected(RejectReason reason) {
        assertEquals(RejectReason.QUEUE_TIMEOUT, reason);
        holder.permit.success();
        s.submit(3, resubmitted);
      }
    });
    within(10, () -> time.advance(TimeUnit.SECONDS.toNanos(1)));
    assertNotNull(resubmitted.permit);
    assertEquals(1, s.inflight());
    resubmitted.permit.success();
    assertEquals(0, s.inflight());
    assertEquals(0, s.queued());
  }
}
