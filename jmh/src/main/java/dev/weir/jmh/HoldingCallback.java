package dev.weir.jmh;

import dev.weir.AdmissionCallback;
import dev.weir.Permit;
import dev.weir.RejectReason;

/** Keeps the last permit it was given, for a single benchmark thread to release later. */
final class HoldingCallback implements AdmissionCallback {
  Permit held;
  RejectReason lastRejection;

  @Override
  public void onAdmitted(Permit permit) {
    held = permit;
  }

  @Override
  public void onRejected(RejectReason reason) {
    lastRejection = reason;
  }

  /** The held permit, forgetting it; null if none. */
  Permit take() {
    Permit p = held;
    held = null;
    return p;
  }
}
