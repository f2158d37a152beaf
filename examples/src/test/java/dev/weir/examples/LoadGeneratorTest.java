package dev.weir.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The generator is open loop: a server that never answers does not slow it down. */
class LoadGeneratorTest {
  private SilentServer silent;

  @BeforeEach
  void start() throws IOException {
    silent = new SilentServer();
  }

  @AfterEach
  void stop() throws Exception {
    silent.close();
  }

  @Test
  void fixedRateKeepsItsScheduleWhenTheServerNeverAnswers() throws Exception {
    long started = System.nanoTime();
    LoadReport r = LoadGenerator.builder(silent.uri())
        .rate(200)
        .poisson(false)
        .warmup(Duration.ZERO)
        .duration(Duration.ofSeconds(1))
        .timeout(Duration.ofMillis(300))
        .build()
        .run();
    double elapsedSeconds = (System.nanoTime() - started) / 1e9;

    // 200 per second for 1 s: requests at 5, 10, ..., 995 ms. A closed-loop client would have
    // sent one request per connection and then waited for answers that never come.
    TierStats all = r.total();
    assertEquals(199, all.sent());
    assertEquals(199, all.count(Status.TIMEOUT), "every request timed out");
    assertEquals(0.0, all.goodputPerSecond());
    assertTrue(r.tier(1).sent() > 50 && r.tier(5).sent() > 50,
        () -> "default mix 1:50,5:50: " + r.tier(1).sent() + " / " + r.tier(5).sent());
    // Each request really went out: a timed-out HTTP/1.1 request takes its connection with it, so
    // every request opened one. (The acceptor may still be catching up, hence the polling.)
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (silent.connections() < 190 && System.nanoTime() - deadline < 0) {
      Thread.onSpinWait();
    }
    assertTrue(silent.connections() >= 190,
        () -> "requests reached the server on " + silent.connections() + " connections");
    // The run ends after its window plus the client timeout, not after 199 serial timeouts.
    assertTrue(elapsedSeconds < 15, () -> "took " + elapsedSeconds + " s");
  }

  @Test
  void goodputCountsTheSuccessesThatEndInTheWindow() throws Exception {
    // Every answer takes 600 ms. Of the 99 requests sent in the 1 s window (every 10 ms), all
    // succeed, but only those sent in its first 400 ms end inside it: the server did 40 requests'
    // work in the window, not 99. Counted by send time, a guard whose queue grows through the
    // window would be credited with work it does after it.
    ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
    Server server = start(new Handler.Abstract() {
      @Override
      public boolean handle(Request request, Response response, Callback callback) {
        response.setStatus(200);
        later.schedule(callback::succeeded, 600, TimeUnit.MILLISECONDS);
        return true;
      }
    });
    try {
      LoadReport r = LoadGenerator.builder(URI.create(base(server) + "/"))
          .rate(100)
          .poisson(false)
          .warmup(Duration.ZERO)
          .duration(Duration.ofSeconds(1))
          .timeout(Duration.ofMillis(2000))
          .build()
          .run();
      TierStats all = r.total();
      assertEquals(99, all.count(Status.OK), "every request succeeded");
      assertTrue(all.endedOk() >= 25 && all.endedOk() <= 41,
          () -> all.endedOk() + " ended in the window");
      assertEquals(all.endedOk(), all.goodputPerSecond(), 1e-9, "a 1 s window");
    } finally {
      server.stop();
      later.shutdownNow();
    }
  }

  @Test
  void alternateWithSplitsTheRequestsEvenlyBetweenTwoUris() throws Exception {
    List<String> paths = new CopyOnWriteArrayList<>();
    Server server = start(new Handler.Abstract() {
      @Override
      public boolean handle(Request request, Response response, Callback callback) {
        paths.add(request.getHttpURI().getPath());
        response.setStatus(200);
        callback.succeeded();
        return true;
      }
    });
    try {
      String base = base(server);
      LoadReport r = LoadGenerator.builder(URI.create(base + "/a"))
          .alternateWith(URI.create(base + "/b"))
          .rate(100)
          .warmup(Duration.ZERO)
          .duration(Duration.ofSeconds(1))
          .build()
          .run();
      long sent = r.total().sent();
      assertEquals(sent, r.total().count(Status.OK), "every request answered");
      assertEquals(sent, paths.size());
      long toA = paths.stream().filter("/a"::equals).count();
      long toB = paths.stream().filter("/b"::equals).count();
      assertEquals(sent, toA + toB, paths.toString());
      assertTrue(Math.abs(toA - toB) <= 1, toA + " to /a, " + toB + " to /b");
    } finally {
      server.stop();
    }
  }

  @Test
  void aRunThatChangesPartwayIsReportedSliceBySlice() throws Exception {
    // 100 a second for the first half of a 1-s window, 300 a second for the second; at its middle
    // an action turns the server from answering 200 to answering 503. Cut into quarters, the
    // report shows both changes where they happened.
    AtomicBoolean failing = new AtomicBoolean();
    Server server = start(new Handler.Abstract() {
      @Override
      public boolean handle(Request request, Response response, Callback callback) {
        response.setStatus(failing.get() ? 503 : 200);
        callback.succeeded();
        return true;
      }
    });
    try {
      LoadReport r = LoadGenerator.builder(URI.create(base(server) + "/"))
          .rate(100)
          .rateFrom(Duration.ofMillis(500), 300)
          .at(Duration.ofMillis(500), () -> failing.set(true))
          .slices(Duration.ofMillis(250))
          .poisson(false)
          .warmup(Duration.ZERO)
          .duration(Duration.ofSeconds(1))
          .build()
          .run();
      List<LoadReport> slices = r.slices();
      assertEquals(4, slices.size());
      long[] sent = slices.stream().mapToLong(s -> s.total().sent()).toArray();
      assertTrue(sent[0] >= 24 && sent[0] <= 26 && sent[1] >= 24 && sent[1] <= 26,
          () -> Arrays.toString(sent));
      assertTrue(sent[2] >= 73 && sent[2] <= 77 && sent[3] >= 73 && sent[3] <= 77,
          () -> Arrays.toString(sent));
      assertEquals(r.total().sent(), Arrays.stream(sent).sum(), "every request in a slice");
      for (int i = 0; i < 4; i++) {
        TierStats all = slices.get(i).total();
        Status expected = i < 2 ? Status.OK : Status.UNAVAILABLE;
        // The request scheduled at the very moment of the switch may go either way.
        assertTrue(all.count(expected) >= all.sent() - 1,
            "slice " + i + ": " + all.count(expected) + " of " + all.sent() + " " + expected);
        assertEquals(0.25, slices.get(i).seconds(), 1e-9);
      }
      assertEquals(slices.get(0).total().endedOk(), slices.get(0).total().count(Status.OK), 1,
          "an instant answer ends in the slice it was sent in");
    } finally {
      server.stop();
    }
  }

  @Test
  void aChangeOutsideTheMeasuredWindowIsRefusedWhenBuilt() {
    URI uri = URI.create("http://127.0.0.1:1/");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> LoadGenerator.builder(uri).duration(Duration.ofSeconds(1))
            .rateFrom(Duration.ofSeconds(1), 10).build());
    assertTrue(e.getMessage().contains("outside the measured window"), e.getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> LoadGenerator.builder(uri).at(Duration.ofMillis(-1), () -> { }));
    assertThrows(IllegalArgumentException.class,
        () -> LoadGenerator.builder(uri).rateFrom(Duration.ZERO, 0));
    assertThrows(IllegalArgumentException.class,
        () -> LoadGenerator.builder(uri).slices(Duration.ZERO));
  }

  /** A started Jetty on 127.0.0.1, an ephemeral port, with {@code handler}. */
  private static Server start(Handler handler) throws Exception {
    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    server.addConnector(connector);
    server.setHandler(handler);
    server.start();
    return server;
  }

  /** {@code http://127.0.0.1:port} of a server from {@link #start}. */
  private static String base(Server server) {
    return "http://127.0.0.1:" + ((ServerConnector) server.getConnectors()[0]).getLocalPort();
  }

  @Test
  void poissonArrivalsAverageTheRate() throws Exception {
    LoadReport r = LoadGenerator.builder(silent.uri())
        .rate(400)
        .seed(3)
        .mix(TierMix.parse("2:1"))
        .warmup(Duration.ofMillis(200))
        .duration(Duration.ofSeconds(1))
        .timeout(Duration.ofMillis(200))
        .build()
        .run();
    // Poisson count with mean 400: standard deviation 20; warm-up requests are not counted.
    long sent = r.total().sent();
    assertTrue(sent > 300 && sent < 500, () -> "sent " + sent);
    assertEquals(sent, r.tier(2).count(Status.TIMEOUT));
    assertEquals(List.of(2), List.copyOf(r.byTier().keySet()));
  }

  @Test
  void builderRejectsNonsenseNamingTheSetting() {
    URI uri = URI.create("http://127.0.0.1:1/");
    assertMessage("rate", () -> LoadGenerator.builder(uri).rate(0));
    assertMessage("rate", () -> LoadGenerator.builder(uri).rate(Double.NaN));
    assertMessage("duration", () -> LoadGenerator.builder(uri).duration(Duration.ZERO));
    assertMessage("warmup", () -> LoadGenerator.builder(uri).warmup(Duration.ofSeconds(-1)));
    assertMessage("timeout", () -> LoadGenerator.builder(uri).timeout(Duration.ofNanos(5)));
    assertMessage("users", () -> LoadGenerator.builder(uri).users(0));
    assertMessage("tierHeader", () -> LoadGenerator.builder(uri).tierHeader("X Tier"));
    assertMessage("userHeader", () -> LoadGenerator.builder(uri).userHeader(""));
    assertMessage("target", () -> LoadGenerator.builder(URI.create("ftp://127.0.0.1/")));
    assertMessage("other", () -> LoadGenerator.builder(uri)
        .alternateWith(URI.create("ftp://127.0.0.1/")));
  }

  private static void assertMessage(String expected, org.junit.jupiter.api.function.Executable e) {
    IllegalArgumentException x = assertThrows(IllegalArgumentException.class, e);
    assertTrue(x.getMessage().startsWith(expected), () -> "message: " + x.getMessage());
  }

  /** Accepts connections on 127.0.0.1 and never reads or answers. */
  private static final class SilentServer {
    private final ServerSocket socket =
        new ServerSocket(0, 1024, InetAddress.getLoopbackAddress());
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private final Thread acceptor = new Thread(this::acceptLoop, "silent-server");

    SilentServer() throws IOException {
      acceptor.setDaemon(true);
      acceptor.start();
    }

    URI uri() {
      return URI.create("http://127.0.0.1:" + socket.getLocalPort() + "/work");
    }

    int connections() {
      return accepted.size();
    }

    private void acceptLoop() {
      try {
        while (true) {
          accepted.add(socket.accept());
        }
      } catch (IOException closed) {
        // close() ends the loop
      }
    }

    void close() throws Exception {
      socket.close();
      acceptor.join(5_000);
      for (Socket s : accepted) {
        s.close();
      }
    }
  }
}
