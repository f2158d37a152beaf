package dev.weir.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A fixed set of monotonic counters, striped by thread so that threads on different cores rarely
 * write the same cache line. Adding is one atomic add on the caller's stripe and never allocates;
 * reading sums the stripes. Counters only grow, so readers take differences between two reads to
 * get the count of an interval.
 */
public final class StripedCounters {
  private static final VarHandle AA = MethodHandles.arrayElementVarHandle(long[].class);
  /** Longs per cache line, and padding between stripes so they never share a line. */
  private static final int PAD = 16;

  private final long[] cells;
  private final int slots;
  private final int stride;
  private final int mask;

  /** @param slots the number of counters */
  public StripedCounters(int slots) {
    this(slots, defaultStripes());
  }

  StripedCounters(int slots, int stripes) {
    if (Integer.bitCount(stripes) != 1) {
      throw new IllegalArgumentException("stripes must be a power of two, was " + stripes);
    }
    this.slots = slots;
    this.stride = slots + PAD;
    this.mask = stripes - 1;
    this.cells = new long[stride * stripes + PAD];
  }

  /**
   * Twice the processors, at least 8 and at most 32: threads pick stripes by a hash of their id,
   * so fewer stripes than that make two busy threads share one too often.
   */
  public static int defaultStripes() {
    int n = Math.max(8, Math.min(Runtime.getRuntime().availableProcessors() * 2, 32));
    return Integer.highestOneBit(n - 1) << 1;
  }

  /**
   * A hash of the calling thread, the same on every call from it, whose low bits pick the thread's
   * stripe. Shared with the other striped structures, so that one thread uses the same stripe in
   * each.
   */
  public static int probe() {
    // Fibonacci hashing spreads sequential thread ids over the stripes.
    @SuppressWarnings("deprecation")
    long id = Thread.currentThread().getId();
    return (int) (id * 0x9E3779B97F4A7C15L >>> 40);
  }

  private int base() {
    return PAD + (probe() & mask) * stride;
  }

  /**
   * The calling thread's stripe, for several adds in a row with {@link #add(int, int, long)}.
   * Valid only on the thread that asked.
   */
  public int stripe() {
    return base();
  }

  /** Adds {@code delta} to counter {@code slot} of a stripe from {@link #stripe()}. */
  public void add(int stripe, int slot, long delta) {
    AA.getAndAdd(cells, stripe + slot, delta);
  }

  /** Adds {@code delta} to counter {@code slot} of a stripe, returning that cell's old value. */
  public long getAndAdd(int stripe, int slot, long delta) {
    return (long) AA.getAndAdd(cells, stripe + slot, delta);
  }

  /** Adds {@code delta} to counter {@code slot}. */
  public void add(int slot, long delta) {
    AA.getAndAdd(cells, base() + slot, delta);
  }

  /** Adds one to counter {@code slot}. */
  public void increment(int slot) {
    AA.getAndAdd(cells, base() + slot, 1L);
  }

  /** The sum of counter {@code slot} over all stripes. */
  public long sum(int slot) {
    long s = 0;
    for (int i = PAD + slot; i < cells.length; i += stride) {
      s += (long) AA.getVolatile(cells, i);
    }
    return s;
  }

  /** The number of counters. */
  int slots() {
    return slots;
  }
}
