package dev.weir;

/** How an admitted request ended, reported when its {@link Permit} is released. */
public enum Outcome {
  /** The request was served. Its latency is a sample for the limit. */
  SUCCESS,
  /**
   * The request failed for a reason unrelated to load (a bad request, an application error). Its
   * latency says nothing about capacity and is not used as a sample.
   */
  ERROR,
  /**
   * The request was dropped or timed out: a sign of overload. Controllers treat it as a latency at
   * least as long as the request's timeout.
   */
  DROPPED
}
