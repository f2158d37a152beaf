package dev.weir.http;

import dev.weir.ConcurrencyBudget;
import dev.weir.LoadShedder;
import dev.weir.internal.Check;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToIntFunction;

/**
 * An adapter's cap on how many of its server's threads admitted requests hold, where each admitted
 * request holds one while it runs (a synchronous servlet, a blocking Jetty handler) and a waiting
 * request holds none. Past that many, requests would wait for a thread in the server's own queue,
 * before the adapter sees them: no priority orders that queue, no shedder can answer from it, and
 * limits standing above the threads would never bind, so the shedders would shed nothing. So once
 * a route's request has run on a server thread from start to finish, the route shares one {@link
 * ConcurrencyBudget} of {@link #admittable} of the pool with every other such route ({@link
 * LoadShedder#capConcurrency(ConcurrencyBudget)}): one busy route may take all of it, several
 * share it. A route whose application answers asynchronously holds no thread while it runs and is
 * left uncapped; so is a route that answers some requests at once and others asynchronously (an
 * asynchronous application that answers an invalid request on the spot, say), from its first
 * asynchronous answer on: its limit must not be held at threads most of its requests do not hold.
 *
 * <p>The pool is read once, from the first such request; thread-safe.
 */
public final class ServerThreads {
  /**
   * Threads always left to the server, at the least: one for new requests to reach the adapter and
   * be queued or answered at once, which takes each a few microseconds, and one for the server's
   * own tasks. Each costs a small pool (Undertow's 8 per I/O thread, so 16 on 2 cores) a share of
   * its capacity.
   */
  static final int MIN_SPARE = 2;
  /** The share of a larger pool left to the server, for the same reasons: a sixteenth. */
  static final int SPARE_DIVISOR = 16;
  /** Before the pool is read. */
  private static final ConcurrencyBudget UNREAD = new ConcurrencyBudget(1);

  /** {@link #UNREAD} until the pool is read; then the budget, or null for none. */
  private volatile ConcurrencyBudget budget = UNREAD;
  /** Routes that answered asynchronously: never capped again. */
  private final Set<LoadShedder> asynchronous = ConcurrentHashMap.newKeySet();

  /**
   * The most admitted requests that may hold threads of a pool of {@code threads} (what can run
   * requests, without the threads a server leases to its acceptors and selectors): the pool less a
   * sixteenth of it, rounded up, and less at least {@value #MIN_SPARE}; at least 1.
   *
   * @throws IllegalArgumentException naming {@code threads} if it is below 1
   */
  public static int admittable(int threads) {
    Check.atLeast("threads", threads, 1);
    int spare = Math.max(MIN_SPARE, (threads + SPARE_DIVISOR - 1) / SPARE_DIVISOR);
    return Math.max(1, threads - spare);
  }

  /**
   * Called when the server's call that handed an admitted request of {@code route} to the
   * application returned: {@link #ranOnServerThread} if the request had completed by then (it
   * held the thread throughout), else {@link #ranAsynchronously}. The adapters' one entry point.
   */
  public <R> void returned(LoadShedder route, R request, boolean completed,
      ToIntFunction<? super R> poolThreads) {
    if (completed) {
      ranOnServerThread(route, request, poolThreads);
    } else {
      ranAsynchronously(route);
    }
  }

  /**
   * Called after an admitted request of {@code route} ran on a server thread from start to
   * finish: caps the route by the budget of {@link #admittable} of the pool's threads, which
   * {@code poolThreads} reads from the request the first time (0 or less, or an exception, for a
   * pool of no fixed size, or one whose requests run on virtual threads: then no route is capped).
   */
  public <R> void ranOnServerThread(LoadShedder route, R request,
      ToIntFunction<? super R> poolThreads) {
    ConcurrencyBudget b = budget;
    if (b == UNREAD) {
      int threads;
      try {
        threads = poolThreads.applyAsInt(request);
      } catch (RuntimeException e) {
        threads = 0;
      }
      b = threads > 0 ? new ConcurrencyBudget(admittable(threads)) : null;
      budget = b;
    }
    if (b != null && route.concurrencyBudget() != b && !asynchronous.contains(route)) {
      route.capConcurrency(b);
    }
  }

  /**
   * Called after an admitted request of {@code route} gave its server thread back before it
   * completed: if the route is capped by this budget, it leaves it and is not capped again. Costs
   * one volatile read for a route that is not capped.
   */
  public void ranAsynchronously(LoadShedder route) {
    ConcurrencyBudget b = budget;
    if (b != null && route.concurrencyBudget() == b) { // never UNREAD: no route joins it
      asynchronous.removeIf(LoadShedder::isClosed); // rare: once per route that mixes both
      asynchronous.add(route);
      route.capConcurrency((ConcurrencyBudget) null);
    }
  }
}
