package dev.weir.jmh;

import dev.weir.AdmissionCallback;
import dev.weir.Permit;
import dev.weir.RejectReason;

/**
 * Releases its permit as soon as it is admitted, as a request that does no work would. Stateless,
 * so one instance serves every thread and every request.
 */
final class ReleasingCallback implements AdmissionCallback {
  @Override
  public void onAdmitted(Permit permit) {
    permit.success();
  }

  @Override
  public void onRejected(RejectReason reason) {
    // Nothing to undo: a rejected request holds no permit.
  }
}
