package dev.weir.servlet;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import java.net.URI;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/** A real Jetty 12 (ee10) server on 127.0.0.1, an ephemeral port, with one filter. */
final class TestServer implements AutoCloseable {
  final Server server;
  final FilterHolder filterHolder;
  private final ServerConnector connector;

  private TestServer(FilterHolder filterHolder, Map<String, HttpServlet> servlets,
      boolean asyncSupported, EnumSet<DispatcherType> dispatches, int maxThreads, Filter outer)
      throws Exception {
    this.filterHolder = filterHolder;
    server = maxThreads > 0 ? new Server(new QueuedThreadPool(maxThreads)) : new Server();
    HttpConfiguration http = new HttpConfiguration();
    http.setRequestHeaderSize(128 * 1024); // let hostile 64KB headers reach the filter
    // HTTP/1.1, and HTTP/2 over clear text with prior knowledge, on the same port.
    connector = new ServerConnector(server, new HttpConnectionFactory(http),
        new HTTP2CServerConnectionFactory(http));
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.setContextPath("/");
    if (outer != null) {
      FilterHolder h = new FilterHolder(outer);
      h.setAsyncSupported(true);
      context.addFilter(h, "/*", EnumSet.of(DispatcherType.REQUEST));
    }
    filterHolder.setAsyncSupported(true);
    context.addFilter(filterHolder, "/*", dispatches);
    servlets.forEach((path, servlet) -> {
      ServletHolder holder = new ServletHolder(servlet);
      holder.setAsyncSupported(asyncSupported);
      context.addServlet(holder, path);
    });
    context.addServlet(new ServletHolder(new WeirStatusServlet()), "/weir/status");
    server.setHandler(context);
    server.start();
  }

  static Builder with(Filter filter) {
    return new Builder(new FilterHolder(filter));
  }

  /** The zero-configuration way: the container instantiates the class, init-params apply. */
  static Builder withClass(Map<String, String> initParams) {
    FilterHolder h = new FilterHolder(WeirFilter.class);
    h.setInitParameters(initParams);
    return new Builder(h);
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + connector.getLocalPort() + path);
  }

  WeirFilter filter() {
    try {
      return (WeirFilter) filterHolder.getFilter();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Override
  public void close() {
    try {
      server.stop();
    } catch (Exception e) {
      throw new IllegalStateException("stopping the test server", e);
    }
  }

  static final class Builder {
    private final FilterHolder holder;
    private final Map<String, HttpServlet> servlets = new LinkedHashMap<>();
    private boolean asyncSupported = true;
    private EnumSet<DispatcherType> dispatches =
        EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC);
    private int maxThreads;
    private Filter outer;

    private Builder(FilterHolder holder) {
      this.holder = holder;
    }

    Builder servlet(String path, HttpServlet servlet) {
      servlets.put(path, servlet);
      return this;
    }

    Builder servletsAsyncSupported(boolean supported) {
      this.asyncSupported = supported;
      return this;
    }

    /** Maps the filter for these dispatcher types only (default REQUEST and ASYNC). */
    Builder filterDispatches(EnumSet<DispatcherType> types) {
      this.dispatches = types;
      return this;
    }

    /** The server's thread pool: a {@link QueuedThreadPool} of at most {@code n} (default 200). */
    Builder maxThreads(int n) {
      this.maxThreads = n;
      return this;
    }

    /** A filter ahead of the one under test, for the REQUEST dispatch. */
    Builder outerFilter(Filter filter) {
      this.outer = filter;
      return this;
    }

    TestServer start() throws Exception {
      return new TestServer(holder, servlets, asyncSupported, dispatches, maxThreads, outer);
    }
  }
}
