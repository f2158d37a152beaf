package dev.weir;

/**
 * Hears the fate of a submitted request: exactly one of its methods is called, exactly once.
 *
 * <p>It may be called before {@link LoadShedder#submit} returns, on the submitting thread, or
 * later on another thread: the thread that released a permit, or the timer thread. So its
 * methods must be quick and must not block; hand real work to an executor (for example
 * {@link WorkerPool}). An exception thrown by a callback is caught and logged, and the request's
 * permit, if any, is released as {@link Outcome#ERROR}, so nothing leaks.
 */
public interface AdmissionCallback {
  /**
   * The request may run. The callee owns {@code permit} and must {@linkplain Permit#release
   * release} it exactly once when the request is done.
   */
  void onAdmitted(Permit permit);

  /** The request will not run. No permit is held. */
  void onRejected(RejectReason reason);
}
