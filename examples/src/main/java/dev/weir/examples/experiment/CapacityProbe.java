package dev.weir.examples.experiment;

import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * Measures an endpoint's capacity closed-loop: {@code concurrency} clients each send a request as
 * soon as their last one is answered, the successes are counted each second, and the capacity is
 * the highest mean rate over {@value #WINDOW_SECONDS} consecutive seconds. A closed loop cannot
 * overload the server (at most {@code concurrency} requests are ever in it), so with enough
 * clients to keep every core busy this is the most the endpoint serves, client overhead on the
 * same machine included.
 *
 * <p>The best window, not the last or the mean: the probe runs first, in a cold JVM, and the rate
 * keeps rising for 15 to 40 seconds while the JIT compiles the server, the client and the work
 * (for {@code GET /compute} on the 2-core machine, from about 210 requests a second in the first
 * second to about 440), with dips of 10-20% from second to second on the way. A closed loop's rate
 * is never above what the server can serve, so the best window reads the warm server, and a dip
 * does not; a rate measured on the way up set every later load below what its label says.
 *
 * <p>This is for endpoints whose capacity cannot be derived, such as CPU work, which depends on
 * the cores and on what else runs on them. Bounded in time; each run has its own client.
 */
final class CapacityProbe {
  /** Clients per core: twice, so that a core is not idle while its client reads an answer. */
  static final int CLIENTS_PER_CORE = 2;
  /** Seconds a rate is averaged over: enough to smooth a second's dip, short beside the probe. */
  static final int WINDOW_SECONDS = 5;
  /** Gives up on a request after this: far above any closed-loop latency here. */
  private static final long REQUEST_TIMEOUT_MILLIS = 10_000;
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  private CapacityProbe() {}

  /**
   * The capacity of {@code GET target}: the highest mean successes per second over {@value
   * #WINDOW_SECONDS} consecutive seconds (over all of them, if fewer) of {@code seconds} of
   * {@code concurrency} closed-loop clients.
   *
   * @throws IllegalArgumentException if {@code seconds} or {@code concurrency} is below 1
   * @throws InterruptedException if interrupted while counting
   * @throws Exception if the client cannot start or stop
   */
  static double measure(URI target, int concurrency, int seconds) throws Exception {
    if (seconds < 1 || concurrency < 1) {
      throw new IllegalArgumentException("seconds and concurrency must be at least 1, were "
          + seconds + " and " + concurrency);
    }
    QueuedThreadPool threads = new QueuedThreadPool(Math.max(8, concurrency + 4), 2);
    threads.setName("capacity-probe");
    threads.setDaemon(true);
    HttpClient client = new HttpClient();
    client.setExecutor(threads);
    client.setMaxConnectionsPerDestination(concurrency);
    client.setFollowRedirects(false);
    client.start();
    try {
      AtomicLong ok = new AtomicLong();
      CountDownLatch stopped = new CountDownLatch(concurrency);
      Loop[] loops = new Loop[concurrency];
      for (int i = 0; i < concurrency; i++) {
        loops[i] = new Loop(client, target, ok, stopped);
      }
      long start = System.nanoTime();
      for (Loop loop : loops) {
        loop.send();
      }
      long[] perSecond = new long[seconds];
      long last = 0;
      for (int s = 0; s < seconds; s++) {
        long end = start + (s + 1) * SECOND;
        for (long left = end - System.nanoTime(); left > 0; left = end - System.nanoTime()) {
          LockSupport.parkNanos(left);
          if (Thread.interrupted()) {
            throw new InterruptedException(); // else parkNanos returns at once: a busy spin
          }
        }
        long now = ok.get();
        perSecond[s] = now - last;
        last = now;
      }
      for (Loop loop : loops) {
        loop.stop = true;
      }
      if (!stopped.await(REQUEST_TIMEOUT_MILLIS + 5_000, TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("the capacity probe's clients did not stop");
      }
      return bestRate(perSecond);
    } finally {
      client.stop();
    }
  }

  /**
   * The highest mean of {@value #WINDOW_SECONDS} consecutive counts (of all of them, if fewer).
   *
   * @param perSecond successes counted in each second, oldest first; not empty
   */
  static double bestRate(long[] perSecond) {
    int window = Math.min(WINDOW_SECONDS, perSecond.length);
    long sum = 0;
    for (int i = 0; i < window; i++) {
      sum += perSecond[i];
    }
    long best = sum;
    for (int i = window; i < perSecond.length; i++) {
      sum += perSecond[i] - perSecond[i - window];
      best = Math.max(best, sum);
    }
    return (double) best / window;
  }

  /** One closed-loop client: sends, and on every answer counts it and sends again until stopped. */
  private static final class Loop {
    private final HttpClient client;
    private final URI target;
    private final AtomicLong ok;
    private final CountDownLatch stopped;
    volatile boolean stop;

    Loop(HttpClient client, URI target, AtomicLong ok, CountDownLatch stopped) {
      this.client = client;
      this.target = target;
      this.ok = ok;
      this.stopped = stopped;
    }

    void send() {
      client.newRequest(target).timeout(REQUEST_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)
          .send(this::answered);
    }

    private void answered(Result result) {
      if (result.isSucceeded() && result.getResponse().getStatus() == 200) {
        ok.incrementAndGet();
      }
      if (stop) {
        stopped.countDown();
      } else {
        send();
      }
    }
  }
}
