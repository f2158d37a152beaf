package dev.weir.examples.experiment;

import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * Measures an endpoint's capacity closed-loop: {@code concurrency} clients each send a request as
 * soon as their last one is answered, for a warm-up and then a measured window, and the capacity
 * is the successes per second that ended in the window. A closed loop cannot overload the server
 * (at most {@code concurrency} requests are ever in it), so with enough clients to keep every core
 * busy this is the most the endpoint serves, client overhead on the same machine included.
 *
 * <p>This is for endpoints whose capacity cannot be derived, such as CPU work, which depends on
 * the cores and on what else runs on them. Bounded in time; each run has its own client.
 */
final class CapacityProbe {
  /** Clients per core: twice, so that a core is not idle while its client reads an answer. */
  static final int CLIENTS_PER_CORE = 2;
  /** Gives up on a request after this: far above any closed-loop latency here. */
  private static final long REQUEST_TIMEOUT_MILLIS = 10_000;

  private CapacityProbe() {}

  /**
   * The successes per second of {@code GET target} from {@code concurrency} closed-loop clients,
   * counted over {@code measured} after {@code warmup}.
   *
   * @throws Exception if the client cannot start or stop
   */
  static double measure(URI target, int concurrency, Duration warmup, Duration measured)
      throws Exception {
    QueuedThreadPool threads = new QueuedThreadPool(Math.max(8, concurrency + 4), 2);
    threads.setName("capacity-probe");
    threads.setDaemon(true);
    HttpClient client = new HttpClient();
    client.setExecutor(threads);
    client.setMaxConnectionsPerDestination(concurrency);
    client.setFollowRedirects(false);
    client.start();
    try {
      long from = System.nanoTime() + warmup.toNanos();
      long to = from + measured.toNanos();
      AtomicLong ok = new AtomicLong();
      CountDownLatch stopped = new CountDownLatch(concurrency);
      for (int i = 0; i < concurrency; i++) {
        new Loop(client, target, from, to, ok, stopped).send();
      }
      if (!stopped.await(to - System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(
          REQUEST_TIMEOUT_MILLIS + 5_000), TimeUnit.NANOSECONDS)) {
        throw new IllegalStateException("the capacity probe's clients did not stop");
      }
      return ok.get() / (measured.toNanos() / 1e9);
    } finally {
      client.stop();
    }
  }

  /** One closed-loop client: sends, and on every answer counts it and sends again until done. */
  private static final class Loop {
    private final HttpClient client;
    private final URI target;
    private final long from;
    private final long to;
    private final AtomicLong ok;
    private final CountDownLatch stopped;

    Loop(HttpClient client, URI target, long from, long to, AtomicLong ok,
        CountDownLatch stopped) {
      this.client = client;
      this.target = target;
      this.from = from;
      this.to = to;
      this.ok = ok;
      this.stopped = stopped;
    }

    void send() {
      client.newRequest(target).timeout(REQUEST_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)
          .send(this::answered);
    }

    private void answered(Result result) {
      long now = System.nanoTime();
      if (result.isSucceeded() && result.getResponse().getStatus() == 200 && now - from >= 0
          && now - to < 0) {
        ok.incrementAndGet();
      }
      if (now - to < 0) {
        send();
      } else {
        stopped.countDown();
      }
    }
  }
}
