package dev.weir;

/**
 * Decides which priorities are shed at the door, before they queue.
 *
 * <p>Driven by ticks like {@link Limit}: every control interval the shedder passes it a
 * {@link ControlWindow} and applies the cutoff it returns. A request whose packed priority is at
 * or above the cutoff is rejected with {@link RejectReason#SHED} if it would have to wait: when a
 * permit is free and nothing is queued it runs at once whatever the cutoff, since shedding it would
 * only idle the permit. {@link Priority#LEVELS} sheds nothing. Calls never overlap; an instance
 * belongs to one shedder.
 */
public interface Rejector {
  /**
   * Learns from one control interval.
   *
   * @return the new cutoff, in 0..{@link Priority#LEVELS}
   */
  int update(ControlWindow window);

  /**
   * Learns from one control interval, told what the shedder's overload policy wants of the queue
   * while overloaded: the backlog to aim for, and the bound beyond which the shedder evicts the
   * least important (a longer queue is trimmed, not drained by shedding at the door). A rejector
   * that keeps no backlog of its own ignores them, as this default does.
   *
   * @return the new cutoff, in 0..{@link Priority#LEVELS}
   */
  default int update(ControlWindow window, double backlogTarget, int queueBound) {
    return update(window);
  }

  /**
   * The fraction of recent traffic the cutoff covers, in [0, 1]: what the rejector aims to shed.
   * What is shed is at most this, since a cut-off request that would not wait runs.
   */
  double ratio();

  /** Whether the rejector currently judges the shedder overloaded. */
  boolean overloaded();
}
