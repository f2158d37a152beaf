package dev.weir;

/**
 * Thrown by the blocking {@link LoadShedder#acquire} when a request is not admitted. It carries no
 * stack trace: rejection is an expected, frequent outcome under overload, not a bug to locate.
 */
public final class RejectedException extends Exception {
  private static final long serialVersionUID = 1L;

  private final RejectReason reason;

  RejectedException(RejectReason reason) {
    super("request rejected: " + reason, null, false, false);
    this.reason = reason;
  }

  /** Why the request was not admitted. */
  public RejectReason reason() {
    return reason;
  }
}
