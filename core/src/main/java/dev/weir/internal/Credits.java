package dev.weir.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * An inflight limit kept as a fixed number of credits, so that taking and returning a permit need
 * not write a cache line that another thread writes too.
 *
 * <h2>Credits</h2>
 * There are always exactly {@code limit} credits, each in one place: held (a permit), in the
 * shared <em>pool</em>, or in one of the per-stripe <em>caches</em> of at most {@value
 * #CACHE_CAPACITY} credits, stripes picked by thread as {@link StripedCounters} picks them, each
 * cache on its own 128-byte block. So {@code held = limit - pool - cached}. Only the pool may go
 * negative: a cut limit is taken from it at once, and releases repay the debt before anything is
 * handed out again.
 *
 * <p>{@link #tryAcquire} takes from the caller's cache, else from the pool, else steals from
 * another stripe's cache. {@link #release} returns into the caller's cache while the pool is
 * <em>plentiful</em> (more than half the limit in the pool) and the caller allows it, else into
 * the pool. A thread that admits and releases with the limit far from used therefore writes only
 * its own cache, and threads on different stripes share no written line: a single counter would
 * move its line between their cores on every admission and every release, as a {@code Semaphore}
 * does. With the pool below half, caching stops and everything goes through the pool, which then
 * behaves as that single counter.
 *
 * <h2>Exactness</h2>
 * A credit moves by a CAS that succeeds only on a positive count, caches never go negative, and
 * the pool only by a cut: so at most {@code limit} permits are held, except after a cut, when
 * nothing is handed out until the pool is positive again, and for the instant of a race with the
 * cut itself (a take that read its count before the cut), as with any limit read and then acted
 * on. A cut drains every cache into the pool, and a release that cached a credit re-reads the
 * pool afterwards and empties its cache into the pool if the pool is no longer plentiful. Each side
 * writes, then reads the other's location; these are volatile accesses, so in their total order
 * at least one side sees the other's write: no credit stays cached past a cut to admit requests
 * over the new limit.
 *
 * <h2>Waiters: the caller's part</h2>
 * This class knows nothing of waiting requests. A credit is lost to them only if it lands where
 * nobody looks: so whoever puts a credit into a cache or the pool ({@link #release}, {@link
 * #drain}, {@link #setLimit}, and a {@link #tryAcquire} that answers {@link #TAKEN_AND_DRAINED})
 * must then look for waiters, and a waiter must be visible before it makes its last {@link
 * #tryAcquire}, which looks at the caller's cache, the pool and every other cache. A credit in
 * transit from a cache to the pool is in neither for a moment, which is why draining counts as
 * putting it into the pool.
 *
 * <h2>Peak</h2>
 * {@link #takePeak} returns the most permits held at once since its last call. A take from a cache
 * does not look at it, to keep the fast path to its own line. A take from the pool compares the
 * peak with {@code limit - pool}, which is {@code held + cached}: an upper bound of the held
 * permits. While the pool stays above half the limit, the bound is taken as it is; once it is
 * down to half (where nothing new is cached, but what was cached before may remain), a bound that
 * would raise the peak first drains the caches into the pool, which makes it exact. Call {@code
 * Q = limit - pool}: takes from caches, steals and caching leave it unchanged, releases into the
 * pool and drains lower it, a change of limit moves both terms alike, and a take from the pool
 * leaves the peak at least {@code Q}; the controller drains just before {@link #takePeak}, which
 * restarts the peak at {@code held = Q}. So {@code held <= Q <= peak} throughout (up to races):
 * the peak is never low; it is exact when the true peak reaches half the limit, and otherwise
 * high by at most the credits cached at that moment (at most {@value #CACHE_CAPACITY} per
 * stripe). On one thread it is exact: its caches other than its own are empty, and its own is
 * empty when it goes to the pool, so {@code Q == held} there, as with a single counter.
 *
 * <p>All methods are thread-safe and lock-free; {@link #setLimit} and {@link #takePeak} are meant
 * for one controlling thread at a time.
 */
public final class Credits {
  /** The most credits one stripe's cache keeps. */
  static final int CACHE_CAPACITY = 2;

  /** {@link #tryAcquire} found no credit. */
  public static final int NONE = 0;
  /** {@link #tryAcquire} took a credit. */
  public static final int TAKEN = 1;
  /**
   * {@link #tryAcquire} took a credit and, to measure a new peak exactly, drained cached credits
   * into the pool: the caller must look for waiters, as after a release.
   */
  public static final int TAKEN_AND_DRAINED = 2;

  private static final VarHandle AA = MethodHandles.arrayElementVarHandle(long[].class);
  /** Longs in 128 bytes: a cache line and the neighbour that the prefetcher pairs with it. */
  private static final int PAD = 16;
  // The shared block: rarely written while the fast path runs from the caches.
  private static final int POOL = PAD;
  private static final int LIMIT = PAD + 1;
  private static final int PEAK = PAD + 2;
  /** Stripe {@code s}'s cache is at {@code FIRST_CACHE + s * PAD}. */
  private static final int FIRST_CACHE = 2 * PAD;

  private final long[] cells;
  private final int mask;

  /** Credits for {@code limit} permits, with as many caches as {@link StripedCounters} stripes. */
  public Credits(int limit) {
    this(limit, StripedCounters.defaultStripes());
  }

  /** @param stripes the number of caches, a power of two */
  Credits(int limit, int stripes) {
    if (limit < 0) {
      throw new IllegalArgumentException("limit must not be negative, was " + limit);
    }
    if (Integer.bitCount(stripes) != 1) {
      throw new IllegalArgumentException("stripes must be a power of two, was " + stripes);
    }
    this.mask = stripes - 1;
    this.cells = new long[FIRST_CACHE + stripes * PAD];
    cells[POOL] = limit;
    cells[LIMIT] = limit;
  }

  private static int cache(int stripe) {
    return FIRST_CACHE + stripe * PAD;
  }

  private int ownCache() {
    return cache(StripedCounters.probe() & mask);
  }

  private long get(int i) {
    return (long) AA.getVolatile(cells, i);
  }

  private boolean cas(int i, long expect, long update) {
    return AA.compareAndSet(cells, i, expect, update);
  }

  // ------------------------------------------------------------------------------- permits

  /**
   * Takes a credit: from the caller's cache, else the pool, else another stripe's cache.
   *
   * @return {@link #NONE} if every place was empty when looked at; {@link #TAKEN}; or {@link
   *     #TAKEN_AND_DRAINED}, after which the caller must look for waiters
   */
  public int tryAcquire() {
    int stripe = StripedCounters.probe() & mask;
    int own = cache(stripe);
    long c = get(own);
    if (c > 0 && cas(own, c, c - 1)) {
      return TAKEN;
    }
    return tryAcquireShared(stripe);
  }

  /** The rest of {@link #tryAcquire}, out of line so that callers inline only the cache take. */
  private int tryAcquireShared(int stripe) {
    for (long p = get(POOL); p > 0; p = get(POOL)) {
      if (cas(POOL, p, p - 1)) {
        return notePoolTake(p - 1) ? TAKEN_AND_DRAINED : TAKEN;
      }
    }
    // The pool is empty, but a credit may idle in a cache: another thread's with nothing to run,
    // or ours, if its CAS above lost to a thread on the same stripe. A steal leaves limit - pool
    // unchanged, so the peak needs no look (see the class comment).
    for (int k = 0; k <= mask; k++) {
      if (take(cache((stripe + k) & mask))) {
        return TAKEN;
      }
    }
    return NONE;
  }

  private boolean take(int i) {
    for (long c = get(i); c > 0; c = get(i)) {
      if (cas(i, c, c - 1)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Returns a credit: into the caller's cache if {@code mayCache}, the pool is plentiful and the
   * cache has room, else into the pool. The caller must then look for waiters.
   *
   * @param mayCache false to return it to the pool, where another thread looks first
   */
  public void release(boolean mayCache) {
    if (mayCache) {
      int own = ownCache();
      long c = get(own);
      // A lost CAS means a thread on the same stripe got there first: the pool will do.
      if (c < CACHE_CAPACITY && plentiful() && cas(own, c, c + 1)) {
        // Cached, then re-read the pool: a cut (or a run of takes) that made it scarce in the
        // meantime, and whose drain may have passed this cache already, is seen here.
        if (!plentiful()) {
          drain(own);
        }
        return;
      }
    }
    AA.getAndAdd(cells, POOL, 1L);
  }

  private boolean plentiful() {
    return get(POOL) > (get(LIMIT) >> 1);
  }

  /**
   * Raises the peak after a take from the pool left {@code pool} there; true if it drained caches.
   */
  private boolean notePoolTake(long pool) {
    long limit = get(LIMIT);
    long bound = limit - pool;
    long peak = get(PEAK);
    if (bound <= peak) {
      return false;
    }
    long drained = 0;
    if (pool <= limit >> 1) {
      // At or above half the limit in use the peak must be exact: drain what was cached before
      // the pool got scarce, and the bound is the number held.
      drained = drainAll();
      bound -= drained;
    }
    raisePeak(bound);
    return drained > 0;
  }

  private void raisePeak(long held) {
    for (long peak = get(PEAK); held > peak; peak = get(PEAK)) {
      if (cas(PEAK, peak, held)) {
        return;
      }
    }
  }

  // ------------------------------------------------------------------------------- control

  /**
   * Sets the limit: the difference goes to or comes from the pool, and a cut drains the caches.
   * The caller must then look for waiters.
   *
   * @throws IllegalArgumentException if {@code limit} is negative
   */
  public void setLimit(int limit) {
    if (limit < 0) {
      throw new IllegalArgumentException("limit must not be negative, was " + limit);
    }
    long old = get(LIMIT);
    if (limit == old) {
      return;
    }
    // The limit first, the pool second: whoever reads the pool and then the limit, as held() and
    // plentiful() do, and sees the new pool, sees the new limit with it.
    AA.setVolatile(cells, LIMIT, (long) limit);
    AA.getAndAdd(cells, POOL, limit - old);
    if (limit < old) {
      drainAll();
    }
  }

  /**
   * Moves every cached credit into the pool, and returns how many it moved. The caller must then
   * look for waiters.
   */
  public int drain() {
    return (int) drainAll();
  }

  private long drainAll() {
    long moved = 0;
    for (int i = FIRST_CACHE; i < cells.length; i += PAD) {
      // Read first: an empty cache, the common case, stays clean in its owner's core.
      if (get(i) > 0) {
        moved += (long) AA.getAndSet(cells, i, 0L);
      }
    }
    if (moved > 0) {
      AA.getAndAdd(cells, POOL, moved);
    }
    return moved;
  }

  private void drain(int cache) {
    long c = (long) AA.getAndSet(cells, cache, 0L);
    if (c > 0) {
      AA.getAndAdd(cells, POOL, c);
    }
  }

  /**
   * The most permits held at once since the last call (at least {@code held}), and starts the
   * next period's peak at {@code held}. Drain just before, and pass the {@link #held()} read after
   * the drain, for the guarantees of the class comment.
   */
  public int takePeak(int held) {
    long peak = (long) AA.getAndSet(cells, PEAK, (long) held);
    return (int) Math.max(peak, held);
  }

  // -------------------------------------------------------------------------- observation

  /** The limit. */
  public int limit() {
    return (int) get(LIMIT);
  }

  /**
   * Permits held: {@code limit - pool - cached}. Exact while no credit moves; while they do, one
   * moment's estimate that may count a moving credit twice or not at all, clamped at zero. It
   * exceeds the limit only when the held permits do, after a cut.
   */
  public int held() {
    long free = get(POOL);
    for (int i = FIRST_CACHE; i < cells.length; i += PAD) {
      free += get(i);
    }
    return (int) Math.max(0, get(LIMIT) - free);
  }

  /** Credits in the pool; negative while a cut is being repaid. */
  public int pooled() {
    return (int) get(POOL);
  }

  /** Credits in the caches. */
  public int cached() {
    long sum = 0;
    for (int i = FIRST_CACHE; i < cells.length; i += PAD) {
      sum += get(i);
    }
    return (int) sum;
  }

  @Override
  public String toString() {
    return "Credits{limit=" + limit() + ", pooled=" + pooled() + ", cached=" + cached() + "}";
  }
}
