package dev.weir;

import java.util.PriorityQueue;

/**
 * Virtual time: a clock that moves only when told, and a timer whose tasks run, in deadline order,
 * on the thread that moves it. A shedder built on it is deterministic, and a simulated minute
 * takes as long as its events take to run.
 *
 * <p>Not thread-safe: one thread schedules and advances. Tasks with equal deadlines run in the
 * order they were scheduled.
 */
public final class VirtualTime implements Clock, Timer {
  private final PriorityQueue<Task> tasks = new PriorityQueue<>();
  private long now;
  private long seq;

  /** Virtual time starting at 0. */
  public VirtualTime() {}

  /** Virtual time starting at {@code startNanos}. */
  public VirtualTime(long startNanos) {
    this.now = startNanos;
  }

  @Override
  public long nanoTime() {
    return now;
  }

  @Override
  public Clock clock() {
    return this;
  }

  @Override
  public Timeout schedule(Runnable task, long deadlineNanos) {
    Task t = new Task(task, Math.max(deadlineNanos, now), seq++);
    tasks.add(t);
    return t;
  }

  /** Runs every task due up to {@code deadlineNanos}, in order, then sets the clock there. */
  public void advanceTo(long deadlineNanos) {
    Task t;
    while ((t = tasks.peek()) != null && t.deadline <= deadlineNanos) {
      tasks.poll();
      if (!t.cancelled) {
        now = t.deadline;
        t.task.run();
      }
    }
    if (deadlineNanos > now) {
      now = deadlineNanos;
    }
  }

  /** {@code advanceTo(nanoTime() + nanos)}. */
  public void advance(long nanos) {
    advanceTo(now + nanos);
  }

  /** Runs the next due task, moving the clock to it. @return false if none is scheduled. */
  public boolean runNext() {
    Task t;
    while ((t = tasks.poll()) != null) {
      if (!t.cancelled) {
        now = Math.max(now, t.deadline);
        t.task.run();
        return true;
      }
    }
    return false;
  }

  /** The number of scheduled, not cancelled tasks. O(n). */
  public int pending() {
    int n = 0;
    for (Task t : tasks) {
      if (!t.cancelled) {
        n++;
      }
    }
    return n;
  }

  private static final class Task implements Timeout, Comparable<Task> {
    final Runnable task;
    final long deadline;
    final long seq;
    boolean cancelled;

    Task(Runnable task, long deadline, long seq) {
      this.task = task;
      this.deadline = deadline;
      this.seq = seq;
    }

    @Override
    public boolean cancel() {
      if (cancelled) {
        return false;
      }
      cancelled = true;
      return true;
    }

    @Override
    public int compareTo(Task o) {
      int c = Long.compare(deadline, o.deadline);
      return c != 0 ? c : Long.compare(seq, o.seq);
    }
  }
}
