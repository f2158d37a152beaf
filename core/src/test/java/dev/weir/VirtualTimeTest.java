package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Virtual time reads deadlines by their difference from now, as {@link Clock} says: a clock that
 * starts near {@link Long#MAX_VALUE}, or a deadline that wraps past it, still means "later".
 */
class VirtualTimeTest {
  private static final long SECOND = 1_000_000_000L;

  @Test
  void aTaskDueInOneSecondWaitsItsSecondAcrossTheWrap() {
    VirtualTime vt = new VirtualTime(Long.MAX_VALUE - SECOND / 2);
    List<Long> ran = new ArrayList<>();
    vt.schedule(() -> ran.add(vt.nanoTime()), vt.nanoTime() + SECOND);
    vt.advance(SECOND / 1000);
    assertTrue(ran.isEmpty(), "ran after 1 ms");
    vt.advance(SECOND);
    assertEquals(List.of(Long.MAX_VALUE - SECOND / 2 + SECOND), ran, "at its deadline, wrapped");
  }

  @Test
  void tasksRunInDeadlineOrderAcrossTheWrapAndAPassedDeadlineRunsAtOnce() {
    VirtualTime vt = new VirtualTime(Long.MAX_VALUE - 10);
    List<String> ran = new ArrayList<>();
    vt.schedule(() -> ran.add("after"), vt.nanoTime() + 20); // wraps to a negative value
    vt.schedule(() -> ran.add("before"), vt.nanoTime() + 5);
    vt.schedule(() -> ran.add("passed"), vt.nanoTime() - 5);
    vt.advance(0);
    assertEquals(List.of("passed"), ran);
    vt.advance(30);
    assertEquals(List.of("passed", "before", "after"), ran);
  }

  @Test
  void aShedderOnAClockAboutToWrapTimesItsQueueOut() {
    assertTimeoutPreemptively(Duration.ofSeconds(10), this::shedderAcrossTheWrap); // not a hang
  }

  private void shedderAcrossTheWrap() {
    VirtualTime vt = new VirtualTime(Long.MAX_VALUE - SECOND / 2);
    LoadShedder s = LoadShedder.builder().timer(vt).limit(() -> Limits.fixed(1))
        .rejector(Rejectors::none).requestTimeout(Duration.ofSeconds(3)).build();
    List<Object> heard = new ArrayList<>();
    AdmissionCallback record = new AdmissionCallback() {
      @Override
      public void onAdmitted(Permit permit) {
        heard.add("admitted");
      }

      @Override
      public void onRejected(RejectReason reason) {
        heard.add(reason);
      }
    };
    s.submit(Priority.of(1, 0), record);
    s.submit(Priority.of(1, 0), record);
    vt.advance(SECOND / 2);
    assertEquals(List.of("admitted"), heard, "the queue timeout is a second away");
    vt.advance(SECOND);
    assertEquals(List.of("admitted", RejectReason.QUEUE_TIMEOUT), heard);
    s.close();
  }

  @Test
  void aControlIntervalOfNearlyForeverNeverTicks() {
    assertTimeoutPreemptively(Duration.ofSeconds(10), this::nearlyForever); // not a hang
  }

  private void nearlyForever() {
    VirtualTime vt = new VirtualTime(1);
    LoadShedder s = LoadShedder.builder().timer(vt)
        .controlInterval(Duration.ofNanos(Long.MAX_VALUE)).build();
    long start = vt.nanoTime();
    vt.advance(100 * SECOND); // returns: the tick, a wrapped sum away, is not due
    assertEquals(100 * SECOND, vt.nanoTime() - start);
    assertTrue(vt.pending() <= 2, vt.pending() + " tasks pending");
    s.close();
  }
}
