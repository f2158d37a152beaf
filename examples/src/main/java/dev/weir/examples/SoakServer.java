package dev.weir.examples;

import io.undertow.Undertow;
import io.undertow.servlet.Servlets;
import io.undertow.servlet.api.DeploymentInfo;
import io.undertow.servlet.api.DeploymentManager;
import io.undertow.servlet.util.ImmediateInstanceFactory;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * The soak's server: one servlet container on 127.0.0.1, an ephemeral port, its default thread
 * pool, with one filter on {@code /*} for REQUEST and ASYNC dispatches and the given servlets,
 * all asynchronous-capable, each on its path ({@code "/"} is the default servlet). The same
 * application on each container, so that a soak tests the filter against each one's own reading
 * of the Servlet API.
 */
abstract class SoakServer implements AutoCloseable {
  /** The containers a soak can run on. */
  enum Container {
    JETTY, TOMCAT, UNDERTOW;

    /** The container named {@code text}, in any case. */
    static Container parse(String text) {
      for (Container c : values()) {
        if (c.name().equalsIgnoreCase(text)) {
          return c;
        }
      }
      throw new IllegalArgumentException("--container must be jetty, tomcat or undertow, was '"
          + text + "'");
    }

    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** Starts {@code container} with {@code filter} and {@code servlets} (path to servlet). */
  static SoakServer start(Container container, Filter filter, Map<String, HttpServlet> servlets)
      throws Exception {
    switch (container) {
      case JETTY: return new OnJetty(filter, servlets);
      case TOMCAT: return new OnTomcat(filter, servlets);
      case UNDERTOW: return new OnUndertow(filter, servlets);
      default: throw new AssertionError(container);
    }
  }

  /** The server's root, {@code http://127.0.0.1:port/}. */
  abstract URI base();

  @Override
  public abstract void close() throws Exception;

  private static final class OnJetty extends SoakServer {
    private final Server server = new Server();
    private final ServerConnector connector = new ServerConnector(server);

    OnJetty(Filter filter, Map<String, HttpServlet> servlets) throws Exception {
      connector.setHost("127.0.0.1");
      connector.setPort(0);
      server.addConnector(connector);
      ServletContextHandler context = new ServletContextHandler();
      context.setContextPath("/");
      FilterHolder holder = new FilterHolder(filter);
      holder.setAsyncSupported(true);
      context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
      servlets.forEach((path, servlet) -> {
        ServletHolder h = new ServletHolder(servlet);
        h.setAsyncSupported(true);
        context.addServlet(h, path);
      });
      server.setHandler(context);
      server.start();
    }

    @Override
    URI base() {
      return URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/");
    }

    @Override
    public void close() throws Exception {
      server.stop();
    }
  }

  private static final class OnTomcat extends SoakServer {
    private final Tomcat tomcat = new Tomcat();
    private final Connector connector = new Connector();
    private final Path dir;

    OnTomcat(Filter filter, Map<String, HttpServlet> servlets) throws Exception {
      dir = Files.createTempDirectory("weir-soak-tomcat");
      tomcat.setBaseDir(dir.toString());
      connector.setPort(0);
      connector.setProperty("address", "127.0.0.1");
      tomcat.setConnector(connector);
      Context ctx = tomcat.addContext("", dir.toString());
      int i = 0;
      for (Map.Entry<String, HttpServlet> e : servlets.entrySet()) {
        String name = "servlet" + i++;
        Tomcat.addServlet(ctx, name, e.getValue()).setAsyncSupported(true);
        ctx.addServletMappingDecoded(e.getKey(), name);
      }
      FilterDef def = new FilterDef();
      def.setFilterName("weir");
      def.setFilter(filter);
      def.setAsyncSupported("true");
      ctx.addFilterDef(def);
      FilterMap map = new FilterMap();
      map.setFilterName("weir");
      map.addURLPattern("/*");
      map.setDispatcher(DispatcherType.REQUEST.name());
      map.setDispatcher(DispatcherType.ASYNC.name());
      ctx.addFilterMap(map);
      tomcat.start();
    }

    @Override
    URI base() {
      return URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/");
    }

    @Override
    public void close() throws Exception {
      try {
        tomcat.stop();
        tomcat.destroy();
      } finally {
        deleteTree(dir);
      }
    }

    private static void deleteTree(Path root) throws IOException {
      try (Stream<Path> files = Files.walk(root)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private static final class OnUndertow extends SoakServer {
    private final DeploymentManager deployment;
    private final Undertow undertow;

    OnUndertow(Filter filter, Map<String, HttpServlet> servlets) throws Exception {
      DeploymentInfo info = Servlets.deployment()
          .setClassLoader(SoakServer.class.getClassLoader())
          .setContextPath("/")
          .setDeploymentName("weir-soak-" + System.nanoTime()) // unique in the shared container
          .addFilter(Servlets.filter("weir", Filter.class, new ImmediateInstanceFactory<>(filter))
              .setAsyncSupported(true))
          .addFilterUrlMapping("weir", "/*", DispatcherType.REQUEST)
          .addFilterUrlMapping("weir", "/*", DispatcherType.ASYNC);
      int i = 0;
      for (Map.Entry<String, HttpServlet> e : servlets.entrySet()) {
        info.addServlet(Servlets.servlet("servlet" + i++, HttpServlet.class,
            new ImmediateInstanceFactory<>(e.getValue())).addMapping(e.getKey())
            .setAsyncSupported(true));
      }
      deployment = Servlets.defaultContainer().addDeployment(info);
      deployment.deploy();
      undertow = Undertow.builder().addHttpListener(0, "127.0.0.1")
          .setHandler(deployment.start()).build();
      undertow.start();
    }

    @Override
    URI base() {
      InetSocketAddress a = (InetSocketAddress) undertow.getListenerInfo().get(0).getAddress();
      return URI.create("http://127.0.0.1:" + a.getPort() + "/");
    }

    @Override
    public void close() throws Exception {
      try {
        undertow.stop();
      } finally {
        deployment.stop();
        deployment.undeploy();
      }
    }
  }
}
