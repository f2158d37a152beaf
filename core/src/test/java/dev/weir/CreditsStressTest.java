package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The permits as credits (per-stripe caches and a shared pool) under every kind of admission and
 * release at once, from 8 threads: {@code submit} released on the
 * answering thread or handed to another, blocking {@code acquire} (some of it interrupted),
 * permits held across a thread's later calls, cancels, queue timeouts and evictions. In the first
 * test the limit jumps to a random value in 1..16 on every 1 ms control tick; in the second it
 * stays put and no tick runs at all, so that a queued request left waiting beside an idle credit
 * would wait until the test gives up.
 */
@Tag("stress")
class CreditsStressTest {
  private static final int THREADS = 8;
  /** Twice the threads: the limit is at times far from used, at times all taken. */
  private static final int MAX_LIMIT = 16;

  /** A limit that jumps to a random value in 1..MAX_LIMIT at every tick. */
  private static final class Jumping implements Limit {
    final AtomicInteger changes = new AtomicInteger();
    final AtomicInteger largest = new AtomicInteger(4);
    volatile boolean frozen;
    int last = 4;

    @Override
    public int initialLimit() {
      return 4;
    }

    @Override
    public int maxLimit() {
      return MAX_LIMIT;
    }

    @Override
    public int update(ControlWindow window) {
      if (frozen) {
        return last;
      }
      int next = 1 + ThreadLocalRandom.current().nextInt(MAX_LIMIT);
      if (next != last) {
        changes.incrementAndGet();
      }
      largest.accumulateAndGet(next, Math::max);
      last = next;
      return next;
    }
  }

  @Test
  void creditsSurviveEveryPathWhileTheLimitJumps() throws Exception {
    Jumping limit = new Jumping();
    LoadShedder shedder = LoadShedder.builder()
        .name("credits-stress")
        .limit(() -> limit)
        .rejector(Rejectors::none)
        .controlInterval(Duration.ofMillis(1))
        .requestTimeout(Duration.ofMillis(6))
        // Holders run past these short timeouts under load: not the watchdog's test.
        .watchdogGrace(Duration.ofDays(1000))
        .queueCapacity(16)
        .build();
    Run run = new Run(shedder, 50_000);
    try {
      run.execute();
      limit.frozen = true;
      run.settle();
      run.verify(limit.largest.get());
      assertTrue(limit.changes.get() > 50, "the limit changed " + limit.changes + " times");
      Snapshot s = shedder.snapshot();
      assertTrue(s.total(Snapshot.Counter.QUEUE_TIMEOUT) > 0, run.summary());
      assertTrue(s.total(Snapshot.Counter.CANCELLED) > 0, run.summary());
      System.out.println("credits stress: limit changed " + limit.changes + " times; "
          + run.summary());
    } finally {
      shedder.close();
      run.close();
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {3, 8})
  void noRequestWaitsWhileACreditIdles(int limit) throws Exception {
    // No tick in the test's life: a tick's dispatch would rescue a request left waiting.
    LoadShedder shedder = LoadShedder.builder()
        .name("credits-wakeups")
        .limit(() -> Limits.fixed(limit))
        .rejector(Rejectors::none)
        .controlInterval(Duration.ofHours(1))
        .requestTimeout(Duration.ofSeconds(60))
        .queueCapacity(10_000)
        .build();
    Run run = new Run(shedder, 25_000);
    // Nothing that could end a wait but a release: no interrupts or cancels, and no thread holds a
    // permit while it blocks in acquire.
    run.interrupts = false;
    run.cancels = false;
    run.hold = false;
    run.shortTimeouts = false;
    try {
      run.execute();
      run.settle();
      run.verify(limit);
      Snapshot s = shedder.snapshot();
      assertEquals(0, s.total(Snapshot.Counter.QUEUE_TIMEOUT), run.summary());
      assertEquals(0, s.total(Snapshot.Counter.QUEUE_FULL), run.summary());
      assertTrue(s.total(Snapshot.Counter.ADMITTED) > THREADS * 20_000L, run.summary());
      assertTrue(run.enqueuedSeen(), "nothing ever queued: " + run.summary());
    } finally {
      shedder.close();
      run.close();
    }
  }

  /** One run: the shedder, the threads, and the test's own account of every request. */
  private static final class Run {
    final LoadShedder shedder;
    final int cycles;
    final WorkerPool releasers = WorkerPool.of("credits-release", 2);
    boolean interrupts = true;
    boolean cancels = true;
    /** Whether a thread keeps some permits across its next calls. */
    boolean hold = true;
    /** Whether some submissions have a request timeout of a few ms (so a queue timeout of 1). */
    boolean shortTimeouts = true;

    /** Permits held right now by our own count: up after admission, down before release. */
    final AtomicInteger held = new AtomicInteger();
    final AtomicInteger maxHeld = new AtomicInteger();
    final AtomicReference<String> violation = new AtomicReference<>();

    /** Requests made: submits and acquires. */
    final LongAdder requests = new LongAdder();
    /** Requests whose answer we heard (admission, rejection, or an acquire's exception). */
    final LongAdder answered = new LongAdder();
    final LongAdder admitted = new LongAdder();
    final LongAdder released = new LongAdder();
    final LongAdder interruptedAcquires = new LongAdder();
    final LongAdder cancelled = new LongAdder();
    final AtomicInteger maxQueued = new AtomicInteger();

    Run(LoadShedder shedder, int cycles) {
      this.shedder = shedder;
      this.cycles = cycles;
    }

    void execute() throws Exception {
      CountDownLatch start = new CountDownLatch(1);
      AtomicReference<Throwable> failure = new AtomicReference<>();
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        Thread th = new Thread(() -> {
          try {
            start.await();
            work();
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        }, "credits-stress-" + t);
        workers.add(th);
        th.start();
      }
      start.countDown();
      for (Thread th : workers) {
        th.join(TimeUnit.SECONDS.toMillis(60));
        assertFalse(th.isAlive(), th.getName() + " is stuck: " + summary());
      }
      if (failure.get() != null) {
        throw new AssertionError("a worker failed: " + summary(), failure.get());
      }
    }

    /** Waits, with a deadline, until every request was answered and every permit released. */
    void settle() {
      awaitTrue(() -> answered.sum() == requests.sum() && held.get() == 0
          && released.sum() == admitted.sum() && shedder.queued() == 0
          && shedder.inflight() == 0, this::summary);
    }

    void verify(int largestLimit) {
      assertNull(violation.get());
      assertTrue(maxHeld.get() <= largestLimit,
          maxHeld + " held at once, the largest limit set was " + largestLimit);
      assertTrue(maxHeld.get() >= 2, "threads never overlapped: " + summary());
      assertEquals(0, shedder.inflight());
      assertEquals(0, shedder.queued());

      Snapshot s = shedder.snapshot();
      long admittedByShedder = s.total(Snapshot.Counter.ADMITTED);
      long releasedByShedder = s.total(Snapshot.Counter.SUCCEEDED)
          + s.total(Snapshot.Counter.FAILED) + s.total(Snapshot.Counter.DROPPED);
      assertEquals(admittedByShedder, releasedByShedder, "every admission released once");
      // An acquire interrupted in the instant of its admission releases the permit itself, and
      // the caller never sees it: the only admissions we may not have counted.
      assertTrue(admittedByShedder >= admitted.sum()
          && admittedByShedder <= admitted.sum() + interruptedAcquires.sum(), summary());
      long ended = admittedByShedder;
      for (RejectReason r : RejectReason.values()) {
        ended += s.total(Snapshot.Counter.of(r));
      }
      assertEquals(requests.sum(), ended, "every request ended exactly once: " + summary());

      // Every credit is back: in the pool or a cache, none lost, none made up.
      awaitTrue(() -> {
        dev.weir.internal.Credits c = shedder.credits();
        return c.pooled() + c.cached() == c.limit();
      }, () -> shedder.credits().toString());
    }

    void close() {
      releasers.close();
    }

    boolean enqueuedSeen() {
      return maxQueued.get() > 0;
    }

    private void work() throws Exception {
      ThreadLocalRandom rnd = ThreadLocalRandom.current();
      // Permits this thread holds for a while, so the limit binds and requests queue.
      ArrayDeque<Runnable> holding = new ArrayDeque<>();
      for (int i = 0; i < cycles; i++) {
        int priority = rnd.nextInt(Priority.LEVELS);
        int dice = rnd.nextInt(100);
        if (dice < 60) {
          submit(rnd, priority, holding);
        } else {
          acquire(rnd, priority, holding);
        }
        int queued = shedder.queued();
        if (queued > 0) {
          maxQueued.accumulateAndGet(queued, Math::max);
        }
        // Hold at most a few, released oldest first.
        while (holding.size() > rnd.nextInt(3)) {
          holding.poll().run();
        }
      }
      while (!holding.isEmpty()) {
        holding.poll().run();
      }
    }

    private void submit(ThreadLocalRandom rnd, int priority, ArrayDeque<Runnable> holding) {
      requests.increment();
      Call call = new Call(rnd.nextInt(100));
      Ticket ticket = !shortTimeouts || rnd.nextBoolean()
          ? shedder.submit(priority, call)
          : shedder.submit(priority, rnd.nextLong(1_000_000, 20_000_000), call);
      if (cancels && rnd.nextInt(10) == 0 && ticket.cancel()) {
        cancelled.increment();
      }
    }

    private void acquire(ThreadLocalRandom rnd, int priority, ArrayDeque<Runnable> holding) {
      requests.increment();
      boolean interrupt = interrupts && rnd.nextInt(20) == 0;
      if (interrupt) {
        interruptedAcquires.increment();
        Thread.currentThread().interrupt();
      }
      try {
        Permit p = shedder.acquire(priority);
        answered.increment();
        admittedNow();
        Runnable release = () -> release(p, Outcome.SUCCESS);
        if (hold && rnd.nextInt(4) == 0) {
          holding.add(release);
        } else {
          release.run();
        }
      } catch (RejectedException e) {
        answered.increment();
      } catch (InterruptedException e) {
        answered.increment();
        if (!interrupt) {
          violation.compareAndSet(null, "interrupted without an interrupt");
        }
      } finally {
        Thread.interrupted();
      }
    }

    private void admittedNow() {
      admitted.increment();
      int h = held.incrementAndGet();
      maxHeld.accumulateAndGet(h, Math::max);
    }

    /** Before the permit goes back: once it has, another may be admitted in its place. */
    private void releasing() {
      held.decrementAndGet();
      released.increment();
    }

    private void release(Permit p, Outcome outcome) {
      releasing();
      if (!p.release(outcome)) {
        violation.compareAndSet(null, "a first release returned false");
      }
    }

    String summary() {
      dev.weir.internal.Credits c = shedder.credits();
      return "requests " + requests.sum() + ", answered " + answered.sum() + ", admitted "
          + admitted.sum() + ", released "
          + released.sum() + ", held " + held.get() + " (max " + maxHeld.get() + "), cancelled "
          + cancelled.sum() + ", interrupted acquires " + interruptedAcquires.sum()
          + ", max queued " + maxQueued.get() + ", " + shedder.snapshot() + ", " + c;
    }

    /** A submitted request's callback; {@code dice} picks what it does with its permit. */
    private final class Call implements AdmissionCallback {
      final int dice;
      final AtomicInteger calls = new AtomicInteger();

      Call(int dice) {
        this.dice = dice;
      }

      private void heard() {
        if (calls.incrementAndGet() != 1) {
          violation.compareAndSet(null, "a request heard twice");
        }
        answered.increment();
      }

      @Override
      public void onAdmitted(Permit permit) {
        heard();
        admittedNow();
        if (dice < 30) {
          releasers.execute(() -> release(permit, Outcome.DROPPED));
        } else {
          release(permit, dice % 2 == 0 ? Outcome.SUCCESS : Outcome.ERROR);
        }
      }

      @Override
      public void onRejected(RejectReason reason) {
        heard();
      }
    }
  }

  private static void awaitTrue(BooleanSupplier condition, Supplier<String> why) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        fail("not settled after 10 s: " + why.get());
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
  }
}
