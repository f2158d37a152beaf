package dev.weir.http;

import dev.weir.LoadShedder;
import dev.weir.internal.Check;
import java.util.function.ToIntFunction;

/**
 * An adapter's cap on how many of its server's threads admitted requests hold, where each admitted
 * request holds one while it runs (a synchronous servlet, a blocking Jetty handler) and a waiting
 * request holds none. Past that many, requests would wait for a thread in the server's own queue,
 * before the adapter sees them: no priority orders that queue, no shedder can answer from it, and
 * a limit standing above the threads would never bind, so the shedder would shed nothing. So once
 * a route's request has run on a server thread from start to finish, the route's limit is capped
 * ({@link LoadShedder#capConcurrency}) at {@link #admittable} of the pool. A route whose
 * application answers asynchronously holds no thread while it runs and is left uncapped.
 *
 * <p>The pool is read once, from the first such request; thread-safe.
 */
public final class ServerThreads {
  /**
   * Threads always left to the server, at the least: for new requests to reach the adapter and be
   * queued or answered at once, which takes each a few microseconds, and for the server's own
   * tasks.
   */
  static final int MIN_SPARE = 4;
  /** The share of a larger pool left to the server, for the same reasons: a sixteenth. */
  static final int SPARE_DIVISOR = 16;

  /** -1 until the pool is read; then the cap, or 0 for none. */
  private volatile int cap = -1;

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
   * Called after an admitted request of {@code route} ran on a server thread from start to
   * finish: caps the route at {@link #admittable} of the pool's threads, which {@code poolThreads}
   * reads from the request the first time (0 or less, or an exception, for a pool of no fixed
   * size, or one whose requests run on virtual threads: then no route is capped).
   */
  public <R> void ranOnServerThread(LoadShedder route, R request,
      ToIntFunction<? super R> poolThreads) {
    int c = cap;
    if (c < 0) {
      int threads;
      try {
        threads = poolThreads.applyAsInt(request);
      } catch (RuntimeException e) {
        threads = 0;
      }
      c = threads > 0 ? admittable(threads) : 0;
      cap = c;
    }
    if (c > 0 && route.concurrencyCap() > c) {
      route.capConcurrency(c);
    }
  }
}
