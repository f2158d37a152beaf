package dev.weir.servlet;

import static dev.weir.servlet.Support.assertDrained;
import static dev.weir.servlet.Support.servlet;
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
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The filter recycles the permit of a request finished in place for its thread's next request,
 * unless the application may still hold it: a permit the application read through {@link
 * WeirFilter#PERMIT_ATTRIBUTE} stays that request's, whatever the same threads serve afterwards.
 */
class PermitRecycleHttpTest {
  private static final int SEQUENTIAL = 300;
  private static final int CONCURRENT = 300;

  @Test
  void aPermitTheApplicationKeptIsNeverAnotherRequestsPermit() throws Exception {
    ConcurrentLinkedQueue<Object[]> kept = new ConcurrentLinkedQueue<>();
    LoadShedder.Builder template = LoadShedder.builder().limit(() -> Limits.fixed(3))
        .rejector(Rejectors::none);
    try (TestServer s = TestServer.with(WeirFilter.builder().shedder(template).build())
        .servlet("/plain", servlet((req, res) -> res.getWriter().print(
            Priority.toString((Integer) req.getAttribute(WeirFilter.PRIORITY_ATTRIBUTE)))))
        .servlet("/keep", servlet((req, res) -> {
          Permit p = (Permit) req.getAttribute(WeirFilter.PERMIT_ATTRIBUTE);
          int priority = (Integer) req.getAttribute(WeirFilter.PRIORITY_ATTRIBUTE);
          kept.add(new Object[] {p, priority});
          res.getWriter().print(Priority.toString(p.priority()));
        }))
        .start()) {
      HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      for (int i = 0; i < SEQUENTIAL; i++) {
        int priority = Priority.of(i % Priority.TIERS, (i * 37) % Priority.COHORTS);
        HttpResponse<String> r = client.send(request(s, i % 5 == 0 ? "/keep" : "/plain",
            priority), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), "#" + i);
        assertEquals(Priority.toString(priority), r.body(), "#" + i);
      }
      // Concurrent: some wait in the queue (never recycled), others finish in place.
      List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
      for (int i = 0; i < CONCURRENT; i++) {
        all.add(client.sendAsync(request(s, i % 5 == 0 ? "/keep" : "/plain",
            Priority.of(i % Priority.TIERS, i % Priority.COHORTS)),
            HttpResponse.BodyHandlers.ofString()));
      }
      for (int i = 0; i < CONCURRENT; i++) {
        HttpResponse<String> r = all.get(i).get(20, TimeUnit.SECONDS);
        assertEquals(200, r.statusCode(), "#" + i);
        assertEquals(Priority.toString(Priority.of(i % Priority.TIERS, i % Priority.COHORTS)),
            r.body(), "#" + i);
      }
      assertDrained(s.filter());
      assertEquals((SEQUENTIAL + CONCURRENT) / 5, kept.size());
      for (Object[] k : kept) {
        Permit p = (Permit) k[0];
        int priority = (Integer) k[1];
        assertEquals(priority, p.priority(), "a kept permit still stands for its own request");
        assertTrue(p.isReleased());
        assertFalse(p.release(Outcome.DROPPED), "released once, by the filter");
      }
      long succeeded = 0;
      for (LoadShedder shedder : s.filter().shedders().values()) {
        for (int t = 0; t < Priority.TIERS; t++) {
          succeeded += shedder.count(Snapshot.Counter.SUCCEEDED, t);
        }
      }
      assertEquals(SEQUENTIAL + CONCURRENT, succeeded, "every permit released once, as a success");
    }
  }

  private static HttpRequest request(TestServer s, String path, int priority) {
    return HttpRequest.newBuilder(s.uri(path)).timeout(Duration.ofSeconds(20))
        .header("X-Weir-Tier", Priority.toString(priority)).build();
  }
}
