package dev.weir.examples.experiment;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * A closed-loop HTTP/1.1 load generator in the manner of {@code wrk -t1 -cN}: one thread and a
 * selector drive a fixed number of keep-alive connections, each sending its next {@code GET} as
 * soon as the previous response has fully arrived. So the server, not the client, sets the pace,
 * and the throughput measures what a request costs the server.
 *
 * <p>Cheap on purpose, so that on a small machine the client takes little of the CPU the server
 * is measured on: no allocation per request (one request buffer shared by all connections, one
 * read buffer each), responses parsed only as far as the status line, {@code Content-Length} and
 * the end of the body. A response without {@code Content-Length} (chunked, or close-delimited)
 * fails the run rather than be miscounted.
 */
final class ClosedLoopClient implements AutoCloseable {
  private final Selector selector;
  private final List<Connection> connections = new ArrayList<>();
  private final ByteBuffer request;

  /** Counts since the last {@link #reset()}. */
  long ok;
  long other;

  ClosedLoopClient(InetSocketAddress server, String path, int connectionCount) throws IOException {
    this.selector = Selector.open();
    this.request = ByteBuffer.wrap(("GET " + path + " HTTP/1.1\r\nHost: " + server.getHostString()
        + ":" + server.getPort() + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII)).asReadOnlyBuffer();
    for (int i = 0; i < connectionCount; i++) {
      SocketChannel ch = SocketChannel.open(server);
      ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
      ch.configureBlocking(false);
      Connection c = new Connection(ch, request.duplicate());
      c.key = ch.register(selector, SelectionKey.OP_WRITE, c);
      connections.add(c);
    }
  }

  /** Zeroes the counts. */
  void reset() {
    ok = 0;
    other = 0;
  }

  /** Runs the loop until {@code deadlineNanos} on {@link System#nanoTime()}. */
  void runUntil(long deadlineNanos) throws IOException {
    while (System.nanoTime() - deadlineNanos < 0) {
      if (selector.select(100) == 0) {
        continue;
      }
      Iterator<SelectionKey> it = selector.selectedKeys().iterator();
      while (it.hasNext()) {
        SelectionKey key = it.next();
        it.remove();
        Connection c = (Connection) key.attachment();
        if (key.isWritable()) {
          c.write();
        } else if (key.isReadable()) {
          c.read();
        }
      }
    }
  }

  @Override
  public void close() throws IOException {
    for (Connection c : connections) {
      c.channel.close();
    }
    selector.close();
  }

  private final class Connection {
    final SocketChannel channel;
    final ByteBuffer out;
    final ByteBuffer in = ByteBuffer.allocate(64 * 1024);
    SelectionKey key;

    Connection(SocketChannel channel, ByteBuffer out) {
      this.channel = channel;
      this.out = out;
    }

    void write() throws IOException {
      channel.write(out);
      if (!out.hasRemaining()) {
        out.rewind();
        key.interestOps(SelectionKey.OP_READ);
      }
    }

    void read() throws IOException {
      if (channel.read(in) < 0) {
        throw new IOException("the server closed a keep-alive connection");
      }
      // Several responses never arrive at once: one request is outstanding per connection.
      int end = responseEnd();
      if (end < 0) {
        if (!in.hasRemaining()) {
          throw new IOException("a response larger than " + in.capacity() + " bytes");
        }
        return;
      }
      int status = (in.get(9) - '0') * 100 + (in.get(10) - '0') * 10 + (in.get(11) - '0');
      if (status >= 200 && status < 300) {
        ok++;
      } else {
        other++;
      }
      in.clear();
      key.interestOps(SelectionKey.OP_WRITE);
      write(); // the socket is almost always writable: send the next request at once
    }

    /** The index just past the response in {@code in}, or -1 if it has not all arrived. */
    private int responseEnd() throws IOException {
      int n = in.position();
      int headersEnd = -1;
      for (int i = 3; i < n; i++) {
        if (in.get(i) == '\n' && in.get(i - 1) == '\r' && in.get(i - 2) == '\n'
            && in.get(i - 3) == '\r') {
          headersEnd = i + 1;
          break;
        }
      }
      if (headersEnd < 0) {
        return -1;
      }
      long length = contentLength(headersEnd);
      if (length < 0) {
        throw new IOException("a response without Content-Length: "
            + new String(in.array(), 0, headersEnd, StandardCharsets.ISO_8859_1));
      }
      long end = headersEnd + length;
      return end <= n ? (int) end : -1;
    }

    private long contentLength(int headersEnd) {
      byte[] a = in.array();
      byte[] name = CONTENT_LENGTH;
      for (int i = 0; i + name.length < headersEnd; i++) {
        if (a[i] != '\n' || !matches(a, i + 1, name)) {
          continue;
        }
        long v = 0;
        int j = i + 1 + name.length;
        while (a[j] == ' ') {
          j++;
        }
        while (a[j] >= '0' && a[j] <= '9') {
          v = v * 10 + (a[j++] - '0');
        }
        return v;
      }
      return -1;
    }
  }

  private static final byte[] CONTENT_LENGTH = "content-length:".getBytes(StandardCharsets.US_ASCII);

  private static boolean matches(byte[] a, int at, byte[] lowerName) {
    for (int k = 0; k < lowerName.length; k++) {
      if (Character.toLowerCase(a[at + k]) != lowerName[k]) {
        return false;
      }
    }
    return true;
  }
}
