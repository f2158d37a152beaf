package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.control.Limits;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class WorkerPoolTest {

  private static int threadsNamed(String prefix) {
    int n = 0;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith(prefix) && t.isAlive()) {
        n++;
      }
    }
    return n;
  }

  @Test
  void threadsArePrestartedNamedAndDaemon() {
    try (WorkerPool pool = WorkerPool.of("prestart-test", 3)) {
      assertEquals(3, pool.size());
      assertEquals(3, pool.liveThreads(), "started before any task");
      assertEquals(3, threadsNamed("prestart-test-"));
      for (Thread t : Thread.getAllStackTraces().keySet()) {
        if (t.getName().startsWith("prestart-test-")) {
          assertTrue(t.isDaemon(), t.getName() + " would keep the JVM alive");
          assertTrue(t.getName().matches("prestart-test-[1-3]"), t.getName());
        }
      }
    }
  }

  @Test
  void threadsAreReused() throws Exception {
    int size = 4;
    int tasks = 10_000;
    Set<String> names = ConcurrentHashMap.newKeySet();
    Set<Thread> threads = ConcurrentHashMap.newKeySet();
    CountDownLatch done = new CountDownLatch(tasks);
    try (WorkerPool pool = WorkerPool.of("reuse-test", size)) {
      for (int i = 0; i < tasks; i++) {
        pool.execute(() -> {
          names.add(Thread.currentThread().getName());
          threads.add(Thread.currentThread());
          done.countDown();
        });
      }
      assertTrue(done.await(30, TimeUnit.SECONDS));
      assertTrue(names.size() <= size, "ran on " + names);
      assertEquals(names.size(), threads.size(), "no thread was replaced");
      assertEquals(size, pool.liveThreads());
      for (String n : names) {
        assertTrue(n.startsWith("reuse-test-"), n);
      }
    }
  }

  @Test
  void aThrowingTaskDoesNotShrinkThePool() throws Exception {
    try (WorkerPool pool = WorkerPool.of("throw-test", 2)) {
      CountDownLatch ran = new CountDownLatch(1);
      Thread.UncaughtExceptionHandler old = Thread.getDefaultUncaughtExceptionHandler();
      Thread.setDefaultUncaughtExceptionHandler((t, e) -> {});
      try {
        pool.execute(() -> {
          throw new IllegalStateException("task failure, expected by the test");
        });
        pool.execute(ran::countDown);
        assertTrue(ran.await(10, TimeUnit.SECONDS));
        // The executor replaces a worker killed by its task; poll for it with a deadline.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (pool.liveThreads() != 2 && System.nanoTime() - deadline < 0) {
          Thread.onSpinWait();
        }
        assertEquals(2, pool.liveThreads());
      } finally {
        Thread.setDefaultUncaughtExceptionHandler(old);
      }
    }
  }

  @Test
  void closeFinishesAcceptedTasksThenRefusesNewOnes() throws Exception {
    int tasks = 1_000;
    AtomicInteger ran = new AtomicInteger();
    CountDownLatch gate = new CountDownLatch(1);
    WorkerPool pool = WorkerPool.of("close-test", 2);
    // Both workers wait on the gate, so the rest queue up behind them.
    for (int i = 0; i < 2; i++) {
      pool.execute(() -> {
        try {
          gate.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        ran.incrementAndGet();
      });
    }
    for (int i = 0; i < tasks; i++) {
      pool.execute(ran::incrementAndGet);
    }
    Thread opener = new Thread(gate::countDown);
    pool.shutdown();
    assertThrows(RejectedExecutionException.class, () -> pool.execute(() -> {}));
    opener.start();
    pool.close();
    assertEquals(tasks + 2, ran.get(), "close() returned before accepted tasks finished");
    assertTrue(pool.awaitTermination(1, TimeUnit.SECONDS));
    assertThrows(RejectedExecutionException.class, () -> pool.execute(() -> {}));
  }

  @Test
  void forShedderHasAThreadPerPossiblePermit() {
    LoadShedder s = LoadShedder.builder().name("sized").limit(() -> Limits.fixed(5))
        .timer(new VirtualTime()).build();
    try (WorkerPool pool = WorkerPool.forShedder(s)) {
      assertEquals(5, pool.size());
      assertEquals(5, pool.liveThreads());
      assertEquals(5, threadsNamed("weir-sized-"));
    }
  }

  private static void awaitLive(WorkerPool pool, int n) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (pool.liveThreads() != n && System.nanoTime() - deadline < 0) {
      Thread.onSpinWait();
    }
    assertEquals(n, pool.liveThreads());
  }

  @Test
  void elasticStartsSmallGrowsUnderLoadAndShrinksWhenIdle() throws Exception {
    try (WorkerPool pool = WorkerPool.elastic("elastic-test", 2, 50, Duration.ofMillis(50))) {
      assertEquals(2, pool.liveThreads(), "only the core threads start at once");
      assertEquals(2, threadsNamed("elastic-test-"));
      assertEquals(50, pool.size());
      int busy = 20;
      CountDownLatch running = new CountDownLatch(busy);
      CountDownLatch release = new CountDownLatch(1);
      for (int i = 0; i < busy; i++) {
        pool.execute(() -> {
          running.countDown();
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
      }
      assertTrue(running.await(10, TimeUnit.SECONDS), "every task got a thread at once");
      assertEquals(busy, pool.liveThreads(), "grew to what is used, not to the maximum");
      release.countDown();
      awaitLive(pool, 2); // idle threads above the core end after the keep-alive
      assertTrue(pool.largestThreads() <= busy, "largest " + pool.largestThreads());
    }
  }

  @Test
  void elasticReusesIdleThreads() throws Exception {
    Set<Thread> threads = ConcurrentHashMap.newKeySet();
    try (WorkerPool pool = WorkerPool.elastic("elastic-reuse", 1, 100, Duration.ofSeconds(30))) {
      for (int i = 0; i < 1_000; i++) {
        CountDownLatch done = new CountDownLatch(1);
        pool.execute(() -> {
          threads.add(Thread.currentThread());
          done.countDown();
        });
        assertTrue(done.await(10, TimeUnit.SECONDS));
      }
      // One at a time: a new thread starts only when a task arrives in the instant before the
      // previous one's thread is back waiting, so a handful at most, never one per task.
      assertTrue(threads.size() <= 8, "1000 sequential tasks ran on " + threads.size() + " threads");
      assertTrue(pool.largestThreads() <= 8, "largest " + pool.largestThreads());
    }
  }

  @Test
  void elasticQueuesAtItsMaximumAndRunsEverything() throws Exception {
    int tasks = 500;
    AtomicInteger ran = new AtomicInteger();
    CountDownLatch gate = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(tasks);
    try (WorkerPool pool = WorkerPool.elastic("elastic-max", 0, 3, Duration.ofSeconds(30))) {
      assertEquals(0, pool.liveThreads());
      for (int i = 0; i < tasks; i++) {
        pool.execute(() -> {
          try {
            gate.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          ran.incrementAndGet();
          done.countDown();
        });
      }
      assertEquals(3, pool.liveThreads(), "never above the maximum");
      gate.countDown();
      assertTrue(done.await(10, TimeUnit.SECONDS));
      assertEquals(tasks, ran.get());
      assertEquals(3, pool.largestThreads());
      pool.shutdown();
      assertThrows(RejectedExecutionException.class, () -> pool.execute(() -> {}));
    }
  }

  @Test
  void elasticSettingsAreChecked() {
    assertThrows(IllegalArgumentException.class,
        () -> WorkerPool.elastic("x", -1, 2, Duration.ofSeconds(1)));
    assertThrows(IllegalArgumentException.class,
        () -> WorkerPool.elastic("x", 3, 2, Duration.ofSeconds(1)));
    assertThrows(IllegalArgumentException.class,
        () -> WorkerPool.elastic("x", 0, 0, Duration.ofSeconds(1)));
    assertThrows(IllegalArgumentException.class,
        () -> WorkerPool.elastic("x", 1, 2, Duration.ZERO));
  }
}
