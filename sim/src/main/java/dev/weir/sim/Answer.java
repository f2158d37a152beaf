package dev.weir.sim;

/** What a simulated client saw. */
public enum Answer {
  /** Served within the client's timeout. */
  OK,
  /** Rejected at the door (HTTP 429). */
  SHED,
  /** Rejected because the queue was full (HTTP 429). */
  QUEUE_FULL,
  /** Timed out in the shedder's queue (HTTP 503). */
  QUEUE_TIMEOUT,
  /** Admitted, but answered 503 at its processing deadline while still running. */
  DEADLINE,
  /** No answer within the client's timeout: the client gave up. */
  CLIENT_TIMEOUT,
  /** Rejected because the shedder was closing. */
  SHUTDOWN,
  /** Still unanswered when the simulation ended. */
  PENDING
}
