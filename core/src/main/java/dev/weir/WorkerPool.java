package dev.weir;

import dev.weir.internal.Check;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.RejectedExecutionHandler;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Reused, named daemon worker threads for running admitted requests: no thread is created per
 * request (Uber's M3 lesson).
 *
 * <p>Two shapes. {@link #of} is fixed: every thread is started at once, for a known, small
 * concurrency. {@link #elastic} pre-starts a few threads and grows on demand: a task goes to an
 * idle thread if there is one, else a new thread is started, up to a maximum, and only then does
 * the task wait in a queue. Threads above the pre-started few end after staying idle for the
 * keep-alive. A shedder admits at most {@code limit} requests at once, so an elastic pool whose
 * maximum is the limit's maximum never makes admitted work wait, yet holds only as many threads
 * as the limit actually uses.
 *
 * <p>A thin wrapper over {@link ThreadPoolExecutor}, which does the hard parts well.
 */
public final class WorkerPool implements Executor, AutoCloseable {
  private final ThreadPoolExecutor executor;

  private WorkerPool(ThreadPoolExecutor executor) {
    this.executor = executor;
  }

  private static ThreadFactory factory(String name) {
    AtomicInteger seq = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + seq.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /** A pool of {@code threads} threads named {@code name-1}, {@code name-2}, ..., all started now. */
  public static WorkerPool of(String name, int threads) {
    Check.atLeast("threads", threads, 1);
    ThreadPoolExecutor e = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS,
        new LinkedBlockingQueue<>(), factory(name));
    e.prestartAllCoreThreads();
    return new WorkerPool(e);
  }

  /**
   * A pool that starts {@code coreThreads} threads now and grows to at most {@code maxThreads}:
   * a task is handed to an idle thread when one is waiting, else runs on a new thread while
   * there are fewer than {@code maxThreads}, else waits in an unbounded queue. Threads beyond
   * {@code coreThreads} end once idle for {@code keepAlive}.
   *
   * @throws IllegalArgumentException if {@code coreThreads} is negative, {@code maxThreads} is
   *     below 1 or below {@code coreThreads}, or {@code keepAlive} is not positive or not
   *     representable in nanoseconds
   */
  public static WorkerPool elastic(String name, int coreThreads, int maxThreads,
      Duration keepAlive) {
    Check.atLeast("coreThreads", coreThreads, 0);
    Check.atLeast("maxThreads", maxThreads, Math.max(1, coreThreads));
    Check.positive("keepAlive", keepAlive);
    HandOff queue = new HandOff();
    ThreadPoolExecutor e = new ThreadPoolExecutor(coreThreads, maxThreads, keepAlive.toNanos(),
        TimeUnit.NANOSECONDS, queue, factory(name), queue);
    queue.executor = e;
    e.prestartAllCoreThreads();
    return new WorkerPool(e);
  }

  /** A pool sized for {@code shedder}: as many threads as its limit can ever allow, all started. */
  public static WorkerPool forShedder(LoadShedder shedder) {
    return of("weir-" + shedder.name(), shedder.maxLimit());
  }

  /**
   * The elastic pool's queue. {@link ThreadPoolExecutor} starts a thread above the core only when
   * its queue refuses a task; this queue hands a task straight to a waiting idle thread, refuses it
   * while the pool may still grow (so a thread is started), and keeps it only at the maximum. A task
   * refused in the race where the pool reached its maximum meanwhile is queued by {@link
   * #rejectedExecution}.
   */
  private static final class HandOff extends LinkedTransferQueue<Runnable>
      implements RejectedExecutionHandler {
    private static final long serialVersionUID = 1L;
    transient volatile ThreadPoolExecutor executor;

    @Override
    public boolean offer(Runnable task) {
      if (tryTransfer(task)) {
        return true;
      }
      ThreadPoolExecutor e = executor;
      if (e != null && e.getPoolSize() < e.getMaximumPoolSize()) {
        return false;
      }
      return super.offer(task);
    }

    @Override
    public void rejectedExecution(Runnable task, ThreadPoolExecutor e) {
      if (e.isShutdown()) {
        throw new RejectedExecutionException("the worker pool is shut down");
      }
      super.offer(task);
      // Shut down between the check and the offer: take it back if no worker will run it.
      if (e.isShutdown() && remove(task)) {
        throw new RejectedExecutionException("the worker pool is shut down");
      }
    }
  }

  /**
   * Runs {@code task} on a worker.
   *
   * @throws RejectedExecutionException if the pool is shut down
   */
  @Override
  public void execute(Runnable task) {
    executor.execute(task);
  }

  /** The most threads this pool may have: all of them for a fixed pool. */
  public int size() {
    return executor.getMaximumPoolSize();
  }

  /** The threads that stay alive when idle: all of them for a fixed pool. */
  public int coreThreads() {
    return executor.getCorePoolSize();
  }

  /** The number of threads alive now. */
  public int liveThreads() {
    return executor.getPoolSize();
  }

  /** The most threads that were ever alive at once. */
  public int largestThreads() {
    return executor.getLargestPoolSize();
  }

  /** Stops accepting tasks; running and already accepted tasks finish. */
  public void shutdown() {
    executor.shutdown();
  }

  /** Waits for accepted tasks to finish after {@link #shutdown()}. */
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return executor.awaitTermination(timeout, unit);
  }

  /** Shuts down and waits up to 10 s for accepted tasks, then interrupts what remains. */
  @Override
  public void close() {
    executor.shutdown();
    try {
      if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
        executor.shutdownNow();
      }
    } catch (InterruptedException e) {
      executor.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
