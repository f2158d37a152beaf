package dev.weir;

import dev.weir.internal.WheelTimer;

/**
 * Runs tasks at a deadline on the timeline of a {@link Clock}. One timer serves every request of
 * every shedder: queue timeouts, processing deadlines and control ticks.
 *
 * <p>Tasks run on the timer's own thread (or, in virtual time, on the thread that advances time).
 * They must be short and must not block: they answer a request or hand work off.
 */
public interface Timer {
  /**
   * Runs {@code task} once, at or soon after {@code deadlineNanos} on this timer's clock. A
   * deadline in the past runs at the next tick.
   *
   * @return a handle whose {@link Timeout#cancel()} stops the task if it has not started
   */
  Timeout schedule(Runnable task, long deadlineNanos);

  /** The clock whose timeline deadlines are on. */
  Clock clock();

  /** A scheduled task. */
  interface Timeout {
    /**
     * Stops the task if it has not yet started. Cheap, and safe to call more than once or from any
     * thread.
     *
     * @return true if this call stopped it
     */
    boolean cancel();
  }

  /**
   * The process-wide timer on {@link Clock#system()}: a hashed wheel with a 1 ms tick driven by a
   * single daemon thread, {@code weir-timer}, that runs while anything is scheduled: once every
   * shedder on it is closed, it ends, so a stopped webapp leaves no thread behind.
   */
  static Timer system() {
    return WheelTimer.shared();
  }
}
