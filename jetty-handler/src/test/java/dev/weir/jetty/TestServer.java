package dev.weir.jetty;

import java.net.URI;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A real Jetty 12 server on 127.0.0.1, an ephemeral port, HTTP/1.1 and HTTP/2 over clear text
 * (prior knowledge) on the same port, with one handler.
 */
final class TestServer implements AutoCloseable {
  final Server server;
  final QueuedThreadPool threads;
  private final ServerConnector connector;

  private TestServer(Handler handler, int maxThreads) throws Exception {
    threads = new QueuedThreadPool(maxThreads, Math.min(maxThreads, 4));
    threads.setReservedThreads(0);
    threads.setName("test-server");
    server = new Server(threads);
    HttpConfiguration http = new HttpConfiguration();
    http.setRequestHeaderSize(128 * 1024); // let hostile 64KB headers reach the handler
    connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(http),
        new HTTP2CServerConnectionFactory(http));
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    server.setHandler(handler);
    server.start();
  }

  static TestServer start(Handler handler) throws Exception {
    return new TestServer(handler, 200);
  }

  /** With at most {@code maxThreads} server threads, acceptor and selector included. */
  static TestServer start(Handler handler, int maxThreads) throws Exception {
    return new TestServer(handler, maxThreads);
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + connector.getLocalPort() + path);
  }

  int port() {
    return connector.getLocalPort();
  }

  @Override
  public void close() throws Exception {
    server.stop();
  }
}
