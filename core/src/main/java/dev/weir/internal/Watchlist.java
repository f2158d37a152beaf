package dev.weir.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A fixed table of slots where a holder registers what it holds, so that a sweeper can find it
 * later: the shedder's held permits, for the watchdog. Slots come in per-stripe blocks (stripes
 * picked as {@link StripedCounters} picks them), each block on its own 128 bytes or more, so that
 * adding is one CAS on a line that only the threads of one stripe write, and removing is one
 * ordered store. Nothing is allocated, and the table never holds more than it has slots: an add
 * that finds its stripe's block full fails, and the caller watches that element some other way.
 *
 * <p>Ownership: a slot filled by {@link #add} belongs to its element until {@link #remove} empties
 * it, and only one party may call {@link #remove} for it (the shedder: whoever wins the permit's
 * final CAS). A sweeper reads slots with {@link #get} and may see an element that was removed a
 * moment ago; it must check the element's own state before acting on it.
 *
 * <p>Thread-safe and lock-free.
 */
public final class Watchlist<E> {
  /** Slots per stripe. */
  static final int SLOTS = 16;
  /** References between the starts of two stripes' blocks: the block and as much padding. */
  private static final int STRIDE = 2 * SLOTS;

  private static final VarHandle AA = MethodHandles.arrayElementVarHandle(Object[].class);

  private final Object[] slots;
  private final int mask;

  /** A table with as many stripes as {@link StripedCounters}. */
  public Watchlist() {
    this(StripedCounters.defaultStripes());
  }

  /** @param stripes a power of two */
  Watchlist(int stripes) {
    if (Integer.bitCount(stripes) != 1) {
      throw new IllegalArgumentException("stripes must be a power of two, was " + stripes);
    }
    this.mask = stripes - 1;
    // A padding block before the first stripe too, so no block shares a line with the header.
    this.slots = new Object[STRIDE * (stripes + 1)];
  }

  /**
   * Puts {@code e} into a free slot of the calling thread's stripe.
   *
   * @return the slot, for {@link #remove}; or -1 if the stripe's slots are all taken
   */
  public int add(E e) {
    int base = STRIDE * (1 + (StripedCounters.probe() & mask));
    for (int i = base; i < base + SLOTS; i++) {
      if (AA.getOpaque(slots, i) == null && AA.compareAndSet(slots, i, null, e)) {
        return i;
      }
    }
    return -1;
  }

  /** Empties {@code slot}, which {@link #add} returned; once per add. */
  public void remove(int slot) {
    AA.setRelease(slots, slot, null);
  }

  /** The element in {@code slot}, or null. Any index below {@link #length()}. */
  @SuppressWarnings("unchecked")
  public E get(int slot) {
    return (E) AA.getAcquire(slots, slot);
  }

  /** One past the highest slot index: sweep {@code 0..length() - 1}. */
  public int length() {
    return slots.length;
  }
}
