package dev.weir.jmh;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.LocalConnector;
import org.eclipse.jetty.server.Server;

/**
 * A real Jetty ({@link LocalConnector}, no network) that holds requests open inside the
 * application, so that a benchmark can run a guard again and again on a live request of
 * Jetty's own. The application hands each request over with {@link #handOver}, which returns only
 * once {@link #stop} runs.
 *
 * @param <T> what the application hands over: the live request and response
 */
final class HeldRequests<T> {
  /** No header beyond the usual ones. */
  static final String PLAIN = "";
  /** A tier and a cohort. */
  static final String TIERED = "X-Weir-Tier: 1:42\r\n";

  private final Server server = new Server();
  private final LocalConnector connector = new LocalConnector(server);
  private final CountDownLatch release = new CountDownLatch(1);
  private volatile CompletableFuture<T> next;

  HeldRequests() {
    server.addConnector(connector);
  }

  /** The server, for a handler that must know it. */
  Server server() {
    return server;
  }

  /** Starts the server with {@code application}, which must call {@link #handOver}. */
  void start(Handler application) throws Exception {
    server.setHandler(application);
    server.start();
  }

  /** In the application: hands the live request over, and holds it until {@link #stop}. */
  void handOver(T held) throws InterruptedException {
    next.complete(held);
    release.await();
  }

  /** Sends {@code GET /hello} with {@code extraHeaders} and returns it, held open. */
  T hold(String extraHeaders) throws Exception {
    next = new CompletableFuture<>();
    connector.executeRequest("GET /hello HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
        + "User-Agent: bench\r\nAccept: */*\r\n" + extraHeaders + "\r\n");
    return next.get(10, TimeUnit.SECONDS);
  }

  /** Lets every held request finish, and stops the server. */
  void stop() throws Exception {
    release.countDown();
    server.stop();
  }
}
