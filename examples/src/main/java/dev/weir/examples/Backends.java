package dev.weir.examples;

import java.util.Objects;

/**
 * What the example server's endpoints spend their time on: {@code GET /work} calls the {@link
 * Downstream}, {@code GET /compute} runs the {@link Compute}. A fresh server gets fresh backends,
 * so that no run inherits another's queue.
 *
 * @param downstream the connection pool {@code /work} calls
 * @param compute the CPU work of {@code /compute}
 */
public record Backends(Downstream downstream, Compute compute) {
  public Backends {
    Objects.requireNonNull(downstream, "downstream");
    Objects.requireNonNull(compute, "compute");
  }

  /** {@code downstream} and the default {@link Compute} ({@link Compute#DEFAULT_ROUNDS}). */
  public static Backends of(Downstream downstream) {
    return new Backends(downstream, new Compute(Compute.DEFAULT_ROUNDS));
  }
}
