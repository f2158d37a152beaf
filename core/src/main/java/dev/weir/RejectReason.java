package dev.weir;

/** Why a request was not admitted. */
public enum RejectReason {
  /** Shed at the door by the rejector: the service is overloaded, the request's priority is
   * below the cutoff, and it would have had to wait (every permit in use, or requests already
   * queued). Adapters answer 429. */
  SHED,
  /** The queue was full and held nothing less important to make room. Adapters answer 429. */
  QUEUE_FULL,
  /** The request waited in the queue past its queue timeout. Adapters answer 503. */
  QUEUE_TIMEOUT,
  /** The shedder was closed before the request was admitted. Adapters answer 503. */
  SHUTTING_DOWN,
  /** The caller cancelled the request while it was queued (for example, the client went away). */
  CANCELLED
}
