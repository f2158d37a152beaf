package dev.weir.jetty;

import static dev.weir.jetty.Support.assertDrained;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.LoadShedder;
import dev.weir.Outcome;
import dev.weir.Permit;
import dev.weir.Priority;
import dev.weir.Snapshot;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.junit.jupiter.api.Test;

/**
 * The handler recycles the permit of a request decided at once when the application's callback
 * releases it, unless the application may still hold it: a permit the application read through
 * {@link WeirHandler#PERMIT_ATTRIBUTE} stays that request's, whatever the same threads serve later.
 */
class PermitRecycleHttpTest {
  private static final int REQUESTS = 600;

  @Test
  void aPermitTheApplicationKeptIsNeverAnotherRequestsPermit() throws Exception {
    ConcurrentLinkedQueue<Object[]> kept = new ConcurrentLinkedQueue<>();
    WeirHandler weir = WeirHandler.builder()
        .shedder(LoadShedder.builder().limit(() -> Limits.fixed(3)).rejector(Rejectors::none))
        .handler(Support.app((req, res, cb) -> {
          String path = Request.getPathInContext(req);
          String tier = req.getHeaders().get("X-Weir-Tier");
          if (path.equals("/keep")) {
            Permit p = (Permit) req.getAttribute(WeirHandler.PERMIT_ATTRIBUTE);
            kept.add(new Object[] {p, Priority.parse(tier)});
          }
          Content.Sink.write(res, true, tier, cb);
          return true;
        }))
        .build();
    try (TestServer s = TestServer.start(weir)) {
      HttpClient client = Support.Protocol.HTTP2.client();
      try {
        List<CompletableFuture<ContentResponse>> all = new ArrayList<>();
        for (int i = 0; i < REQUESTS; i++) {
          String tier = Priority.toString(Priority.of(i % Priority.TIERS, i % Priority.COHORTS));
          String path = i % 5 == 0 ? "/keep" : "/plain";
          if (i < REQUESTS / 2) { // one at a time first: admitted at once, recycled in turn
            assertEquals(tier, Support.body(Support.get(client, s.uri(path), "X-Weir-Tier", tier)));
          } else { // then concurrently: some wait in the queue
            CompletableFuture<ContentResponse> f = new CompletableFuture<>();
            client.newRequest(s.uri(path)).headers(h -> h.add("X-Weir-Tier", tier))
                .timeout(20, TimeUnit.SECONDS).send(r -> {
                  if (r.isSucceeded()) {
                    f.complete(null);
                  } else {
                    f.completeExceptionally(r.getFailure());
                  }
                });
            all.add(f);
          }
        }
        for (CompletableFuture<ContentResponse> f : all) {
          f.get(20, TimeUnit.SECONDS);
        }
        assertDrained(weir);
        assertEquals(REQUESTS / 5, kept.size());
        for (Object[] k : kept) {
          Permit p = (Permit) k[0];
          assertEquals((int) (Integer) k[1], p.priority(),
              "a kept permit still stands for its own request");
          assertTrue(p.isReleased());
          assertFalse(p.release(Outcome.DROPPED), "released once, by the handler");
        }
        long succeeded = 0;
        for (LoadShedder shedder : weir.shedders().values()) {
          succeeded += shedder.snapshot().total(Snapshot.Counter.SUCCEEDED);
        }
        assertEquals(REQUESTS, succeeded, "every permit released once, as a success");
      } finally {
        client.stop();
      }
    }
  }
}
