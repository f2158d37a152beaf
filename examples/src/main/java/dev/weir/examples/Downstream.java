package dev.weir.examples;

import java.time.Duration;
import java.util.Random;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * A simulated downstream dependency, such as a database behind a pool of {@code connections}
 * connections: a call waits for a free connection, holds it for a random service time, and gives
 * it back. Its capacity is therefore {@code connections / meanServiceTime} calls per second, and
 * past that rate callers queue.
 *
 * <p>The wait is deliberately unbounded and first-come first-served (a fair semaphore), like a
 * connection pool with a generous checkout timeout: this is what makes an unprotected server
 * collapse under overload, because every caller waits its turn behind work whose client has
 * already given up.
 *
 * <p>Service times are lognormal with the given mean (a realistic right-skewed shape), drawn from
 * a seeded {@link Random}; the sequence is shared by all threads, so a run is reproducible in
 * distribution, not in order. {@link #slowDown} makes every call slower from then on, as a
 * degrading dependency does. Thread-safe.
 */
public final class Downstream {
  /** Spread of the lognormal service time: about 90% of calls fall in 0.45..2 times the mean. */
  private static final double SIGMA = 0.5;

  private final int connections;
  private final long meanServiceNanos;
  private final Semaphore pool;
  private final Random random;
  /** Every service time is multiplied by this: 1 at full speed. */
  private volatile double slowdown = 1;

  /**
   * @param connections the pool size, at least 1
   * @param meanServiceTime the mean time a call holds a connection, positive
   * @param seed the seed of the service-time sequence
   * @throws IllegalArgumentException naming the setting if one is out of range
   */
  public Downstream(int connections, Duration meanServiceTime, long seed) {
    if (connections < 1) {
      throw new IllegalArgumentException("connections must be at least 1, was " + connections);
    }
    if (meanServiceTime.isNegative() || meanServiceTime.isZero()) {
      throw new IllegalArgumentException(
          "meanServiceTime must be positive, was " + meanServiceTime);
    }
    this.connections = connections;
    this.meanServiceNanos = meanServiceTime.toNanos();
    this.pool = new Semaphore(connections, true);
    this.random = new Random(seed);
  }

  /**
   * Makes one call: waits (without bound) for a connection, then holds it for one service time.
   *
   * @throws InterruptedException if interrupted while waiting or serving; the connection, if one
   *     was taken, is given back
   */
  public void call() throws InterruptedException {
    long serviceNanos = nextServiceNanos();
    pool.acquire();
    try {
      TimeUnit.NANOSECONDS.sleep(serviceNanos);
    } finally {
      pool.release();
    }
  }

  /**
   * Makes every call that starts from now on {@code factor} times as slow as at full speed (so the
   * capacity is divided by it); 1 restores full speed.
   *
   * @throws IllegalArgumentException if {@code factor} is not positive and finite
   */
  public void slowDown(double factor) {
    if (!(factor > 0 && factor < Double.POSITIVE_INFINITY)) {
      throw new IllegalArgumentException("factor must be positive and finite, was " + factor);
    }
    slowdown = factor;
  }

  /** The capacity in calls per second at full speed: connections over the mean service time. */
  public double capacityPerSecond() {
    return connections * 1e9 / meanServiceNanos;
  }

  /** The pool size. */
  public int connections() {
    return connections;
  }

  /** The mean service time. */
  public Duration meanServiceTime() {
    return Duration.ofNanos(meanServiceNanos);
  }

  /** The number of callers waiting for a connection now (an estimate, for monitoring). */
  public int waiting() {
    return pool.getQueueLength();
  }

  /** The number of connections in use now. */
  public int busy() {
    return connections - pool.availablePermits();
  }

  private long nextServiceNanos() {
    // exp(sigma Z - sigma^2 / 2) has mean 1, so the lognormal keeps the configured mean.
    double g = random.nextGaussian(); // Random is thread-safe
    return Math.max(1,
        Math.round(slowdown * meanServiceNanos * Math.exp(SIGMA * g - SIGMA * SIGMA / 2)));
  }
}
