package dev.weir.examples;

/**
 * A fixed amount of CPU work, the cost of the example server's {@code GET /compute}: {@code
 * rounds} rounds of a 64-bit multiply-xorshift hash, each depending on the one before. The chain of
 * dependent multiplies cannot be vectorised or computed in closed form, and the caller writes the
 * result into the response, so the JIT cannot drop the loop; its cost is therefore proportional to
 * {@code rounds} and the same for every call, with no sleep, lock or pool in it. Unlike {@link
 * Downstream}, its capacity is set by the cores, shared with everything else the server does.
 *
 * <p>Immutable and thread-safe; {@link #run} allocates nothing.
 */
public final class Compute {
  /**
   * Default rounds per call, 1,800,000: about 4 ms of CPU on the 2-core dev VM (2.2 ns a round,
   * measured with thread CPU time), comparable with {@code /work}'s 20 ms at 8 connections.
   */
  public static final int DEFAULT_ROUNDS = 1_800_000;
  /** The murmur3 finaliser's first multiplier: odd, so each round is a bijection of the state. */
  private static final long MULTIPLIER = 0xff51afd7ed558ccdL;

  private final int rounds;

  /**
   * @param rounds hash rounds per call, at least 1
   * @throws IllegalArgumentException if {@code rounds} is less than 1
   */
  public Compute(int rounds) {
    if (rounds < 1) {
      throw new IllegalArgumentException("rounds must be at least 1, was " + rounds);
    }
    this.rounds = rounds;
  }

  /** Hash rounds per call. */
  public int rounds() {
    return rounds;
  }

  /** Runs the rounds from {@code seed} and returns the hash, which the caller must use. */
  public long run(long seed) {
    long h = seed;
    for (int i = 0; i < rounds; i++) {
      h ^= h >>> 33;
      h *= MULTIPLIER;
      h += i;
    }
    return h;
  }
}
