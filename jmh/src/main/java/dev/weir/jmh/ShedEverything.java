package dev.weir.jmh;

import dev.weir.ControlWindow;
import dev.weir.Priority;
import dev.weir.Rejector;

/**
 * A rejector stuck at full overload once armed: its cutoff of 0 then sheds every priority that
 * would wait. Until armed it sheds nothing, so that a benchmark can queue a request first
 * whenever the timer's ticks happen to run.
 */
final class ShedEverything implements Rejector {
  private volatile boolean armed;

  void arm() {
    armed = true;
  }

  @Override
  public int update(ControlWindow window) {
    return armed ? 0 : Priority.LEVELS;
  }

  @Override
  public double ratio() {
    return armed ? 1 : 0;
  }

  @Override
  public boolean overloaded() {
    return armed;
  }
}
