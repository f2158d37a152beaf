package dev.weir.control;

import dev.weir.ControlWindow;
import dev.weir.Priority;
import dev.weir.Rejector;

/** Factories for {@link Rejector}s. */
public final class Rejectors {
  private Rejectors() {}

  /** A rejector that never sheds at the door: only the queue's bound and timeouts reject. */
  public static Rejector none() {
    return new Rejector() {
      @Override
      public int update(ControlWindow window) {
        return Priority.LEVELS;
      }

      @Override
      public double ratio() {
        return 0;
      }

      @Override
      public boolean overloaded() {
        return false;
      }

      @Override
      public String toString() {
        return "NoRejector";
      }
    };
  }

  /** The zero-configuration adaptive rejector: {@link PidRejector} with its defaults. */
  public static Rejector adaptive() {
    return PidRejector.builder().build();
  }
}
