package dev.weir.jmh;

import dev.weir.ControlWindow;
import dev.weir.Rejector;

/** A rejector stuck at full overload: its cutoff of 0 sheds every priority at the door. */
final class ShedEverything implements Rejector {
  @Override
  public int update(ControlWindow window) {
    return 0;
  }

  @Override
  public double ratio() {
    return 1;
  }

  @Override
  public boolean overloaded() {
    return true;
  }
}
