package dev.weir;

import dev.weir.internal.Watchlist;

/**
 * The watchdog. Every permit from submit() or acquire() that is still held at its deadline plus
 * the grace is released by the shedder as DROPPED and counted RECLAIMED; the holder's later
 * release() loses the CAS to RELEASED and returns false. So a stuck application costs its own
 * requests, never the route. To cost the fast path no clock read, no allocation and no shared
 * write, an admitted permit goes into a slot of the held-permit Watchlist (a CAS on its stripe's
 * own line; the release empties it with one ordered store), and the control tick sweeps the
 * table: a permit whose reclaim falls before the next tick gets a timer entry at that instant,
 * so the reclaim is on time to the timer's tick, not the control interval's, once a sweep has
 * seen the permit. A permit admitted after a sweep and due before the next one is first seen by
 * that next sweep, which reclaims it then: at most one interval late. A permit without times
 * (admitted at once, unsampled) has its deadline stamped when a sweep first sees it, which is
 * never early and at most one interval late. Only a permit whose stripe's slots are
 * all taken has a timer entry of its own, from its admission; a deadline hook's entry stands in
 * for it until the deadline and then schedules it again. The watchdog runs with the control
 * tick and stops with it at close().
 *
 * <p>A sweep may read a slot a moment after its request was released, and a timer entry the
 * sweep scheduled outlives the release; a recycled request may by then live again. So each
 * reclaim is a CAS from the state word the sweep or the entry read ({@link Request#casWord}),
 * which fails on a later life, and each due time is read from the life being looked at. At worst a
 * sweep that read a released life stamps the next, unsampled life's deadline from the sweep's
 * start, a few microseconds before that life began.
 */
final class Watchdog {
  private final Admission admission;
  /** The held permits the sweep looks at; see {@link #watch}. */
  private final Watchlist<Request> held = new Watchlist<>();
  /** How long past its deadline a permit may be held before it is reclaimed. */
  final long graceNanos;

  Watchdog(Admission admission, long graceNanos) {
    this.admission = admission;
    this.graceNanos = graceNanos;
  }

  /** Registers an admitted request with the watchdog; before its state becomes ADMITTED. */
  void watch(Request r) {
    int slot = held.add(r);
    r.watchSlot = slot;
    if (slot < 0) {
      if (!r.timed) {
        r.watchDeadline = admission.clock.nanoTime() + r.timeoutNanos;
        r.watchStamped = true;
      }
      r.timeout = admission.timer.schedule(r, r.watchdogDueNanos());
    }
  }

  /**
   * Sweeps the held permits: reclaims those past their deadline plus the grace, and gives those
   * due before {@code now + horizonNanos} (the next sweep) a timer entry at the instant. On the
   * timer, by the control tick.
   */
  void sweep(long now, long horizonNanos) {
    Watchlist<Request> h = held;
    for (int i = 0, n = h.length(); i < n; i++) {
      Request r = h.get(i);
      if (r == null) {
        continue;
      }
      int word = r.word();
      if (Request.phaseOf(word) != Request.ADMITTED) {
        continue;
      }
      if (!r.timed && !r.watchStamped) {
        // First seen now: admitted at or before now, so the deadline is at or before this one.
        r.watchDeadline = now + r.timeoutNanos;
        r.watchStamped = true;
      }
      long due = r.watchdogDueNanos();
      if (due - now <= 0) {
        reclaim(r, word);
      } else if (due - now < horizonNanos) {
        // Not kept: release does not cancel it; it finds the permit released and does nothing.
        admission.timer.schedule(r, due);
      }
    }
  }

  /**
   * A timer entry of an admitted request ran at {@code now}, having read the state word {@code
   * word}: reclaims that life if it is due.
   */
  void fired(Request r, long now, int word) {
    if (!r.timed && !r.watchStamped) {
      return;
    }
    long due = r.watchdogDueNanos();
    if (due - now <= 0) {
      reclaim(r, word);
    } else if (r.watchSlot < 0) {
      // The deadline hook's entry, or a late queue timer: the permit's own watchdog entry again.
      scheduleWhileHeld(r, due);
    }
  }

  /**
   * Schedules {@code r} as its own timer task at {@code deadline}, as {@code r.timeout}, unless
   * the permit is released meanwhile. The entry is written, then the state read; a release
   * writes the state, then reads the entry to cancel it: one of the two sees the other's write.
   */
  void scheduleWhileHeld(Request r, long deadline) {
    Timer.Timeout t = admission.timer.schedule(r, deadline);
    r.timeout = t;
    if (r.phase() != Request.ADMITTED) {
      t.cancel();
    }
  }

  /**
   * Releases a permit held past its deadline plus the grace, as DROPPED, if the life whose state
   * word was {@code word} still holds it.
   *
   * @return whether this call reclaimed it
   */
  boolean reclaim(Request r, int word) {
    if (admission.isClosed() || Request.phaseOf(word) != Request.ADMITTED
        || !r.casWord(word, Request.RELEASED)) {
      return false;
    }
    Admission.cancelTimeout(r);
    admission.counters.reclaimed(Priority.tier(r.priority));
    admission.released(r, Outcome.DROPPED);
    return true;
  }

  /** Takes a released request's permit off the watch list. */
  void forget(Request r) {
    if (r.watchSlot >= 0) {
      held.remove(r.watchSlot);
    }
  }
}
