package dev.weir.examples;

import dev.weir.servlet.WeirFilter;
import dev.weir.servlet.WeirStatusServlet;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;

/**
 * What an operator of the example server looks at: {@value #STATUS_PATH}, Weir's status JSON and,
 * with {@code ?view=html}, its live page ({@link WeirStatusServlet}); and {@value #METRICS_PATH},
 * a Prometheus scrape of {@link #PROMETHEUS}, where a filter from {@link #filter()} publishes its
 * shedders' {@code weir.*} meters ({@link dev.weir.micrometer.WeirMetrics}). The Grafana dashboard
 * {@code dashboards/weir.json} reads those meters; {@code examples/prometheus} scrapes them.
 */
public final class Observability {
  /** The path of the status servlet. */
  public static final String STATUS_PATH = "/weir/status";
  /** The path of the Prometheus scrape endpoint. */
  public static final String METRICS_PATH = "/metrics";
  /** Prometheus's text exposition format, the one every Prometheus scrapes. */
  static final String TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8";
  /** The registry {@value #METRICS_PATH} serves, one per process like Prometheus's default. */
  public static final PrometheusMeterRegistry PROMETHEUS =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

  private Observability() {}

  /** The zero-configuration filter, publishing its meters to {@link #PROMETHEUS}. */
  public static WeirFilter filter() {
    return WeirFilter.builder().meterRegistry(PROMETHEUS).build();
  }

  /**
   * Adds {@value #METRICS_PATH} to {@code context}, and {@value #STATUS_PATH} when {@code filter}
   * is a {@link WeirFilter}.
   */
  static void install(ServletContextHandler context, Filter filter) {
    if (filter instanceof WeirFilter) {
      context.addServlet(new ServletHolder("weir-status",
          new WeirStatusServlet((WeirFilter) filter)), STATUS_PATH);
    }
    context.addServlet(new ServletHolder("metrics", new MetricsServlet()), METRICS_PATH);
  }

  /** Serves {@link #PROMETHEUS}'s scrape. */
  private static final class MetricsServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      byte[] body = PROMETHEUS.scrape().getBytes(StandardCharsets.UTF_8);
      resp.setContentType(TEXT_FORMAT);
      resp.setContentLength(body.length);
      resp.getOutputStream().write(body);
    }
  }
}
