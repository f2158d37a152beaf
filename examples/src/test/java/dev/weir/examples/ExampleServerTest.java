package dev.weir.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.servlet.WeirFilter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class ExampleServerTest {
  @Test
  void protectedServerAnswers200BelowCapacity() throws Exception {
    // Capacity 8 / 5 ms = 1600 req/s; 100 req/s is far below it.
    Downstream downstream = new Downstream(8, Duration.ofMillis(5), 1);
    try (ExampleServer server = ExampleServer.start(downstream, new WeirFilter())) {
      HttpClient http = HttpClient.newHttpClient();
      for (String tier : new String[] {"1", "5:17", "nonsense", "99999999999999999999"}) {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(server.workUri())
            .header("X-Weir-Tier", tier).timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), "tier header " + tier);
        assertEquals("ok\n", response.body());
      }

      LoadReport r = LoadGenerator.builder(server.workUri())
          .rate(100)
          .warmup(Duration.ofMillis(500))
          .duration(Duration.ofSeconds(2))
          .timeout(Duration.ofSeconds(2))
          .build()
          .run();
      TierStats all = r.total();
      assertTrue(all.sent() > 100, () -> "sent " + all.sent());
      assertEquals(0, all.count(Status.OTHER), "no errors");
      // Weir sheds nothing this far below capacity; the margin allows for a stalled CI box.
      assertTrue(all.successRatio() >= 0.9, () -> "success ratio " + all.successRatio());
      assertTrue(all.latencyMillis(0.5) >= 1, "a call holds a connection ~5 ms");
    }
  }

  @Test
  void unprotectedServerServesAndOtherPathsAre404() throws Exception {
    try (ExampleServer server =
        ExampleServer.start(new Downstream(2, Duration.ofMillis(1), 1), null)) {
      HttpClient http = HttpClient.newHttpClient();
      HttpResponse<String> ok = http.send(HttpRequest.newBuilder(server.workUri()).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(200, ok.statusCode());
      HttpResponse<String> hello = http.send(HttpRequest.newBuilder(server.helloUri()).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals("hello\n", hello.body());
      HttpResponse<String> missing = http.send(HttpRequest.newBuilder(
          server.workUri().resolve("/nothing")).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(404, missing.statusCode());
      assertTrue(server.port() > 0);
    }
  }

  @Test
  void computeAnswersItsHashAndHasItsOwnRouteShedderBehindTheSameFilter() throws Exception {
    Compute compute = new Compute(1000);
    WeirFilter filter = new WeirFilter();
    try (ExampleServer server = ExampleServer.start(
        new Backends(new Downstream(2, Duration.ofMillis(1), 1), compute), filter)) {
      HttpClient http = HttpClient.newHttpClient();
      for (URI uri : List.of(server.computeUri(), server.workUri(), server.secondWorkUri())) {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri)
            .header("X-Weir-Tier", "1").timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), uri.toString());
        if (uri.equals(server.computeUri())) {
          assertTrue(r.body().matches("ok [0-9a-f]+\n"), r.body());
        }
      }
      assertEquals("/compute", server.computeUri().getPath());
      // One shedder per route: overloading /compute sheds nothing of /work.
      assertTrue(filter.shedders().containsKey("GET /compute"), filter.shedders().toString());
      assertTrue(filter.shedders().containsKey("GET /work"), filter.shedders().toString());
      // The same work on a second mapping is a route of its own.
      assertTrue(filter.shedders().containsKey("GET /work/2"), filter.shedders().toString());
    }
  }

  @Test
  void aPortInUseIsExplainedInOneLine() throws Exception {
    try (ExampleServer first =
        ExampleServer.start(new Downstream(1, Duration.ofMillis(1), 1), null)) {
      int port = first.port();
      Exception e = assertThrows(Exception.class, () -> ExampleServer.start("127.0.0.1", port,
          new Downstream(1, Duration.ofMillis(1), 1), null));
      assertEquals("port " + port + " on 127.0.0.1 is in use (try --port 0)",
          ExampleServer.startFailure(e, "127.0.0.1", port));
    }
    assertEquals("could not start on 127.0.0.1:80: boom", ExampleServer.startFailure(
        new IllegalStateException("boom"), "127.0.0.1", 80));
  }

  @Test
  void computeIsAFixedDeterministicAmountOfWork() {
    Compute compute = new Compute(1000);
    assertEquals(1000, compute.rounds());
    assertEquals(compute.run(7), compute.run(7), "the same seed, the same hash");
    assertTrue(compute.run(7) != compute.run(8), "the hash depends on the seed");
    assertTrue(new Compute(1001).run(7) != compute.run(7), "and on every round");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> new Compute(0));
    assertTrue(e.getMessage().contains("rounds"), e.getMessage());
    assertThrows(NullPointerException.class, () -> new Backends(null, compute));
  }

  @Test
  void computeSlowedDownRunsThatManyTimesTheRounds() {
    Compute compute = new Compute(1000);
    compute.slowDown(3);
    assertEquals(new Compute(3000).run(7), compute.run(7), "three times the rounds");
    assertEquals(1000, compute.rounds(), "rounds() stays the full-speed cost");
    compute.slowDown(1);
    assertEquals(new Compute(1000).run(7), compute.run(7), "back to full speed");
    compute.slowDown(1e-9);
    assertEquals(new Compute(1).run(7), compute.run(7), "at least one round");
    for (double bad : new double[] {0, -1, Double.NaN, Double.POSITIVE_INFINITY}) {
      assertThrows(IllegalArgumentException.class, () -> compute.slowDown(bad), "" + bad);
    }
  }

  @Test
  void downstreamHoldsAtMostItsConnections() throws Exception {
    // 2 connections, 10 ms mean: 40 calls from 8 threads need about 40 x 10 / 2 = 200 ms.
    Downstream downstream = new Downstream(2, Duration.ofMillis(10), 5);
    assertEquals(200.0, downstream.capacityPerSecond(), 1e-9);
    ExecutorService callers = Executors.newFixedThreadPool(8);
    try {
      long started = System.nanoTime();
      List<Future<?>> calls = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        calls.add(callers.submit(() -> {
          downstream.call();
          return null;
        }));
      }
      int maxBusy = 0;
      for (Future<?> f : calls) {
        maxBusy = Math.max(maxBusy, downstream.busy());
        f.get();
      }
      double elapsedMillis = (System.nanoTime() - started) / 1e6;
      assertTrue(maxBusy <= 2, "busy " + maxBusy);
      // A lower bound only: a slow machine makes it slower, never faster.
      assertTrue(elapsedMillis >= 100, () -> "40 calls took " + elapsedMillis + " ms");
      assertEquals(0, downstream.busy());
    } finally {
      callers.shutdownNow();
    }
  }

  @Test
  void downstreamRejectsNonsense() {
    assertThrows(IllegalArgumentException.class, () -> new Downstream(0, Duration.ofMillis(1), 1));
    assertThrows(IllegalArgumentException.class, () -> new Downstream(1, Duration.ZERO, 1));
    Downstream downstream = new Downstream(1, Duration.ofMillis(1), 1);
    for (double bad : new double[] {0, -1, Double.NaN, Double.POSITIVE_INFINITY}) {
      assertThrows(IllegalArgumentException.class, () -> downstream.slowDown(bad), "" + bad);
    }
  }
}
