package dev.weir.jetty;

import dev.weir.ControlWindow;
import dev.weir.LoadShedder;
import dev.weir.Priority;
import dev.weir.Rejector;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.client.transport.HttpClientTransportOverHTTP2;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/** Small test helpers: clients, applications from lambdas, polling with a deadline. */
final class Support {
  static final Duration WAIT = Duration.ofSeconds(20);

  private Support() {}

  /** The two protocols the tests speak, each with a real Jetty client. */
  enum Protocol {
    HTTP1, HTTP2;

    HttpClient client() throws Exception {
      HttpClient c = this == HTTP1 ? new HttpClient()
          : new HttpClient(new HttpClientTransportOverHTTP2(new HTTP2Client()));
      c.setMaxConnectionsPerDestination(256);
      c.setMaxRequestsQueuedPerDestination(4096);
      c.start();
      return c;
    }
  }

  /** A core application. */
  @FunctionalInterface
  interface App {
    boolean handle(Request request, Response response, Callback callback) throws Exception;
  }

  static Handler app(App app) {
    return new Handler.Abstract() {
      @Override
      public boolean handle(Request request, Response response, Callback callback)
          throws Exception {
        return app.handle(request, response, callback);
      }
    };
  }

  /**
   * Answers "ok" at once, except a request with an {@code X-Hold} header, whose answer ("held") is
   * left in {@code held} for the test to send: it holds its permit until then. Counts every run.
   */
  static Handler holdOrAnswer(AtomicInteger runs, AtomicReference<Callback> held) {
    return app((req, res, cb) -> {
      runs.incrementAndGet();
      if (req.getHeaders().get("X-Hold") != null) {
        held.set(Callback.from(() -> Content.Sink.write(res, true, "held", cb)));
        return true;
      }
      Content.Sink.write(res, true, "ok", cb);
      return true;
    });
  }

  /** Answers {@code text} at once. */
  static Handler ok(String text) {
    return app((req, res, cb) -> {
      Content.Sink.write(res, true, text, cb);
      return true;
    });
  }

  static ContentResponse get(HttpClient client, URI uri, String... headers) throws Exception {
    org.eclipse.jetty.client.Request r = client.newRequest(uri).timeout(WAIT.toSeconds(),
        TimeUnit.SECONDS);
    for (int i = 0; i < headers.length; i += 2) {
      String name = headers[i];
      String value = headers[i + 1];
      r.headers(h -> h.add(name, value));
    }
    return r.send();
  }

  static String body(ContentResponse r) {
    return new String(r.getContent(), StandardCharsets.UTF_8);
  }

  /** One permit, no shedding at the door, nothing else changed. */
  static LoadShedder.Builder oneAtATime() {
    return LoadShedder.builder().limit(() -> Limits.fixed(1)).rejector(Rejectors::none);
  }

  /** Sheds tiers at or above 3 from its first tick on. */
  static final class CutoffRejector implements Rejector {
    @Override
    public int update(ControlWindow window) {
      return Priority.of(3, 0);
    }

    @Override
    public double ratio() {
      return 0.5;
    }

    @Override
    public boolean overloaded() {
      return true;
    }
  }

  /** Polls until {@code condition} holds; fails with {@code what()} after {@code timeout}. */
  static void await(BooleanSupplier condition, Duration timeout, Supplier<String> what) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out after " + timeout + ": " + what.get());
      }
      try {
        Thread.sleep(2); // polling interval for a real-network outcome, not synchronisation
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  /**
   * Asserts every shedder of {@code handler} gets back to nothing held and nothing queued, once: the
   * await is the assertion. A shedder's {@code inflight()} is a moment's estimate, and its tick
   * moving a cached credit back to the shared pool can show one more for an instant, so a second
   * read after the first zero could see that instant.
   */
  static void assertDrained(WeirHandler handler) {
    await(() -> handler.shedders().values().stream()
            .allMatch(s -> s.inflight() == 0 && s.queued() == 0),
        Duration.ofSeconds(10), () -> "shedders not drained: " + handler.snapshots());
  }
}
