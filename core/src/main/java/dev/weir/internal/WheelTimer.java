package dev.weir.internal;

import dev.weir.Clock;
import dev.weir.Timer;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
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
 * until the next, and while nothing is scheduled it parks without a timeout. So a shedder's
 * control tick, always pending, wakes it ten times a second, not once a millisecond. A scheduler
 * unparks the thread only if the new deadline comes before the instant the thread parked until,
 * or the thread parked for good; the thread publishes that instant before its last look at the
 * incoming stack, and the scheduler pushes before reading it, so one of the two sees the other's
 * write.
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
  private final Thread thread;
  private final long start;
  /** False for the shared instance, which serves every shedder in the JVM. */
  private final boolean closeable;
  /** Parked without a timeout: nothing is pending. */
  private volatile boolean sleeping;
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
    this.thread = new Thread(this::run, threadName);
    thread.setDaemon(true);
    thread.start();
  }

  private static final class Shared {
    static final WheelTimer INSTANCE =
        new WheelTimer("weir-timer", TimeUnit.MILLISECONDS.toNanos(1), 1024, false);
  }

  /**
   * The process-wide timer: 1 ms ticks, one daemon thread named {@code weir-timer}. It cannot be
   * closed: it serves every shedder in the JVM, and {@link #close()} on it throws.
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
    if (sleeping || (napping && deadlineNanos - wakeAt < 0)) {
      LockSupport.unpark(thread);
    }
    return e;
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
    LockSupport.unpark(thread);
  }

  private void run() {
    while (!stopped) {
      laps++;
      long now = clock.nanoTime();
      long target = (now - start) / tickNanos;
      transferIncoming(now, target);
      while (tick <= target) {
        expire(tick, now);
        tick++;
      }
      if (pending == 0) {
        sleeping = true;
        if (incoming.get() == null && !stopped) {
          LockSupport.park(this);
        }
        sleeping = false;
      } else {
        long next = start + nextOccupiedTick() * tickNanos;
        long wait = next - clock.nanoTime();
        if (wait > 0) {
          wakeAt = next;
          napping = true;
          if (incoming.get() == null && !stopped) {
            LockSupport.parkNanos(this, wait);
          }
          napping = false;
        }
      }
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

  private void expire(long t, long now) {
    int slot = (int) (t & mask);
    Entry prev = null;
    Entry e = wheel[slot];
    while (e != null) {
      Entry next = e.next;
      boolean remove;
      if (e.state != PENDING) {
        remove = true;
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
