package dev.weir.examples.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The warm-up's rule: steps until one is quiet, within a bound. */
class JitWarmupTest {

  @Test
  void stepsUntilAStepCompilesNothingMore() throws Exception {
    AtomicInteger steps = new AtomicInteger();
    long[] total = {1_000};
    // Two steps that compile for 100 ms each (far above 1% of any step), then a quiet one.
    boolean quiet = JitWarmup.settle(total[0], 60, () -> {
      long t = System.nanoTime();
      while (System.nanoTime() == t) {
        Thread.onSpinWait(); // a step lasts some time, however coarse the clock
      }
      if (steps.incrementAndGet() <= 2) {
        total[0] += 100;
      }
      return total[0];
    });
    assertTrue(quiet);
    assertEquals(3, steps.get());
  }

  @Test
  void aJvmThatDoesNotTimeItsCompilersIsNotWarmedAtAll() throws Exception {
    AtomicInteger steps = new AtomicInteger();
    assertFalse(JitWarmup.settle(-1, 60, () -> steps.incrementAndGet()));
    assertEquals(0, steps.get());
  }

  @Test
  void quietIsLessThanOnePercentOfTheStep() {
    long twoSeconds = 2_000_000_000L;
    assertTrue(JitWarmup.quiet(19, twoSeconds));
    assertFalse(JitWarmup.quiet(20, twoSeconds));
  }
}
