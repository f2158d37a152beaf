package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The blocking {@link LoadShedder#acquire}, on the real timer: an acquirer parks while queued and
 * is woken by whatever decides its request, or withdraws it when interrupted.
 */
class BlockingAcquireTest {
  private final List<LoadShedder> shedders = new ArrayList<>();

  @AfterEach
  void closeAll() {
    shedders.forEach(LoadShedder::close);
  }

  private LoadShedder shedder(int limit, int capacity, Duration requestTimeout) {
    LoadShedder s = LoadShedder.builder()
        .limit(() -> Limits.fixed(limit))
        .rejector(Rejectors::none)
        .queueCapacity(capacity)
        .requestTimeout(requestTimeout)
        // Holders run past these short timeouts under load: not the watchdog's test.
        .watchdogGrace(Duration.ofDays(1000))
        .build();
    shedders.add(s);
    return s;
  }

  /** Runs {@code acquire} on a new thread; the future holds its permit or its exception. */
  private static CompletableFuture<Permit> acquireAsync(Thread[] thread, Acquire acquire) {
    CompletableFuture<Permit> result = new CompletableFuture<>();
    thread[0] = new Thread(() -> {
      try {
        result.complete(acquire.run());
      } catch (Throwable e) {
        result.completeExceptionally(e);
      }
    }, "acquirer");
    thread[0].setDaemon(true);
    thread[0].start();
    return result;
  }

  interface Acquire {
    Permit run() throws Exception;
  }

  private static void await(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        fail("timed out waiting until " + what);
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
  }

  private static Throwable failure(CompletableFuture<?> f) throws Exception {
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
    return e.getCause();
  }

  @Test
  void interruptWhileQueuedWithdrawsTheRequest() throws Exception {
    LoadShedder s = shedder(1, 10, Duration.ofSeconds(60));
    Permit holder = s.acquire(0);
    Thread[] t = new Thread[1];
    CompletableFuture<Permit> f = acquireAsync(t, () -> s.acquire(Priority.of(2, 0)));
    await(() -> s.queued() == 1, "the acquirer is queued");
    t[0].interrupt();
    assertTrue(failure(f) instanceof InterruptedException);
    assertEquals(0, s.queued(), "the interrupted request left the queue");
    assertEquals(1, s.inflight(), "only the holder");
    assertEquals(1, s.count(Snapshot.Counter.CANCELLED, 2));
    assertTrue(holder.success());
    assertEquals(0, s.inflight(), "nobody was admitted in the withdrawn request's place");
    assertEquals(0, s.count(Snapshot.Counter.ADMITTED, 2));
  }

  @Test
  void anAlreadyInterruptedThreadThatMustQueueThrowsAtOnce() throws Exception {
    LoadShedder s = shedder(1, 10, Duration.ofSeconds(60));
    Permit holder = s.acquire(0);
    Thread.currentThread().interrupt();
    try {
      assertThrows(InterruptedException.class, () -> s.acquire(0));
      assertFalse(Thread.currentThread().isInterrupted(), "InterruptedException clears the flag");
    } finally {
      Thread.interrupted();
    }
    assertEquals(0, s.queued());
    holder.success();
    assertEquals(0, s.inflight());
  }

  @Test
  void aReleaseWakesAParkedAcquirer() throws Exception {
    LoadShedder s = shedder(1, 10, Duration.ofSeconds(60));
    Permit holder = s.acquire(0);
    Thread[] t = new Thread[1];
    CompletableFuture<Permit> f = acquireAsync(t, () -> s.acquire(3));
    await(() -> s.queued() == 1 && t[0].getState() == Thread.State.WAITING,
        "the acquirer is parked");
    assertFalse(f.isDone());
    holder.success();
    Permit p = f.get(10, TimeUnit.SECONDS);
    assertTrue(p.queueWaitNanos() > 0, "it waited in the queue");
    assertEquals(3, p.priority());
    assertEquals(1, s.inflight());
    assertEquals(0, s.queued());
    assertTrue(p.success());
    assertEquals(0, s.inflight());
  }

  @Test
  void aQueueTimeoutThrowsRejectedException() throws Exception {
    LoadShedder s = shedder(1, 10, Duration.ofSeconds(60));
    Permit holder = s.acquire(0);
    long start = System.nanoTime();
    // A 60 ms request may wait a third of that in the queue.
    RejectedException e = assertThrows(RejectedException.class,
        () -> s.acquire(0, 60, TimeUnit.MILLISECONDS));
    long waited = System.nanoTime() - start;
    assertEquals(RejectReason.QUEUE_TIMEOUT, e.reason());
    assertTrue(waited >= TimeUnit.MILLISECONDS.toNanos(20), "gave up early: " + waited + " ns");
    assertEquals(0, s.queued());
    assertEquals(1, s.count(Snapshot.Counter.QUEUE_TIMEOUT, 0));
    holder.success();
    assertEquals(0, s.inflight());
  }

  @Test
  void theDefaultQueueTimeoutApplies() throws Exception {
    LoadShedder s = LoadShedder.builder().limit(() -> Limits.fixed(1)).rejector(Rejectors::none)
        .requestTimeout(Duration.ofSeconds(60)).queueTimeout(Duration.ofMillis(30)).build();
    shedders.add(s);
    Permit holder = s.acquire(0);
    RejectedException e = assertThrows(RejectedException.class, () -> s.acquire(0));
    assertEquals(RejectReason.QUEUE_TIMEOUT, e.reason());
    holder.success();
  }

  @Test
  void closeWakesAParkedAcquirer() throws Exception {
    LoadShedder s = shedder(1, 10, Duration.ofSeconds(60));
    Permit holder = s.acquire(0);
    Thread[] t = new Thread[1];
    CompletableFuture<Permit> f = acquireAsync(t, () -> s.acquire(0));
    await(() -> s.queued() == 1, "the acquirer is queued");
    s.close();
    Throwable e = failure(f);
    assertTrue(e instanceof RejectedException, e.toString());
    assertEquals(RejectReason.SHUTTING_DOWN, ((RejectedException) e).reason());
    assertTrue(holder.success());
    assertEquals(0, s.inflight());
  }

  @Test
  void evictionWakesAParkedAcquirer() throws Exception {
    LoadShedder s = shedder(1, 1, Duration.ofSeconds(60));
    Permit holder = s.acquire(0);
    Thread[] t = new Thread[1];
    CompletableFuture<Permit> f = acquireAsync(t, () -> s.acquire(Priority.of(5, 0)));
    await(() -> s.queued() == 1, "the acquirer is queued");
    Recorder important = new Recorder();
    s.submit(Priority.of(0, 1), important);
    Throwable e = failure(f);
    assertTrue(e instanceof RejectedException, e.toString());
    assertEquals(RejectReason.QUEUE_FULL, ((RejectedException) e).reason());
    holder.success();
    assertTrue(important.permit.success());
    assertEquals(0, s.inflight());
    assertEquals(0, s.queued());
  }

  /**
   * Acquirers with random priorities and short timeouts contend for two permits and a one-place
   * queue while another thread interrupts them at random. The queue's single place makes
   * rejections certain (a full queue, or eviction by a more important arrival) rather than
   * dependent on a timeout expiring, which on an idle machine a 20 us hold rarely allows. Every call ends in exactly one of a permit,
   * RejectedException with a reason, or InterruptedException; no permit leaks, whatever moment the
   * interrupt hits (including just as the request is admitted).
   */
  @Test
  void contendedAcquiresWithRandomInterruptsLeakNothing() throws Exception {
    int limit = 2;
    LoadShedder s = shedder(limit, 1, Duration.ofMillis(30));
    int threads = 4;
    int perThread = 10_000;
    AtomicInteger held = new AtomicInteger();
    AtomicReference<String> violation = new AtomicReference<>();
    LongAdder admitted = new LongAdder();
    LongAdder rejected = new LongAdder();
    LongAdder interrupted = new LongAdder();
    List<Thread> acquirers = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      Thread th = new Thread(() -> {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        for (int k = 0; k < perThread; k++) {
          try {
            Permit p = s.acquire(rnd.nextInt(Priority.LEVELS),
                rnd.nextLong(30_000, 3_000_000), TimeUnit.NANOSECONDS);
            admitted.increment();
            if (held.incrementAndGet() > limit) {
              violation.compareAndSet(null, "more than " + limit + " permits held");
            }
            // Hold it ~20 us, so that four threads queue for two permits.
            long until = System.nanoTime() + 20_000;
            while (System.nanoTime() - until < 0) {
              Thread.onSpinWait();
            }
            held.decrementAndGet();
            if (!p.success()) {
              violation.compareAndSet(null, "a fresh permit was already released");
            }
          } catch (RejectedException e) {
            rejected.increment();
            if (e.reason() == null) {
              violation.compareAndSet(null, "RejectedException without a reason");
            }
          } catch (InterruptedException e) {
            interrupted.increment();
          }
        }
        Thread.interrupted();
      }, "acquirer-" + i);
      acquirers.add(th);
      th.start();
    }
    Thread interrupter = new Thread(() -> {
      ThreadLocalRandom rnd = ThreadLocalRandom.current();
      while (acquirers.stream().anyMatch(Thread::isAlive)) {
        acquirers.get(rnd.nextInt(threads)).interrupt();
        LockSupport.parkNanos(rnd.nextLong(50_000));
      }
    }, "interrupter");
    interrupter.start();
    for (Thread th : acquirers) {
      th.join(TimeUnit.SECONDS.toMillis(60));
      assertFalse(th.isAlive(), th.getName() + " is stuck");
    }
    interrupter.join(TimeUnit.SECONDS.toMillis(10));
    assertNull(violation.get());
    assertEquals((long) threads * perThread, admitted.sum() + rejected.sum() + interrupted.sum());
    assertEquals(0, s.inflight(), "a permit leaked");
    assertEquals(0, s.queued(), "a request stayed queued");
    Snapshot snap = s.snapshot();
    System.out.println("acquire: admitted " + admitted.sum() + ", rejected " + rejected.sum()
        + ", interrupted " + interrupted.sum() + "; " + snap + " dropped "
        + snap.total(Snapshot.Counter.DROPPED) + " cancelled "
        + snap.total(Snapshot.Counter.CANCELLED));
    long releases = snap.total(Snapshot.Counter.SUCCEEDED) + snap.total(Snapshot.Counter.FAILED)
        + snap.total(Snapshot.Counter.DROPPED);
    assertEquals(snap.total(Snapshot.Counter.ADMITTED), releases);
    // An acquirer interrupted just as it was admitted gives its permit back as DROPPED.
    assertEquals(admitted.sum(), snap.total(Snapshot.Counter.SUCCEEDED));
    long answers = snap.total(Snapshot.Counter.ADMITTED);
    for (RejectReason r : RejectReason.values()) {
      answers += snap.total(Snapshot.Counter.valueOf(r.name()));
    }
    assertEquals((long) threads * perThread, answers, "every call counted exactly once");
    assertTrue(admitted.sum() > 0 && rejected.sum() > 0 && interrupted.sum() > 0,
        "admitted " + admitted.sum() + ", rejected " + rejected.sum() + ", interrupted "
            + interrupted.sum());
  }
}
