package dev.weir;

import java.util.ArrayList;
import java.util.List;

/** A callback that records what it heard, for tests. Not thread-safe. */
final class Recorder implements AdmissionCallback {
  final String label;
  final List<String> log;
  Permit permit;
  RejectReason reason;
  int calls;

  Recorder(String label, List<String> log) {
    this.label = label;
    this.log = log;
  }

  Recorder() {
    this("", new ArrayList<>());
  }

  @Override
  public void onAdmitted(Permit p) {
    calls++;
    permit = p;
    log.add(label);
  }

  @Override
  public void onRejected(RejectReason r) {
    calls++;
    reason = r;
    log.add(label + ":" + r);
  }
}
