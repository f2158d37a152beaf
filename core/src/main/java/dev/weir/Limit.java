package dev.weir;

/**
 * Sets a shedder's inflight limit: how many admitted requests may run at once.
 *
 * <p>A limit is driven by ticks: every control interval, on the timer thread, the shedder hands it
 * a {@link ControlWindow} of what happened since the last tick and applies the limit it returns.
 * Calls to one instance never overlap, so implementations need no synchronisation; an instance
 * belongs to one shedder.
 */
public interface Limit {
  /** The limit before the first tick. */
  int initialLimit();

  /** The largest limit this controller will ever return; sizes {@link WorkerPool}s. */
  int maxLimit();

  /**
   * Learns from one control interval.
   *
   * @return the new limit, in 1..{@link #maxLimit()}
   */
  int update(ControlWindow window);
}
