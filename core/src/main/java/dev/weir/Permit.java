package dev.weir;

/**
 * The right to run one admitted request. Holding a permit counts against the inflight limit until
 * it is released.
 *
 * <p>Release it exactly once, when the response is really done, with the true outcome: the latency
 * from admission to release is the sample the limit controller learns from. Releasing again is
 * harmless and ignored. Methods are thread-safe.
 */
public interface Permit {
  /**
   * Gives the permit back and records the request's latency and outcome. Only the first call
   * counts.
   *
   * @return true if this call released the permit, false if it was already released
   */
  boolean release(Outcome outcome);

  /**
   * Hands a released permit back for reuse, so that the calling thread's next admission allocates
   * no permit. Optional: a permit that is not recycled is simply collected.
   *
   * <p>Call it on the thread that released the permit, right after its {@link #release} returned
   * true (on any other thread, or a second time, it does nothing), and only if nothing will use
   * this object again: not the caller, and no one the permit was given to. Afterwards the object
   * may stand for another request, and any call on it acts on that request. Does nothing unless
   * the permit's request left nothing behind that could still reach it: a permit that waited in
   * the queue, was reclaimed, or has a deadline hook is never reused.
   */
  default void recycle() {}

  /** {@code release(Outcome.SUCCESS)}. */
  default boolean success() {
    return release(Outcome.SUCCESS);
  }

  /** {@code release(Outcome.ERROR)}. */
  default boolean error() {
    return release(Outcome.ERROR);
  }

  /** {@code release(Outcome.DROPPED)}. */
  default boolean dropped() {
    return release(Outcome.DROPPED);
  }

  /**
   * Runs {@code hook} once, on the timer thread, if this permit is still held when the request's
   * processing deadline passes. Adapters use it to answer on time while the application is still
   * working. Call at most once per permit; later calls are ignored.
   */
  void onDeadline(Runnable hook);

  /**
   * Marks that the application starts on the request now. An adapter that hands an admitted
   * request to another thread (a dispatch, an executor) calls it there, first: the hand-off's
   * delay is the adapter's, not the service's, and left in the latency the limit learns from it
   * reads as queueing in the service. Under CPU saturation that delay can be many times a fast
   * endpoint's own latency, and the limit would then shrink, queue more, hand off more, and read
   * still more. Optional: without it the latency counts from admission. Cheap when the request is
   * not timed; the queue wait reported afterwards includes the hand-off.
   */
  default void started() {}

  /** The request's packed {@link Priority}. */
  int priority();

  /** How long the request waited in the queue before admission, in nanoseconds (0 if it did not
   * wait). */
  long queueWaitNanos();

  /**
   * The request's processing deadline, on the shedder's clock: its arrival plus its request
   * timeout. A request admitted at once whose arrival the shedder did not read (it reads the
   * clock for a sample of them only) counts it from the first call of this method or {@link
   * #onDeadline}, which adapters make at admission; asking here does not make its latency a
   * sample for the limit.
   */
  long deadlineNanos();

  /** Whether the permit has been released. */
  boolean isReleased();
}
