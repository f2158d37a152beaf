package dev.weir.jetty;

import static dev.weir.jetty.Support.WAIT;
import static dev.weir.jetty.Support.assertDrained;
import static dev.weir.jetty.Support.await;
import static dev.weir.jetty.Support.holdOrAnswer;
import static dev.weir.jetty.Support.oneAtATime;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.LoadShedder;
import dev.weir.Snapshot;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.Test;

/**
 * A client that goes away while its request is queued, on a real server: what Jetty 12's core API
 * reports, and that the request leaves the queue, never runs and leaks nothing either way.
 */
class DisconnectHttpTest {
  /** The queued request's way out when nothing reports the disconnect; far above the polls. */
  private static final Duration QUEUE_TIMEOUT = Duration.ofSeconds(6);
  /** How long a report of the disconnect may take to count as "at once". */
  private static final Duration AT_ONCE = Duration.ofSeconds(3);

  private final AtomicInteger runs = new AtomicInteger();
  private final AtomicReference<Callback> held = new AtomicReference<>();

  /** Holds the first request's permit until released; counts every run. */
  private WeirHandler handler() {
    return WeirHandler.builder()
        .shedder(oneAtATime().requestTimeout(Duration.ofSeconds(60)).queueTimeout(QUEUE_TIMEOUT))
        .handler(holdOrAnswer(runs, held)).build();
  }

  /** Sends a request that holds the only permit; returns the shedder. */
  private LoadShedder holdThePermit(HttpClient client, TestServer s, WeirHandler weir,
      CompletableFuture<Result> first) {
    client.newRequest(s.uri("/hold")).headers(h -> h.add("X-Hold", "1"))
        .timeout(WAIT.toSeconds(), TimeUnit.SECONDS).send(first::complete);
    await(() -> held.get() != null, WAIT, () -> "not held");
    LoadShedder shedder = weir.shedders().get(WeirHandler.SINGLE_ROUTE);
    await(() -> shedder.inflight() == 1, WAIT, () -> "held " + shedder.inflight());
    return shedder;
  }

  /** Over HTTP/2 the client's stream reset reaches the request's failure listener at once. */
  @Test
  void http2StreamResetWithdrawsTheQueuedRequestAtOnce() throws Exception {
    WeirHandler weir = handler();
    try (TestServer s = TestServer.start(weir)) {
      HttpClient h2 = Support.Protocol.HTTP2.client();
      try {
        CompletableFuture<Result> first = new CompletableFuture<>();
        LoadShedder shedder = holdThePermit(h2, s, weir, first);
        org.eclipse.jetty.client.Request doomed = h2.newRequest(s.uri("/work"));
        CompletableFuture<Result> result = new CompletableFuture<>();
        doomed.send(result::complete);
        await(() -> shedder.queued() == 1, WAIT, () -> "not queued");
        long abortedAt = System.nanoTime();
        assertTrue(doomed.abort(new Exception("client gone")).get(5, TimeUnit.SECONDS));
        await(() -> shedder.snapshot().total(Snapshot.Counter.CANCELLED) == 1, AT_ONCE,
            () -> "not withdrawn: " + shedder.snapshot());
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - abortedAt);
        System.out.println("h2 stream reset: withdrawn " + ms + " ms after the abort");
        assertEquals(0, shedder.queued());
        assertNotNull(result.get(5, TimeUnit.SECONDS).getFailure());
        held.get().succeeded();
        assertEquals(200, first.get(WAIT.toSeconds(), TimeUnit.SECONDS).getResponse().getStatus());
        assertDrained(weir);
        assertEquals(1, runs.get(), "the abandoned request ran");
        assertEquals(0, shedder.snapshot().total(Snapshot.Counter.QUEUE_TIMEOUT));
      } finally {
        h2.stop();
      }
    }
  }

  /** Over HTTP/2 the client closing its whole connection withdraws its queued request too. */
  @Test
  void http2ConnectionCloseWithdrawsTheQueuedRequestAtOnce() throws Exception {
    WeirHandler weir = handler();
    try (TestServer s = TestServer.start(weir)) {
      HttpClient holder = Support.Protocol.HTTP1.client();
      HttpClient h2 = Support.Protocol.HTTP2.client();
      try {
        CompletableFuture<Result> first = new CompletableFuture<>();
        LoadShedder shedder = holdThePermit(holder, s, weir, first);
        h2.newRequest(s.uri("/work")).send(r -> { });
        await(() -> shedder.queued() == 1, WAIT, () -> "not queued");
        h2.stop(); // closes the connection
        await(() -> shedder.snapshot().total(Snapshot.Counter.CANCELLED) == 1, AT_ONCE,
            () -> "not withdrawn: " + shedder.snapshot());
        held.get().succeeded();
        assertEquals(200, first.get(WAIT.toSeconds(), TimeUnit.SECONDS).getResponse().getStatus());
        assertDrained(weir);
        assertEquals(1, runs.get(), "the abandoned request ran");
      } finally {
        holder.stop();
      }
    }
  }

  /**
   * Over HTTP/1.1 a client that closes its socket (FIN, or RST with linger 0) while queued: the
   * outcome is printed and the request must leave the queue, never run, leak nothing.
   */
  @Test
  void http1SocketCloseWhileQueued() throws Exception {
    for (boolean reset : new boolean[] {false, true}) {
      held.set(null);
      runs.set(0);
      WeirHandler weir = handler();
      try (TestServer s = TestServer.start(weir)) {
        HttpClient holder = Support.Protocol.HTTP1.client();
        try {
          CompletableFuture<Result> first = new CompletableFuture<>();
          LoadShedder shedder = holdThePermit(holder, s, weir, first);
          Socket socket = new Socket("127.0.0.1", s.port());
          OutputStream out = socket.getOutputStream();
          out.write("GET /work HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
              .getBytes(StandardCharsets.US_ASCII));
          out.flush();
          await(() -> shedder.queued() == 1, WAIT, () -> "not queued");
          long closedAt = System.nanoTime();
          if (reset) {
            socket.setSoLinger(true, 0);
          }
          socket.close();
          await(() -> shedder.queued() == 0, QUEUE_TIMEOUT.plus(WAIT), () -> "stuck");
          long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closedAt);
          Snapshot snap = shedder.snapshot();
          System.out.printf("http/1.1 %s while queued: left the queue after %d ms,"
                  + " cancelled=%d queue-timeout=%d%n", reset ? "RST" : "FIN", ms,
              snap.total(Snapshot.Counter.CANCELLED), snap.total(Snapshot.Counter.QUEUE_TIMEOUT));
          held.get().succeeded();
          assertEquals(200, first.get(WAIT.toSeconds(), TimeUnit.SECONDS).getResponse()
              .getStatus());
          assertDrained(weir);
          assertEquals(1, runs.get(), "the abandoned request ran");
        } finally {
          holder.stop();
        }
      }
    }
  }
}
