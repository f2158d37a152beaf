package dev.weir.examples;

/**
 * A fixed amount of CPU work, the cost of the example server's {@code GET /compute}: {@code
 * rounds} rounds of a 64-bit multiply-xorshift hash, each depending on the one before. The chain of
 * dependent multiplies cannot be vectorised or computed in closed form, and the caller writes the
 * result into the response, so the JIT cannot drop the loop; its cost is therefore proportional to
 * {@code rounds} and the same for every call, with no sleep, lock or pool in it. Unlike {@link
 * Downstream}, its capacity is set by the cores, shared with everything else the server does.
 *
 * <p>{@link #slowDown} makes every call from then on costlier, as a CPU-bound path that degrades
 * (a bigger input, a cold cache). Thread-safe; {@link #run} allocates nothing.
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
  /** The rounds a call runs now: {@link #rounds} at full speed. */
  private volatile int current;

  /**
   * @param rounds hash rounds per call, at least 1
   * @throws IllegalArgumentException if {@code rounds} is less than 1
   */
  public Compute(int rounds) {
    if (rounds < 1) {
      throw new IllegalArgumentException("rounds must be at least 1, was " + rounds);
    }
    this.rounds = rounds;
    this.current = rounds;
  }

  /**
   * Makes every call that starts from now on {@code factor} times as costly as at full speed (at
   * least one round); 1 restores full speed.
   *
   * @throws IllegalArgumentException if {@code factor} is not positive and finite
   */
  public void slowDown(double factor) {
    if (!(factor > 0 && factor < Double.POSITIVE_INFINITY)) {
      throw new IllegalArgumentException("factor must be positive and finite, was " + factor);
    }
    current = (int) Math.max(1, Math.min(Integer.MAX_VALUE, Math.round(rounds * factor)));
  }

  /** Hash rounds per call at full speed. */
  public int rounds() {
    return rounds;
  }

  /** Runs the rounds from {@code seed} and returns the hash, which the caller must use. */
  public long run(long seed) {
    long h = seed;
    int n = current;
    for (int i = 0; i < n; i++) {
      h ^= h >>> 33;
      h *= MULTIPLIER;
      h += i;
    }
    return h;
  }
}
