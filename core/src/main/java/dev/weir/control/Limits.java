package dev.weir.control;

import dev.weir.ControlWindow;
import dev.weir.Limit;
import dev.weir.internal.Check;

/** Factories for {@link Limit}s. */
public final class Limits {
  private Limits() {}

  /**
   * A limit that never moves.
   *
   * @throws IllegalArgumentException if {@code limit < 1}
   */
  public static Limit fixed(int limit) {
    Check.atLeast("limit", limit, 1);
    return new Limit() {
      @Override
      public int initialLimit() {
        return limit;
      }

      @Override
      public int maxLimit() {
        return limit;
      }

      @Override
      public int update(ControlWindow window) {
        return limit;
      }

      @Override
      public String toString() {
        return "FixedLimit{" + limit + "}";
      }
    };
  }

  /** The zero-configuration adaptive limit: {@link VegasLimit} with its defaults. */
  public static Limit adaptive() {
    return VegasLimit.builder().build();
  }
}
