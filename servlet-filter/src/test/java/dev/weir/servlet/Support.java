package dev.weir.servlet;

import dev.weir.LoadShedder;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.time.Duration;
import java.util.Collections;
import java.util.Enumeration;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Small test helpers: polling with a deadline, servlets from lambdas, filter configs and a
 * one-at-a-time shedder template.
 */
final class Support {
  private Support() {}

  /** A shedder template: one request at a time, nothing shed at the door. */
  static LoadShedder.Builder oneAtATime() {
    return LoadShedder.builder().limit(() -> Limits.fixed(1)).rejector(Rejectors::none);
  }

  /** A filter config with these init-params, as a {@code web.xml} would give. */
  static FilterConfig filterConfig(Map<String, String> params) {
    return new FilterConfig() {
      @Override
      public String getFilterName() {
        return "weir";
      }

      @Override
      public ServletContext getServletContext() {
        return null;
      }

      @Override
      public String getInitParameter(String name) {
        return params.get(name);
      }

      @Override
      public Enumeration<String> getInitParameterNames() {
        return Collections.enumeration(params.keySet());
      }
    };
  }

  interface Handler {
    void handle(HttpServletRequest req, HttpServletResponse res) throws Exception;
  }

  static HttpServlet servlet(Handler handler) {
    return new HttpServlet() {
      private static final long serialVersionUID = 1L;

      @Override
      protected void service(HttpServletRequest req, HttpServletResponse res) {
        try {
          handler.handle(req, res);
        } catch (RuntimeException e) {
          throw e;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
    };
  }

  /** Polls until {@code condition} holds; fails with {@code what()} after {@code timeout}. */
  static void await(BooleanSupplier condition, Duration timeout, Supplier<String> what) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out after " + timeout + ": " + what.get());
      }
      Thread.onSpinWait();
      try {
        Thread.sleep(5); // polling interval, not synchronisation
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  /**
   * Asserts every shedder of {@code filter} gets back to nothing held and nothing queued, once: the
   * await is the assertion. A shedder's {@code inflight()} is a moment's estimate, and its tick
   * moving a cached credit back to the shared pool can show one more for an instant, so a second
   * read after the first zero could see that instant.
   */
  static void assertDrained(WeirFilter filter) {
    await(() -> filter.shedders().values().stream()
            .allMatch(s -> s.inflight() == 0 && s.queued() == 0),
        Duration.ofSeconds(10), () -> "shedders not drained: " + filter.snapshots());
  }
}
