package dev.weir.jetty;

import static dev.weir.jetty.Support.WAIT;
import static dev.weir.jetty.Support.app;
import static dev.weir.jetty.Support.assertDrained;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.LoadShedder;
import dev.weir.Snapshot;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.Test;

/**
 * Many clients over both protocols against an application that answers inline, answers later on
 * another thread, throws or fails its callback, through a shedder small enough to queue, time out
 * and reject. At the end: every request had exactly one completion on the server and one answer
 * at the client, admissions equal releases, and nothing is held or queued.
 */
class StressHttpTest {
  private static final int CLIENT_THREADS = 16;
  private static final int REQUESTS_PER_THREAD = 150;

  @Test
  void everyRequestGetsExactlyOneAnswerAndEveryPermitComesBack() throws Exception {
    ExecutorService later = Executors.newFixedThreadPool(4);
    AtomicLong runs = new AtomicLong();
    WeirHandler weir = WeirHandler.builder()
        .shedder(LoadShedder.builder().limit(() -> Limits.fixed(4)).rejector(Rejectors::none)
            .queueCapacity(24).queueTimeout(Duration.ofMillis(40))
            .requestTimeout(Duration.ofSeconds(10)))
        .handler(app((req, res, cb) -> {
          runs.incrementAndGet();
          switch (ThreadLocalRandom.current().nextInt(6)) {
            case 0:
              throw new IllegalStateException("boom");
            case 1:
              cb.failed(new IOException("failed"));
              return true;
            case 2:
            case 3:
              later.execute(() -> Content.Sink.write(res, true, "later", cb));
              return true;
            default:
              Content.Sink.write(res, true, "now", cb);
              return true;
          }
        })).build();
    // Counts the completions of Jetty's own callback, per request.
    Map<String, AtomicInteger> completions = new ConcurrentHashMap<>();
    AtomicInteger twice = new AtomicInteger();
    Handler.Wrapper counter = new Handler.Wrapper(weir) {
      @Override
      public boolean handle(Request request, Response response, Callback callback)
          throws Exception {
        AtomicInteger n = new AtomicInteger();
        completions.put(request.getId() + "@" + request.getConnectionMetaData().getId(), n);
        Runnable count = () -> {
          if (n.incrementAndGet() > 1) {
            twice.incrementAndGet();
          }
        };
        return super.handle(request, response, Callback.from(callback, count));
      }
    };
    Map<Integer, AtomicInteger> statuses = new TreeMap<>();
    try (TestServer s = TestServer.start(counter)) {
      HttpClient h1 = Support.Protocol.HTTP1.client();
      HttpClient h2 = Support.Protocol.HTTP2.client();
      ExecutorService clients = Executors.newFixedThreadPool(CLIENT_THREADS);
      try {
        List<CompletableFuture<List<Integer>>> all = new ArrayList<>();
        for (int t = 0; t < CLIENT_THREADS; t++) {
          HttpClient client = t % 2 == 0 ? h1 : h2;
          all.add(CompletableFuture.supplyAsync(() -> {
            List<Integer> got = new ArrayList<>();
            List<CompletableFuture<ContentResponse>> batch = new ArrayList<>();
            for (int i = 0; i < REQUESTS_PER_THREAD; i++) {
              batch.add(new CompletableResponseListener(client.newRequest(s.uri("/s"))
                  .headers(h -> h.add("X-Weir-Tier", String.valueOf(
                      ThreadLocalRandom.current().nextInt(6))))
                  .timeout(WAIT.toSeconds(), TimeUnit.SECONDS)).send());
              if (batch.size() == 8) {
                batch.forEach(f -> got.add(f.join().getStatus()));
                batch.clear();
              }
            }
            batch.forEach(f -> got.add(f.join().getStatus()));
            return got;
          }, clients));
        }
        int answered = 0;
        for (CompletableFuture<List<Integer>> f : all) {
          List<Integer> got;
          try {
            got = f.get(120, TimeUnit.SECONDS);
          } catch (ExecutionException e) {
            // Say whether the server ever completed what the client waited for, so that a rare
            // failure tells a request the shedder lost from an answer the transport lost.
            long open = completions.values().stream().filter(n -> n.get() == 0).count();
            throw new AssertionError("a client got no answer; the server saw "
                + completions.size() + " requests, " + open + " not completed; "
                + weir.snapshots(), e);
          }
          for (int status : got) {
            statuses.computeIfAbsent(status, k -> new AtomicInteger()).incrementAndGet();
            answered++;
          }
        }
        int sent = CLIENT_THREADS * REQUESTS_PER_THREAD;
        assertEquals(sent, answered);
        System.out.println("stress: statuses " + statuses);
        assertTrue(statuses.keySet().stream().allMatch(c -> c == 200 || c == 429 || c == 500
            || c == 503), statuses.toString());
        assertDrained(weir);
        later.shutdown();
        assertTrue(later.awaitTermination(10, TimeUnit.SECONDS));
        assertEquals(sent, completions.size(), "requests seen by the server");
        assertEquals(0, twice.get(), "requests completed twice");
        Support.await(() -> completions.values().stream().allMatch(n -> n.get() == 1), WAIT,
            () -> "requests never completed");

        LoadShedder shedder = weir.shedders().get(WeirHandler.SINGLE_ROUTE);
        Snapshot snap = shedder.snapshot();
        long admitted = snap.total(Snapshot.Counter.ADMITTED);
        long released = snap.total(Snapshot.Counter.SUCCEEDED) + snap.total(Snapshot.Counter.FAILED)
            + snap.total(Snapshot.Counter.DROPPED);
        assertEquals(admitted, released, snap.toString());
        assertEquals(admitted, runs.get(), "runs");
        // Cancelled: Jetty reported a queued request failed (FailureReportHttpTest); it is
        // answered with the failure, never run.
        long rejected = snap.total(Snapshot.Counter.SHED) + snap.total(Snapshot.Counter.QUEUE_FULL)
            + snap.total(Snapshot.Counter.QUEUE_TIMEOUT) + snap.total(Snapshot.Counter.CANCELLED);
        assertEquals(sent, admitted + rejected, snap.toString());
        assertTrue(rejected > 0 && admitted > sent / 4, snap.toString());
      } finally {
        clients.shutdownNow();
        h1.stop();
        h2.stop();
      }
    } finally {
      later.shutdownNow();
    }
  }
}
