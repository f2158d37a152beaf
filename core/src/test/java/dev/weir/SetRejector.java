package dev.weir;

import java.util.ArrayList;
import java.util.List;

/**
 * A rejector for tests: it applies the cutoff and overload judgement the test sets, and keeps
 * what the shedder's windows told it. Driven by a virtual timer on the test's thread.
 */
final class SetRejector implements Rejector {
  /** The cutoff every update returns. */
  int cutoff = Priority.LEVELS;
  /** What {@link #overloaded()} reports. */
  boolean overloaded;
  /** Arrivals over every window seen. */
  long arrivals;
  /** Each window's queue bound while overloaded, as the shedder's policy told it, in order. */
  final List<Integer> bounds = new ArrayList<>();
  /** Each window's backlog target, as the shedder's policy told it, in order. */
  final List<Double> backlogTargets = new ArrayList<>();

  @Override
  public int update(ControlWindow window) {
    arrivals += window.arrivals();
    return cutoff;
  }

  @Override
  public int update(ControlWindow window, double backlogTarget, int queueBound) {
    bounds.add(queueBound);
    backlogTargets.add(backlogTarget);
    return update(window);
  }

  @Override
  public double ratio() {
    return cutoff >= Priority.LEVELS ? 0 : 0.5;
  }

  @Override
  public boolean overloaded() {
    return overloaded;
  }
}
