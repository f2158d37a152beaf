package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Shedders joining, switching and leaving budgets from 8 threads at once, some closed meanwhile,
 * while others read their caps: at the end every budget's members are exactly the open shedders
 * that report it as theirs, and a closed shedder is in none.
 */
@Tag("stress")
class ConcurrencyBudgetStressTest {
  private static final int THREADS = 8;
  private static final int SHEDDERS = 6;
  private static final int CYCLES = 20_000;

  @Test
  void everyBudgetsMembersAreTheSheddersThatReportIt() throws Exception {
    VirtualTime time = new VirtualTime();
    ConcurrencyBudget[] budgets = {new ConcurrencyBudget(10), new ConcurrencyBudget(20),
        new ConcurrencyBudget(30)};
    List<LoadShedder> shedders = new ArrayList<>();
    for (int i = 0; i < SHEDDERS; i++) {
      shedders.add(LoadShedder.builder().timer(time).build());
    }
    CountDownLatch start = new CountDownLatch(1);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      Thread th = new Thread(() -> {
        try {
          start.await();
          ThreadLocalRandom r = ThreadLocalRandom.current();
          for (int c = 0; c < CYCLES; c++) {
            LoadShedder s = shedders.get(r.nextInt(SHEDDERS));
            int op = r.nextInt(100);
            if (op < 45) {
              s.capConcurrency(budgets[r.nextInt(budgets.length)]);
            } else if (op < 55) {
              s.capConcurrency(null);
            } else if (op < 65) {
              s.capConcurrency(1 + r.nextInt(50));
            } else if (op == 65 && r.nextInt(200) == 0) {
              s.close();
            } else {
              int cap = s.concurrencyCap();
              assertTrue(cap >= 1, "cap " + cap);
            }
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      });
      threads.add(th);
      th.start();
    }
    start.countDown();
    for (Thread th : threads) {
      th.join();
    }
    if (failure.get() != null) {
      throw new AssertionError(failure.get());
    }
    for (ConcurrencyBudget b : budgets) {
      int reporting = 0;
      for (LoadShedder s : shedders) {
        if (s.concurrencyBudget() == b) {
          reporting++;
          assertTrue(!s.isClosed(), "a closed shedder reports a budget");
        }
      }
      assertEquals(reporting, b.members(), b.toString());
    }
    for (LoadShedder s : shedders) {
      s.close();
      assertNull(s.concurrencyBudget());
    }
    for (ConcurrencyBudget b : budgets) {
      assertEquals(0, b.members(), "closed shedders leave: " + b);
    }
  }
}
