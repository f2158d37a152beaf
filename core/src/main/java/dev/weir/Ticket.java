package dev.weir;

/** A submitted request, before or after its admission. */
public interface Ticket {
  /**
   * Withdraws the request if it is still waiting in the queue; its callback then hears
   * {@link RejectReason#CANCELLED} on this thread. Has no effect once the request was admitted or
   * rejected (the callback has heard, or is about to hear, that instead).
   *
   * @return true if this call withdrew the request
   */
  boolean cancel();

  /** The request's packed {@link Priority}. */
  int priority();
}
