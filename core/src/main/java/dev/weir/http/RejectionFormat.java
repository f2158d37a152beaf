package dev.weir.http;

/** The body of an adapter's own answers: rejections and missed deadlines. */
public enum RejectionFormat {
  /** A one-line {@code text/plain; charset=utf-8} message. The default. */
  TEXT,
  /**
   * An {@code application/json} object, for example
   * {@code {"error":"overloaded","reason":"SHED","status":429,"retryAfterSeconds":1}}.
   */
  JSON,
  /** No body at all. */
  EMPTY
}
