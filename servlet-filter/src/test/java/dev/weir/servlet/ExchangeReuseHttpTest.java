package dev.weir.servlet;

import static dev.weir.servlet.Support.assertDrained;
import static dev.weir.servlet.Support.servlet;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.weir.LoadShedder;
import dev.weir.Permit;
import dev.weir.Priority;
import dev.weir.Snapshot;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import jakarta.servlet.DispatcherType;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.Test;

/**
 * A container thread reuses the exchange of a request decided in place for its next request: no
 * request may see another's permit or priority, a request that went async (and was dispatched
 * again by the application) keeps its own, and every permit is released once.
 */
class ExchangeReuseHttpTest {
  private static final int SEQUENTIAL = 300;
  private static final int CONCURRENT = 200;

  /** Echoes what the filter attached: the priority and the permit's own priority and state. */
  private static void echo(jakarta.servlet.http.HttpServletRequest req,
      jakarta.servlet.http.HttpServletResponse res) throws java.io.IOException {
    Permit p = (Permit) req.getAttribute(WeirFilter.PERMIT_ATTRIBUTE);
    Integer priority = (Integer) req.getAttribute(WeirFilter.PRIORITY_ATTRIBUTE);
    res.getWriter().print(Priority.toString(priority) + " "
        + (p == null ? "none" : Priority.toString(p.priority()) + (p.isReleased() ? " released" : " held")));
  }

  @Test
  void reusedExchangesCarryNothingOver() throws Exception {
    LoadShedder.Builder template = LoadShedder.builder().limit(() -> Limits.fixed(2))
        .rejector(Rejectors::none);
    try (TestServer s = TestServer.with(WeirFilter.builder().shedder(template).build())
        .servlet("/echo", servlet(ExchangeReuseHttpTest::echo))
        .servlet("/async", servlet((req, res) -> {
          AsyncContext ac = req.startAsync();
          ac.start(() -> ac.dispatch("/echo")); // the application's own dispatch, elsewhere
        }))
        .start()) {
      HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      for (int i = 0; i < SEQUENTIAL; i++) {
        int priority = Priority.of(i % Priority.TIERS, (i * 37) % Priority.COHORTS);
        String path = i % 3 == 2 ? "/async" : "/echo";
        HttpResponse<String> r = client.send(request(s, path, priority),
            HttpResponse.BodyHandlers.ofString());
        String p = Priority.toString(priority);
        assertEquals(200, r.statusCode(), path + " #" + i);
        assertEquals(p + " " + p + " held", r.body(), path + " #" + i);
      }
      // Concurrent: some wait in the queue (their exchanges are not reused) while others are
      // admitted in place on the same threads.
      List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
      for (int i = 0; i < CONCURRENT; i++) {
        int priority = Priority.of(i % Priority.TIERS, i % Priority.COHORTS);
        all.add(client.sendAsync(request(s, i % 4 == 3 ? "/async" : "/echo", priority),
            HttpResponse.BodyHandlers.ofString()));
      }
      for (int i = 0; i < CONCURRENT; i++) {
        HttpResponse<String> r = all.get(i).get(20, TimeUnit.SECONDS);
        String p = Priority.toString(Priority.of(i % Priority.TIERS, i % Priority.COHORTS));
        assertEquals(200, r.statusCode(), "#" + i + ": " + r.body());
        assertEquals(p + " " + p + " held", r.body(), "#" + i);
      }
      assertDrained(s.filter());
      long succeeded = 0;
      for (LoadShedder shedder : s.filter().shedders().values()) {
        for (int t = 0; t < Priority.TIERS; t++) {
          succeeded += shedder.count(Snapshot.Counter.SUCCEEDED, t);
        }
      }
      assertEquals(SEQUENTIAL + CONCURRENT, succeeded, "every permit released once, as a success");
    }
  }

  /**
   * An application that goes async keeps the request it was given (the filter's wrapper) and reads
   * its attributes from there, or from its async context, after its container thread has served
   * many other requests: the wrapper is not reused while it can still be reached.
   */
  @Test
  void anAsyncRequestKeepsItsAttributesWhileItsThreadServesOthers() throws Exception {
    java.util.concurrent.BlockingQueue<Object[]> parked =
        new java.util.concurrent.LinkedBlockingQueue<>();
    LoadShedder.Builder roomy = LoadShedder.builder().limit(() -> Limits.fixed(64))
        .rejector(Rejectors::none);
    try (TestServer s = TestServer.with(WeirFilter.builder().shedder(roomy).build())
        .servlet("/echo", servlet(ExchangeReuseHttpTest::echo))
        .servlet("/park", servlet((req, res) -> {
          AsyncContext ac = req.startAsync();
          ac.setTimeout(0); // completed by the test
          parked.add(new Object[] {req, ac});
        }))
        .start()) {
      HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      int held = 6;
      List<CompletableFuture<HttpResponse<String>>> waiting = new ArrayList<>();
      for (int i = 0; i < held; i++) {
        waiting.add(client.sendAsync(request(s, "/park", Priority.of(1, i)),
            HttpResponse.BodyHandlers.ofString()));
      }
      List<Object[]> apps = new ArrayList<>();
      for (int i = 0; i < held; i++) {
        apps.add(parked.poll(20, TimeUnit.SECONDS)); // each /park is inside its async cycle
      }
      for (int i = 0; i < 200; i++) { // the same container threads, many times over
        int priority = Priority.of(4, 100 + i % 20);
        String p = Priority.toString(priority);
        assertEquals(p + " " + p + " held", client.send(request(s, "/echo", priority),
            HttpResponse.BodyHandlers.ofString()).body());
      }
      for (Object[] app : apps) {
        jakarta.servlet.http.HttpServletRequest kept = (jakarta.servlet.http.HttpServletRequest) app[0];
        AsyncContext ac = (AsyncContext) app[1];
        jakarta.servlet.http.HttpServletResponse res =
            (jakarta.servlet.http.HttpServletResponse) ac.getResponse();
        echo(kept, res);
        res.getWriter().print(" | ");
        echo((jakarta.servlet.http.HttpServletRequest) ac.getRequest(), res);
        ac.complete();
      }
      for (int i = 0; i < held; i++) {
        String p = Priority.toString(Priority.of(1, i));
        HttpResponse<String> r = waiting.get(i).get(20, TimeUnit.SECONDS);
        assertEquals(p + " " + p + " held | " + p + " " + p + " held", r.body(), "/park #" + i);
      }
      assertDrained(s.filter());
    }
  }

  @Test
  void aSecondWeirFilterInTheChainPassesAnAdmittedRequestThrough() throws Exception {
    WeirFilter outer = new WeirFilter();
    WeirFilter inner = new WeirFilter();
    // Another filter between the two wraps the request, as many do: the inner filter must still
    // see that the outer one admitted it.
    Filter wrapping = (req, res, chain) -> chain.doFilter(
        new HttpServletRequestWrapper((HttpServletRequest) req), res);
    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler("/");
    for (Filter f : new Filter[] {outer, wrapping, inner}) {
      FilterHolder h = new FilterHolder(f);
      h.setAsyncSupported(true);
      context.addFilter(h, "/*", EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
    }
    ServletHolder echo = new ServletHolder(servlet(ExchangeReuseHttpTest::echo));
    echo.setAsyncSupported(true);
    context.addServlet(echo, "/echo");
    server.setHandler(context);
    server.start();
    try {
      HttpClient client = HttpClient.newHttpClient();
      int priority = Priority.of(2, 9);
      HttpResponse<String> r = client.send(HttpRequest.newBuilder(java.net.URI.create(
          "http://127.0.0.1:" + connector.getLocalPort() + "/echo"))
          .header("X-Weir-Tier", "2:9").build(), HttpResponse.BodyHandlers.ofString());
      assertEquals("2:9 2:9 held", r.body());
      assertEquals(1, outer.shedders().get("GET /echo")
          .count(Snapshot.Counter.SUCCEEDED, Priority.tier(priority)), "the outer filter admitted");
      assertEquals(java.util.Map.of(), inner.shedders(), "the inner filter admitted nothing");
    } finally {
      server.stop();
    }
  }

  private static HttpRequest request(TestServer s, String path, int priority) {
    return HttpRequest.newBuilder(s.uri(path)).timeout(Duration.ofSeconds(20))
        .header("X-Weir-Tier", Priority.toString(priority)).build();
  }
}
