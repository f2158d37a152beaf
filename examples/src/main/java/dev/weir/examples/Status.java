package dev.weir.examples;

/** How a load-generator request ended, as the client saw it. */
public enum Status {
  /** A 2xx answer within the client timeout (counted from the scheduled start): goodput. */
  OK,
  /** 429 Too Many Requests: shed at once, cheap for both sides. */
  TOO_MANY_REQUESTS,
  /** 503 Service Unavailable: shed after queueing, or timed out on the server. */
  UNAVAILABLE,
  /** No answer within the client timeout, counted from the scheduled start. */
  TIMEOUT,
  /** Any other status, or a connection failure. */
  OTHER;

  /** The status for an HTTP response code. */
  public static Status ofCode(int code) {
    if (code >= 200 && code < 300) {
      return OK;
    }
    if (code == 429) {
      return TOO_MANY_REQUESTS;
    }
    if (code == 503) {
      return UNAVAILABLE;
    }
    return OTHER;
  }
}
