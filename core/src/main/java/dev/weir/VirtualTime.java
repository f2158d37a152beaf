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
  /** Anything later than this (about 146 years) is "never": the sums below cannot overflow. */
  private static final long NEVER = Long.MAX_VALUE / 2;

  private final PriorityQueue<Task> tasks = new PriorityQueue<>();
  /**
   * The clock's value at its start. Time is kept as nanoseconds since then, and every deadline
   * is read by its difference from now, as {@link Clock} says: a start near {@link
   * Long#MAX_VALUE}, or {@code now + timeout} wrapping past it, still means "later".
   */
  private final long origin;
  private long elapsed;
  private long seq;

  /** Virtual time starting at 0. */
  public VirtualTime() {
    this(0);
  }

  /** Virtual time starting at {@code startNanos}. */
  public VirtualTime(long startNanos) {
    this.origin = startNanos;
  }

  @Override
  public long nanoTime() {
    return origin + elapsed;
  }

  @Override
  public Clock clock() {
    return this;
  }

  /** {@inheritDoc} A deadline already passed runs at the next advance; one past ~146 years never. */
  @Override
  public Timeout schedule(Runnable task, long deadlineNanos) {
    Task t = new Task(task, elapsed + delay(deadlineNanos), seq++);
    tasks.add(t);
    return t;
  }

  /** How far {@code deadlineNanos} lies ahead of now: 0 if passed, at most {@link #NEVER}. */
  private long delay(long deadlineNanos) {
    long d = deadlineNanos - nanoTime();
    return d <= 0 ? 0 : Math.min(d, NEVER);
  }

  /**
   * Runs every task due up to {@code deadlineNanos}, in order, then sets the clock there. A time
   * already passed changes nothing.
   */
  public void advanceTo(long deadlineNanos) {
    if (deadlineNanos - nanoTime() < 0) {
      return;
    }
    long target = elapsed + delay(deadlineNanos);
    Task t;
    while ((t = tasks.peek()) != null && t.due <= target) {
      tasks.poll();
      if (!t.cancelled) {
        elapsed = Math.max(elapsed, t.due);
        t.task.run();
      }
    }
    elapsed = Math.max(elapsed, target);
  }

  /** {@code advanceTo(nanoTime() + nanos)}. */
  public void advance(long nanos) {
    advanceTo(nanoTime() + nanos);
  }

  /** Runs the next due task, moving the clock to it. @return false if none is scheduled. */
  public boolean runNext() {
    Task t;
    while ((t = tasks.poll()) != null) {
      if (!t.cancelled) {
        elapsed = Math.max(elapsed, t.due);
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
    /** Nanoseconds after the clock's start. */
    final long due;
    final long seq;
    boolean cancelled;

    Task(Runnable task, long due, long seq) {
      this.task = task;
      this.due = due;
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
      int c = Long.compare(due, o.due);
      return c != 0 ? c : Long.compare(seq, o.seq);
    }
  }
}
