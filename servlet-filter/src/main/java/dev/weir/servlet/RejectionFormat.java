package dev.weir.servlet;

/** The body of the filter's own 429 and 503 answers. */
public enum RejectionFormat {
  /** A one-line {@code text/plain} message. The default. */
  TEXT,
  /**
   * A {@code application/json} object, for example
   * {@code {"error":"overloaded","reason":"SHED","status":429,"retryAfterSeconds":1}}.
   */
  JSON,
  /** No body at all. */
  EMPTY
}
