package dev.weir.internal;

import dev.weir.Clock;
import dev.weir.Timer;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A hashed timing wheel driven by one daemon thread. Scheduling pushes onto a lock-free stack
 * that the timer thread drains each time it wakes, so callers never touch the wheel; cancelling
 * is one CAS on the entry, which the timer thread then drops when it next passes it. One entry
 * object per scheduled task, no thread per task.
 *
 * <p>The thread wakes only for a tick whose slot holds an entry: between two such ticks it parks
 * until the next. So a shedder's control tick, always pending, wakes it ten times a second, not
 * once a millisecond. A scheduler unparks the thread only if the new deadline comes before the
 * instant the thread parked until; the thread publishes that instant before its last look at the
 * incoming stack, and the scheduler pushes before reading it, so one of the two sees the other's
 * write.
 *
 * <p><b>The thread's life.</b> It runs only while something is pending: once nothing is, it ends,
 * and the next {@link #schedule} starts another. A webapp that loads this class and then stops
 * (its shedders closed, their ticks cancelled) leaves no thread behind to hold its class loader;
 * {@link #purge()} drops cancelled entries at once, so the thread need not pass them first, and
 * waits until the thread has: if nothing is left pending, until it has ended, so that a container
 * checking for leftover threads as the webapp stops finds none. The thread ends by announcing it
 * ({@code running} false) before its last look at the incoming stack, and a scheduler pushes
 * before reading {@code running}: either the thread sees the new entry and stays, or the scheduler
 * sees the thread gone and starts one, by a CAS that only one party wins. A thread's context class
 * loader is this class's own, not its starter's.
 */
public final class WheelTimer implements Timer, AutoCloseable {
  private static final Logger LOG = Logger.getLogger(WheelTimer.class.getName());

  private static final int PENDING = 0;
  private static final int CANCELLED = 1;
  private static final int EXPIRED = 2;

  private final Clock clock = Clock.system();
  private final long tickNanos;
  private final Entry[] wheel;
  private final int mask;
  private final AtomicReference<Entry> incoming = new AtomicReference<>();
  private final String threadName;
  /** Whether a timer thread runs (or is starting): at most one at a time. */
  private final AtomicBoolean running = new AtomicBoolean();
  /** The timer thread, for unparking; the last one started. */
  private volatile Thread thread;
  /** The longest {@link #purge()} waits for the timer thread: far more than its pass takes. */
  private static final long PURGE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** Purges asked of the timer thread (drop every cancelled entry now), counted. */
  private final AtomicLong purgesAsked = new AtomicLong();
  /** Purges the timer thread has done, published once it has decided whether to end. */
  private volatile long purgesDone;
  /** Purges the timer thread has done; written by the timer thread only. */
  private long purgesSeen;
  private final long start;
  /** False for the shared instance, which serves every shedder in the JVM. */
  private final boolean closeable;
  /** Parked until {@link #wakeAt}, the start of the next tick whose slot holds an entry. */
  private volatile boolean napping;
  private volatile long wakeAt;
  private volatile boolean stopped;
  private long tick;
  private int pending;
  /** Passes of the run loop: one per wake-up, for tests. Written by the timer thread only. */
  private long laps;

  WheelTimer(String threadName, long tickNanos, int wheelSize) {
    this(threadName, tickNanos, wheelSize, true);
  }

  private WheelTimer(String threadName, long tickNanos, int wheelSize, boolean closeable) {
    this.closeable = closeable;
    if (Integer.bitCount(wheelSize) != 1) {
      throw new IllegalArgumentException("wheelSize must be a power of two, was " + wheelSize);
    }
    this.tickNanos = tickNanos;
    this.wheel = new Entry[wheelSize];
    this.mask = wheelSize - 1;
    this.start = clock.nanoTime();
    this.threadName = threadName;
  }

  private static final class Shared {
    static final WheelTimer INSTANCE =
        new WheelTimer("weir-timer", TimeUnit.MILLISECONDS.toNanos(1), 1024, false);
  }

  /**
   * The process-wide timer (one per class loader that loads this class): 1 ms ticks, one daemon
   * thread named {@code weir-timer} while anything is pending. It cannot be closed: it serves
   * every shedder in the JVM, and {@link #close()} on it throws.
   */
  public static Timer shared() {
    return Shared.INSTANCE;
  }

  @Override
  public Clock clock() {
    return clock;
  }

  @Override
  public Timeout schedule(Runnable task, long deadlineNanos) {
    Entry e = new Entry(task, deadlineNanos);
    Entry head;
    do {
      head = incoming.get();
      e.nextIncoming = head;
    } while (!incoming.compareAndSet(head, e));
    if (!running.get()) {
      if (!stopped && running.compareAndSet(false, true)) {
        startThread();
      }
    } else if (napping && deadlineNanos - wakeAt < 0) {
      LockSupport.unpark(thread);
    }
    return e;
  }

  /** Starts a timer thread; the caller won {@link #running}. */
  private void startThread() {
    Thread t = new Thread(this::run, threadName);
    t.setDaemon(true);
    // Not the starter's (a webapp's, say), which the thread would otherwise keep alive.
    t.setContextClassLoader(WheelTimer.class.getClassLoader());
    thread = t;
    try {
      t.start();
    } catch (Throwable e) { // no thread to be had (OutOfMemoryError): let a later schedule retry
      running.set(false);
      throw e;
    }
  }

  /**
   * Asks the timer thread to drop every cancelled entry at once rather than as it passes them: a
   * shedder that closes calls it, so that a timer with nothing left pending ends its thread now.
   * Returns once the thread has done so and, if it then had nothing pending, has ended; after a
   * second at most (a stalled machine); at once if called on the timer thread. Rare: each call
   * wakes the thread and costs a pass over the wheel.
   */
  public void purge() {
    long ticket = purgesAsked.incrementAndGet();
    Thread t = thread;
    if (t == null || t == Thread.currentThread()) {
      return;
    }
    LockSupport.unpark(t);
    long deadline = System.nanoTime() + PURGE_WAIT_NANOS;
    while (purgesDone - ticket < 0 && t.isAlive()) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return;
      }
      LockSupport.parkNanos(this, Math.min(left, TimeUnit.MICROSECONDS.toNanos(100)));
    }
    if (!running.get() || thread != t) {
      // It purged and ended (another may have started since): wait until it has died.
      try {
        t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Whether a timer thread runs now: for tests, and for waiting until one has ended. */
  boolean threadRunning() {
    return running.get();
  }

  /**
   * Stops the timer thread; tasks not yet run never run.
   *
   * @throws UnsupportedOperationException on the {@linkplain #shared() shared} timer, whose
   *     closing would stop every shedder in the JVM
   */
  @Override
  public void close() {
    if (!closeable) {
      throw new UnsupportedOperationException(
          "the shared timer serves every shedder in the JVM and cannot be closed");
    }
    stopped = true;
    Thread t = thread;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  private void run() {
    while (!stopped) {
      laps++;
      long now = clock.nanoTime();
      long target = (now - start) / tickNanos;
      if (pending == 0 && tick < target) {
        tick = target; // an empty wheel: the ticks since the last thread ended hold nothing
      }
      transferIncoming(now, target);
      while (tick <= target) {
        expire(tick);
        tick++;
      }
      long asked = purgesAsked.get();
      if (asked != purgesSeen) {
        dropCancelled();
        purgesSeen = asked;
      }
      if (pending == 0) {
        if (incoming.get() != null) {
          continue;
        }
        // Nothing pending: end, unless an entry arrives after the announcement and this thread
        // wins it back before a scheduler starts another.
        running.set(false);
        if (incoming.get() == null || !running.compareAndSet(false, true)) {
          purgesDone = purgesSeen; // after the announcement: a purge waiting on it joins
          return;
        }
        continue;
      }
      purgesDone = purgesSeen;
      long next = start + nextOccupiedTick() * tickNanos;
      long wait = next - clock.nanoTime();
      if (wait > 0) {
        wakeAt = next;
        napping = true;
        if (incoming.get() == null && !stopped && purgesAsked.get() == purgesSeen) {
          LockSupport.parkNanos(this, wait);
        }
        napping = false;
      }
    }
    running.set(false);
  }

  /** Unlinks every entry no longer pending from the wheel. */
  private void dropCancelled() {
    for (int slot = 0; slot < wheel.length; slot++) {
      sweep(slot, false);
    }
  }

  /**
   * The first tick from {@link #tick} whose slot holds an entry, due or not (an entry a round or
   * more away, or cancelled, costs one wake-up a round). Some slot does while anything is pending.
   */
  private long nextOccupiedTick() {
    for (int d = 0; d < wheel.length; d++) {
      if (wheel[(int) ((tick + d) & mask)] != null) {
        return tick + d;
      }
    }
    return tick + wheel.length;
  }

  /** Passes of the timer loop so far, each a wake-up; read after the loop ran what it is asked. */
  long laps() {
    return laps;
  }

  private void transferIncoming(long now, long nowTick) {
    Entry e = incoming.getAndSet(null);
    while (e != null) {
      Entry next = e.nextIncoming;
      e.nextIncoming = null;
      if (e.state == PENDING) {
        long due = dueTick(e.deadline, now, nowTick);
        e.rounds = (due - tick) / wheel.length;
        int slot = (int) (due & mask);
        e.next = wheel[slot];
        wheel[slot] = e;
        pending++;
      }
      e = next;
    }
  }

  /**
   * The first tick at whose start {@code deadline} has passed. Deadlines are compared by
   * difference, as {@link System#nanoTime()} requires: {@code now + timeout} may wrap past {@link
   * Long#MAX_VALUE} and must still mean "later", not "long ago".
   */
  private long dueTick(long deadline, long now, long nowTick) {
    long delay = deadline - now;
    if (delay <= 0) {
      return tick;
    }
    // Anything beyond ~146 years is "never"; the cap keeps the sums below from overflowing.
    delay = Math.min(delay, Long.MAX_VALUE / 2);
    long fromTickStart = delay + (now - start - nowTick * tickNanos);
    return Math.max(tick, nowTick + (fromTickStart + tickNanos - 1) / tickNanos);
  }

  private void expire(long t) {
    sweep((int) (t & mask), true);
  }

  /**
   * Walks one slot, unlinking every entry no longer pending; if {@code due} (the slot's tick has
   * come), also runs and unlinks each pending entry of this round, and counts the others' rounds.
   */
  private void sweep(int slot, boolean due) {
    Entry prev = null;
    Entry e = wheel[slot];
    while (e != null) {
      Entry next = e.next;
      boolean remove;
      if (e.state != PENDING) {
        remove = true;
      } else if (!due) {
        remove = false;
      } else if (e.rounds > 0) {
        e.rounds--;
        remove = false;
      } else {
        remove = true;
        if (STATE.compareAndSet(e, PENDING, EXPIRED)) {
          try {
            Runnable task = e.task;
            e.task = null;
            task.run();
          } catch (Throwable ex) {
            LOG.log(Level.WARNING, "timer task failed", ex);
          }
        }
      }
      if (remove) {
        if (prev == null) {
          wheel[slot] = next;
        } else {
          prev.next = next;
        }
        e.next = null;
        pending--;
      } else {
        prev = e;
      }
      e = next;
    }
  }

  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(Entry.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private static final class Entry implements Timeout {
    /**
     * Dropped once the entry is cancelled or run: a cancelled entry stays in its wheel slot until
     * the wheel passes it, up to a turn (or many, for a far deadline), and must not keep the task,
     * a request and whatever the request holds, alive that long. Written only by the party that
     * won the CAS on {@link #state}, so the timer never reads it after a cancel.
     */
    Runnable task;
    final long deadline;
    volatile int state;
    Entry nextIncoming;
    Entry next;
    long rounds;

    Entry(Runnable task, long deadline) {
      this.task = task;
      this.deadline = deadline;
    }

    @Override
    public boolean cancel() {
      if (!STATE.compareAndSet(this, PENDING, CANCELLED)) {
        return false;
      }
      task = null;
      return true;
    }
  }
}
