package dev.weir.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A bounded priority queue with one lock-free FIFO bucket per priority level and a bitmap of the
 * buckets that may be non-empty, so finding the most important waiting element is a scan of a few
 * words. No global lock: offers, polls and removals of different levels never contend, and those of
 * one level contend only on that bucket's lock-free queue.
 *
 * <p><b>Order.</b> Levels come in groups of {@code groupSize} consecutive levels (a tier's 128
 * cohorts, for the shedder). {@link #poll()} serves groups strictly in order, and within the most
 * important non-empty group the element offered first, whatever its level. Strict order across
 * all levels would starve the least important admitted levels of a group for as long as more
 * important ones keep arriving: they would wait out their timeout and then be served late. Within
 * a group the levels still order eviction ({@link #evictLessImportantThan}) and shedding. A group
 * size of 1 is strict priority. Within the group, "first" is judged by each bucket's head, so a
 * poll racing an offer may serve a near-oldest element instead of the oldest.
 *
 * <p><b>Ownership.</b> An element is in the queue while {@link Node#isQueued()} holds. Leaving is
 * decided by one CAS on the element ({@link Node#tryDequeue()}), so exactly one party takes each
 * element: a poller, or whoever times it out or cancels it. A party that takes an element outside
 * {@link #poll()} reports it with {@link #removed(int)}, which keeps the count right and unlinks
 * dead elements from the head of that bucket.
 *
 * <p><b>Size.</b> {@link #size()} counts live elements, plus places reserved by {@link #reserve}
 * and not yet filled. It bounds the queue and tells the scheduler whether anything waits.
 *
 * <p><b>Bitmap.</b> A bit is set after an offer and cleared only by a thread that found the bucket
 * empty, which re-checks and sets it again if an offer raced in. So a bit may be set for an empty
 * bucket (a poll skips it), but never clear for a non-empty one.
 */
public final class BucketQueue<E extends BucketQueue.Node> {
  /** An element: it knows its level and holds the state that says whether it is still queued. */
  public interface Node {
    /** The priority level, 0 (most important) to levels - 1. */
    int level();

    /** Whether the element is still waiting in the queue. */
    boolean isQueued();

    /** Atomically moves the element out of the queued state; true for exactly one caller. */
    boolean tryDequeue();

    /** When the element was offered, in any clock's nanoseconds: within a group, earliest first. */
    long offeredNanos();
  }

  private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);

  private final ConcurrentLinkedQueue<E>[] buckets;
  private final long[] bitmap;
  private final AtomicInteger size = new AtomicInteger();
  private volatile boolean emptied = true;

  private final int groupSize;

  /** A strict priority queue: each level is its own group. */
  public BucketQueue(int levels) {
    this(levels, 1);
  }

  /**
   * @param levels the number of priority levels
   * @param groupSize levels per group, a power of two of at least 64 (a bitmap word) or 1
   */
  @SuppressWarnings("unchecked")
  public BucketQueue(int levels, int groupSize) {
    if (groupSize != 1 && (Integer.bitCount(groupSize) != 1 || groupSize < 64)) {
      throw new IllegalArgumentException(
          "groupSize must be 1 or a power of two of at least 64, was " + groupSize);
    }
    this.groupSize = groupSize;
    buckets = new ConcurrentLinkedQueue[levels];
    for (int i = 0; i < levels; i++) {
      buckets[i] = new ConcurrentLinkedQueue<>();
    }
    bitmap = new long[(levels + 63) >>> 6];
  }

  /** Live elements plus unfilled reservations. */
  public int size() {
    return size.get();
  }

  /**
   * Whether some bucket's bit is set: an element may be offered, or a bucket's emptiness is yet to
   * be noticed. False only if every bit was clear at the read, so a {@link #poll()} that returned
   * null followed by this returning true means an offer landed (or a bit was re-set for one) since
   * that poll began; one that sees false ran before the bit of any offer still to come.
   */
  public boolean mayHaveOffered() {
    return firstLevel() >= 0;
  }

  /** Reserves a place for an {@link #offer}, if fewer than {@code capacity} are taken. */
  public boolean reserve(int capacity) {
    for (;;) {
      int s = size.get();
      if (s >= capacity) {
        return false;
      }
      if (size.compareAndSet(s, s + 1)) {
        return true;
      }
    }
  }

  /** Adds an element, into a place reserved with {@link #reserve} (or taken over from an evicted
   * element). */
  public void offer(E e) {
    int level = e.level();
    buckets[level].offer(e);
    WORDS.getAndBitwiseOr(bitmap, level >>> 6, 1L << level);
  }

  /**
   * Takes the earliest offered live element of the most important non-empty group, or null if
   * none.
   */
  public E poll() {
    for (;;) {
      int level = firstLevel();
      if (level < 0) {
        return null;
      }
      if (groupSize > 1) {
        level = earliestInGroupOf(level);
      }
      E e = takeFrom(level);
      if (e != null) {
        return e;
      }
    }
  }

  /**
   * Takes the oldest live element of the least important non-empty level, if that level is less
   * important than {@code level}; its place stays reserved for the caller. Null if there is none.
   */
  public E evictLessImportantThan(int level) {
    for (;;) {
      int last = lastLevel();
      if (last <= level) {
        return null;
      }
      ConcurrentLinkedQueue<E> q = buckets[last];
      E e;
      while ((e = q.poll()) != null) {
        if (e.tryDequeue()) {
          return e;
        }
      }
      clearIfEmpty(last);
    }
  }

  /** Reports that an element of {@code level} left the queue other than by {@link #poll()}. */
  public void removed(int level) {
    if (size.decrementAndGet() == 0) {
      emptied = true;
    }
    ConcurrentLinkedQueue<E> q = buckets[level];
    E head;
    while ((head = q.peek()) != null && !head.isQueued()) {
      q.remove(head);
    }
    if (head == null) {
      clearIfEmpty(level);
    }
  }

  /** Gives back a reservation that will not be filled. */
  public void unreserve() {
    if (size.decrementAndGet() == 0) {
      emptied = true;
    }
  }

  /**
   * Whether the queue has been empty at some moment since the last call, or is empty now. Clears
   * the memory of past emptiness.
   */
  public boolean takeEmptied() {
    boolean was = emptied;
    emptied = false;
    return was || size.get() == 0;
  }

  private E takeFrom(int level) {
    ConcurrentLinkedQueue<E> q = buckets[level];
    E e;
    while ((e = q.poll()) != null) {
      if (e.tryDequeue()) {
        if (size.decrementAndGet() == 0) {
          emptied = true;
        }
        return e;
      }
    }
    clearIfEmpty(level);
    return null;
  }

  private void clearIfEmpty(int level) {
    int word = level >>> 6;
    long bit = 1L << level;
    WORDS.getAndBitwiseAnd(bitmap, word, ~bit);
    if (!buckets[level].isEmpty()) {
      WORDS.getAndBitwiseOr(bitmap, word, bit);
    }
  }

  /** The level, in the group of {@code first} (its first non-empty level), whose head came first. */
  private int earliestInGroupOf(int first) {
    int best = first;
    long bestNanos = 0;
    boolean found = false;
    int fromWord = first >>> 6;
    int toWord = (first & -groupSize) + groupSize >>> 6;
    for (int w = fromWord; w < toWord; w++) {
      long bits = (long) WORDS.getVolatile(bitmap, w);
      if (w == fromWord) {
        bits &= -1L << first;
      }
      for (; bits != 0; bits &= bits - 1) {
        int level = (w << 6) + Long.numberOfTrailingZeros(bits);
        E head = buckets[level].peek();
        if (head != null && (!found || head.offeredNanos() - bestNanos < 0)) {
          best = level;
          bestNanos = head.offeredNanos();
          found = true;
        }
      }
    }
    return best;
  }

  private int firstLevel() {
    for (int w = 0; w < bitmap.length; w++) {
      long bits = (long) WORDS.getVolatile(bitmap, w);
      if (bits != 0) {
        return (w << 6) + Long.numberOfTrailingZeros(bits);
      }
    }
    return -1;
  }

  private int lastLevel() {
    for (int w = bitmap.length - 1; w >= 0; w--) {
      long bits = (long) WORDS.getVolatile(bitmap, w);
      if (bits != 0) {
        return (w << 6) + 63 - Long.numberOfLeadingZeros(bits);
      }
    }
    return -1;
  }
}
