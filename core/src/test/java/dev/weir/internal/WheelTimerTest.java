package dev.weir.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.weir.Timer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The wheel on real time. Each test owns a timer with a small wheel (64 slots of 1 ms), so tasks
 * further out than 64 ms take several rounds. Waits are latches with generous timeouts: a loaded CI
 * box may run a task late, but never early and never not at all.
 */
class WheelTimerTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
  private static final AtomicInteger SEQ = new AtomicInteger();

  private final String threadName = "wheel-test-" + SEQ.incrementAndGet();
  private final WheelTimer timer = new WheelTimer(threadName, MS, 64);

  @AfterEach
  void stop() {
    timer.close();
  }

  private long now() {
    return timer.clock().nanoTime();
  }

  @Test
  void wheelSizeMustBeAPowerOfTwo() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> new WheelTimer("x", MS, 100));
    assertTrue(e.getMessage().contains("wheelSize"), e.getMessage());
  }

  @Test
  void tasksRunNoEarlierThanTheirDeadlineAndPromptlyAfter() throws Exception {
    int n = 200;
    long base = now();
    long[] deadlines = new long[n];
    AtomicLongArray ranAt = new AtomicLongArray(n);
    CountDownLatch done = new CountDownLatch(n);
    for (int i = 0; i < n; i++) {
      // 0..300 ms: several rounds of the 64-slot wheel.
      deadlines[i] = base + ThreadLocalRandom.current().nextLong(300 * MS);
      int id = i;
      timer.schedule(() -> {
        ranAt.set(id, now());
        done.countDown();
      }, deadlines[i]);
    }
    assertTrue(done.await(20, TimeUnit.SECONDS), "every task ran");
    long worstLateness = 0;
    for (int i = 0; i < n; i++) {
      long lateness = ranAt.get(i) - deadlines[i];
      assertTrue(lateness >= 0, "task " + i + " ran " + (-lateness) + " ns early");
      worstLateness = Math.max(worstLateness, lateness);
    }
    // A 1 ms tick runs a task within about a tick; 2 s leaves room for a very busy box.
    assertTrue(worstLateness < 2000 * MS, "worst lateness " + worstLateness / MS + " ms");
  }

  @Test
  void tasksInDifferentTicksRunInDeadlineOrder() throws Exception {
    long base = now();
    List<Integer> order = new ArrayList<>();
    CountDownLatch done = new CountDownLatch(5);
    // Scheduled in reverse; 10 ms apart so each lands in a different tick and slot.
    for (int i = 4; i >= 0; i--) {
      int id = i;
      timer.schedule(() -> {
        order.add(id); // only the timer thread writes; the latch publishes it
        done.countDown();
      }, base + (20 + 10 * i) * MS);
    }
    assertTrue(done.await(10, TimeUnit.SECONDS));
    assertEquals(List.of(0, 1, 2, 3, 4), order);
  }

  @Test
  void aCancelledTaskNeverRuns() throws Exception {
    AtomicInteger ran = new AtomicInteger();
    long base = now();
    Timer.Timeout t = timer.schedule(ran::incrementAndGet, base + 20 * MS);
    assertTrue(t.cancel());
    assertFalse(t.cancel(), "only the first cancel stops it");
    // A task due later than the cancelled one: once it ran, the cancelled one would have too.
    CountDownLatch sentinel = new CountDownLatch(1);
    timer.schedule(sentinel::countDown, base + 40 * MS);
    assertTrue(sentinel.await(10, TimeUnit.SECONDS));
    assertEquals(0, ran.get());
  }

  @Test
  void cancellingATaskThatRanReturnsFalse() throws Exception {
    CountDownLatch ran = new CountDownLatch(1);
    Timer.Timeout t = timer.schedule(ran::countDown, now());
    assertTrue(ran.await(10, TimeUnit.SECONDS));
    assertFalse(t.cancel());
  }

  @Test
  void manyScheduledAndCancelledTasksNeitherRunNorStayInTheWheel() throws Exception {
    int n = 100_000;
    AtomicInteger ran = new AtomicInteger();
    Runnable task = ran::incrementAndGet;
    long base = now();
    Timer.Timeout[] timeouts = new Timer.Timeout[n];
    for (int i = 0; i < n; i++) {
      // 200..700 ms out: many land in the wheel (several rounds) before they are cancelled.
      timeouts[i] = timer.schedule(task, base + (200 + i % 500) * MS);
    }
    int cancelled = 0;
    for (Timer.Timeout t : timeouts) {
      if (t.cancel()) {
        cancelled++;
      }
    }
    CountDownLatch sentinel = new CountDownLatch(1);
    timer.schedule(sentinel::countDown, base + 800 * MS);
    assertTrue(sentinel.await(20, TimeUnit.SECONDS));
    // On a very slow box a few may have come due before their cancel; those, and only those, ran.
    assertTrue(cancelled > n / 2, "only " + cancelled + " cancelled in time");
    assertEquals(n - cancelled, ran.get(), "a task ran although its cancel() returned true");
    // With nothing pending the timer thread ends; while any entry, even a cancelled one, remains
    // in the wheel it parks until that entry's tick.
    awaitIdle();
    assertEquals(n - cancelled, ran.get());
  }

  @Test
  void aTaskScheduledInThePastRunsAtTheNextTick() throws Exception {
    CountDownLatch ran = new CountDownLatch(2);
    long t0 = now();
    timer.schedule(ran::countDown, t0 - TimeUnit.SECONDS.toNanos(1));
    timer.schedule(ran::countDown, t0 - TimeUnit.HOURS.toNanos(1));
    assertTrue(ran.await(10, TimeUnit.SECONDS));
    assertTrue(now() - t0 < TimeUnit.SECONDS.toNanos(5));
  }

  /**
   * Deadlines are on a {@link System#nanoTime()} timeline, where only differences mean anything
   * and {@code now + timeout} may wrap past {@link Long#MAX_VALUE}. A deadline far in the future,
   * however it is written, must not run early.
   */
  @Test
  void aDeadlineFarInTheFutureDoesNotRunEarly() throws Exception {
    AtomicInteger ran = new AtomicInteger();
    long t0 = now();
    timer.schedule(ran::incrementAndGet, t0 + Long.MAX_VALUE); // wraps negative
    timer.schedule(ran::incrementAndGet, t0 + Long.MAX_VALUE / 2);
    timer.schedule(ran::incrementAndGet, Long.MAX_VALUE);
    timer.schedule(ran::incrementAndGet, t0 + TimeUnit.DAYS.toNanos(365 * 100));
    CountDownLatch sentinel = new CountDownLatch(1);
    timer.schedule(sentinel::countDown, t0 + 50 * MS);
    assertTrue(sentinel.await(10, TimeUnit.SECONDS));
    assertEquals(0, ran.get(), "a far-future task ran within 50 ms");
  }

  /**
   * A pending entry far ahead costs the thread no wake-up a tick: it parks until the tick whose
   * slot holds an entry. Polling every tick would take about 300 laps here, one a millisecond.
   */
  @Test
  void aPendingTaskCostsNoWakeUpsBeforeItsTick() throws Exception {
    CountDownLatch ran = new CountDownLatch(1);
    long lapsBefore = timer.laps();
    timer.schedule(ran::countDown, now() + 300 * MS);
    assertTrue(ran.await(10, TimeUnit.SECONDS));
    long laps = timer.laps() - lapsBefore;
    // Five rounds of the 64-slot wheel, one wake-up each, plus spurious wake-ups and the first.
    assertTrue(laps < 30, laps + " wake-ups for one task 300 ms away");
  }

  /**
   * While the thread parks until a far tick, a task due sooner wakes it: the scheduler unparks
   * the thread when the new deadline comes before the instant it parked until.
   */
  @Test
  void aTaskDueBeforeTheParkedUntilTickWakesTheTimer() throws Exception {
    // A wheel of 2^16 slots of 1 ms, so that a task a minute away is in this round: the thread
    // parks until it, about 60 s, rather than until the wheel comes round again.
    String name = threadName + "-wide";
    WheelTimer wide = new WheelTimer(name, MS, 1 << 16);
    try {
      wide.schedule(() -> { }, wide.clock().nanoTime() + TimeUnit.SECONDS.toNanos(60));
      awaitState(thread(name), Thread.State.TIMED_WAITING);
      CountDownLatch ran = new CountDownLatch(1);
      wide.schedule(ran::countDown, wide.clock().nanoTime() + 5 * MS);
      assertTrue(ran.await(10, TimeUnit.SECONDS), "the sooner task waited for the later one");
    } finally {
      wide.close();
    }
  }

  @Test
  void aTaskThatThrowsDoesNotKillTheTimer() throws Exception {
    Logger log = Logger.getLogger(WheelTimer.class.getName());
    Level old = log.getLevel();
    log.setLevel(Level.OFF); // the failure is logged; keep the build output clean
    try {
      CountDownLatch after = new CountDownLatch(2);
      long base = now();
      timer.schedule(() -> {
        throw new IllegalStateException("task failure, expected by the test");
      }, base);
      timer.schedule(() -> {
        throw new AssertionError("an Error, too");
      }, base);
      timer.schedule(after::countDown, base); // same tick as the failures
      timer.schedule(after::countDown, base + 30 * MS);
      assertTrue(after.await(10, TimeUnit.SECONDS));
    } finally {
      log.setLevel(old);
    }
  }

  @Test
  void aTaskMayScheduleAnother() throws Exception {
    CountDownLatch chain = new CountDownLatch(5);
    Runnable[] step = new Runnable[1];
    step[0] = () -> {
      chain.countDown();
      if (chain.getCount() > 0) {
        timer.schedule(step[0], now() + 2 * MS);
      }
    };
    timer.schedule(step[0], now());
    assertTrue(chain.await(10, TimeUnit.SECONDS));
  }

  @Test
  void scheduleFromManyThreadsLosesNothing() throws Exception {
    int threads = 4;
    int perThread = 5_000;
    CountDownLatch ran = new CountDownLatch(threads * perThread);
    List<Thread> schedulers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread th = new Thread(() -> {
        for (int i = 0; i < perThread; i++) {
          timer.schedule(ran::countDown, now() + ThreadLocalRandom.current().nextLong(100 * MS));
        }
      });
      schedulers.add(th);
      th.start();
    }
    for (Thread th : schedulers) {
      th.join();
    }
    assertTrue(ran.await(20, TimeUnit.SECONDS), ran.getCount() + " tasks never ran");
    awaitIdle();
  }

  @Test
  void closeStopsTheThreadAndNoScheduleStartsAnother() throws Exception {
    timer.schedule(() -> { }, now() + TimeUnit.SECONDS.toNanos(60));
    Thread t = timerThread();
    timer.close();
    t.join(TimeUnit.SECONDS.toMillis(10));
    assertFalse(t.isAlive());
    timer.schedule(() -> { }, now());
    assertFalse(timer.threadRunning(), "a closed timer started a thread");
  }

  @Test
  void theThreadEndsWithNothingPendingAndTheNextScheduleStartsAnother() throws Exception {
    assertFalse(timer.threadRunning(), "no thread before the first schedule");
    CountDownLatch first = new CountDownLatch(1);
    timer.schedule(first::countDown, now());
    assertTrue(first.await(10, TimeUnit.SECONDS));
    awaitIdle();
    CountDownLatch second = new CountDownLatch(1);
    timer.schedule(second::countDown, now() + 5 * MS);
    assertTrue(second.await(10, TimeUnit.SECONDS), "no thread ran the task after the first ended");
    awaitIdle();
  }

  /**
   * A cancelled entry far out would hold the thread until the wheel passed it, up to a turn;
   * {@link WheelTimer#purge()} drops it at once, and the thread, with nothing pending, ends.
   */
  @Test
  void purgeDropsCancelledEntriesAndTheThreadEnds() throws Exception {
    String name = threadName + "-purge";
    WheelTimer wide = new WheelTimer(name, MS, 1 << 16); // a turn of 65 s
    try {
      Timer.Timeout far = wide.schedule(() -> { }, wide.clock().nanoTime()
          + TimeUnit.SECONDS.toNanos(60));
      Thread t = thread(name);
      awaitState(t, Thread.State.TIMED_WAITING); // parked until the far tick
      assertTrue(far.cancel());
      wide.purge();
      // purge() returns once the thread has ended, as a container's check for leftover threads
      // at a webapp's stop needs: no join here.
      assertFalse(t.isAlive(), "the thread outlived a purge that left nothing pending");
      assertFalse(wide.threadRunning());
    } finally {
      wide.close();
    }
  }

  /** A purge while something else is pending returns once it has purged; the thread stays. */
  @Test
  void purgeWithEntriesLeftReturnsAndTheThreadStays() throws Exception {
    String name = threadName + "-busy";
    WheelTimer wide = new WheelTimer(name, MS, 1 << 16);
    try {
      long far = wide.clock().nanoTime() + TimeUnit.SECONDS.toNanos(60);
      Timer.Timeout cancelled = wide.schedule(() -> { }, far);
      wide.schedule(() -> { }, far + MS);
      Thread t = thread(name);
      awaitState(t, Thread.State.TIMED_WAITING);
      assertTrue(cancelled.cancel());
      long started = System.nanoTime();
      wide.purge();
      assertTrue(System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(900),
          "purge waited out its bound though the thread had purged");
      assertTrue(t.isAlive(), "the thread ended with an entry still pending");
      assertTrue(wide.threadRunning());
    } finally {
      wide.close();
    }
  }

  /**
   * Shedders closing while others schedule: each purge returns, and the timer still runs every
   * task scheduled, once.
   */
  @Test
  void purgesRacingSchedulesLoseNoTask() throws Exception {
    AtomicInteger ran = new AtomicInteger();
    int threads = 4;
    int rounds = 2_000;
    ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
    try {
      List<Future<?>> work = new ArrayList<>();
      for (int w = 0; w < threads; w++) {
        work.add(pool.submit(() -> {
          for (int i = 0; i < rounds; i++) {
            timer.schedule(ran::incrementAndGet, now() + (i % 3) * MS);
            timer.schedule(() -> { }, now() + 50 * MS).cancel();
          }
          return null;
        }));
      }
      work.add(pool.submit(() -> {
        for (int i = 0; i < 500; i++) {
          timer.purge();
        }
        return null;
      }));
      for (Future<?> f : work) {
        f.get(60, TimeUnit.SECONDS);
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (ran.get() < threads * rounds && System.nanoTime() - deadline < 0) {
        Thread.onSpinWait();
      }
      assertEquals(threads * rounds, ran.get(), "every task scheduled ran, once");
      awaitIdle();
    } finally {
      pool.shutdownNow();
    }
  }

  /** A webapp that schedules first must not be pinned by the thread's context class loader. */
  @Test
  void theThreadDoesNotKeepItsStartersContextClassLoader() throws Exception {
    ClassLoader starters = new java.net.URLClassLoader(new java.net.URL[0], null);
    ClassLoader[] seen = new ClassLoader[1];
    CountDownLatch ran = new CountDownLatch(1);
    Thread starter = new Thread(() -> timer.schedule(() -> {
      seen[0] = Thread.currentThread().getContextClassLoader();
      ran.countDown();
    }, now()));
    starter.setContextClassLoader(starters);
    starter.start();
    starter.join();
    assertTrue(ran.await(10, TimeUnit.SECONDS));
    assertEquals(WheelTimer.class.getClassLoader(), seen[0]);
  }

  /**
   * Stress: schedulers on four threads leave gaps in which the timer thread ends, so that
   * schedules race its end and the start of the next; every task runs, and exactly once.
   */
  @Test
  void schedulesRacingTheThreadsEndLoseNothing() throws Exception {
    int threads = 4;
    int perThread = 3_000;
    java.util.concurrent.atomic.AtomicIntegerArray runs =
        new java.util.concurrent.atomic.AtomicIntegerArray(threads * perThread);
    CountDownLatch ran = new CountDownLatch(threads * perThread);
    List<Thread> schedulers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int first = t * perThread;
      Thread th = new Thread(() -> {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int i = 0; i < perThread; i++) {
          int id = first + i;
          timer.schedule(() -> {
            runs.incrementAndGet(id);
            ran.countDown();
          }, now() + (r.nextInt(4) == 0 ? MS : 0));
          if (r.nextInt(8) == 0) {
            LockSupport.parkNanos(r.nextLong(2 * MS)); // a gap: the thread may end in it
          }
        }
      });
      schedulers.add(th);
      th.start();
    }
    for (Thread th : schedulers) {
      th.join();
    }
    assertTrue(ran.await(20, TimeUnit.SECONDS), ran.getCount() + " tasks never ran");
    for (int i = 0; i < runs.length(); i++) {
      assertEquals(1, runs.get(i), "task " + i);
    }
    awaitIdle();
  }

  /** Polls, with a deadline, until the timer thread has ended with nothing pending. */
  private void awaitIdle() {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (timer.threadRunning() || liveThread(threadName) != null) {
      if (System.nanoTime() - deadline > 0) {
        fail("the timer thread never ended");
      }
      LockSupport.parkNanos(MS);
    }
  }

  /** Polls, with a deadline, until {@code t} is in {@code state}. */
  private static void awaitState(Thread t, Thread.State state) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (t.getState() != state) {
      if (System.nanoTime() - deadline > 0) {
        fail("timer thread never reached " + state + ": " + t.getState());
      }
      LockSupport.parkNanos(MS);
    }
  }

  private Thread timerThread() {
    return thread(threadName);
  }

  private static Thread thread(String name) {
    Thread t = liveThread(name);
    if (t == null) {
      throw new AssertionError("no thread " + name);
    }
    return t;
  }

  /** The live thread named {@code name}, or null. */
  private static Thread liveThread(String name) {
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().equals(name) && t.isAlive()) {
        return t;
      }
    }
    return null;
  }
}
