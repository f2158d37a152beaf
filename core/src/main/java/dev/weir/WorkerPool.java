package dev.weir;

import dev.weir.internal.Check;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Pre-started, reused, named worker threads for running admitted requests: no thread is created
 * per request (Uber's M3 lesson), and because a shedder admits at most {@code limit} requests at
 * once, a pool as large as the limit's maximum never makes admitted work wait.
 *
 * <p>A thin wrapper over {@link ThreadPoolExecutor}, which does the hard parts well.
 */
public final class WorkerPool implements Executor, AutoCloseable {
  private final ThreadPoolExecutor executor;

  private WorkerPool(String name, int threads) {
    Check.atLeast("threads", threads, 1);
    AtomicInteger seq = new AtomicInteger();
    ThreadFactory factory = r -> {
      Thread t = new Thread(r, name + "-" + seq.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
    this.executor = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS,
        new LinkedBlockingQueue<>(), factory);
    executor.prestartAllCoreThreads();
  }

  /** A pool of {@code threads} threads named {@code name-1}, {@code name-2}, ..., all started now. */
  public static WorkerPool of(String name, int threads) {
    return new WorkerPool(name, threads);
  }

  /** A pool sized for {@code shedder}: as many threads as its limit can ever allow. */
  public static WorkerPool forShedder(LoadShedder shedder) {
    return new WorkerPool("weir-" + shedder.name(), shedder.maxLimit());
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

  /** The number of threads. */
  public int size() {
    return executor.getCorePoolSize();
  }

  /** The number of threads alive now. */
  public int liveThreads() {
    return executor.getPoolSize();
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
