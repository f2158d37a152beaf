package dev.weir.examples.experiment;

import dev.weir.examples.Downstream;
import dev.weir.examples.ExampleServer;
import dev.weir.jetty.WeirHandler;
import dev.weir.servlet.WeirFilter;
import java.util.List;
import java.util.Objects;

/**
 * One way to protect the example server in the {@link OverloadExperiment}: a name, its settings
 * in words, and how to start a fresh server guarded by it. Immutable.
 */
public final class Guard {
  /** Starts a server over a downstream. */
  @FunctionalInterface
  interface ServerFactory {
    ExampleServer start(Downstream downstream) throws Exception;
  }

  private final String name;
  private final String settings;
  private final ServerFactory factory;

  Guard(String name, String settings, ServerFactory factory) {
    this.name = Objects.requireNonNull(name, "name");
    this.settings = Objects.requireNonNull(settings, "settings");
    this.factory = Objects.requireNonNull(factory, "factory");
  }

  /** The short name used in tables, charts and {@code --guards}. */
  public String name() {
    return name;
  }

  /** The guard's settings, in words. */
  public String settings() {
    return settings;
  }

  /** Starts a fresh server on 127.0.0.1, guarded by this, over {@code downstream}. */
  ExampleServer start(Downstream downstream) throws Exception {
    return factory.start(downstream);
  }

  /** The name of Weir's guard, whose goals the experiment checks. */
  public static final String WEIR = "weir";
  /** The name of Weir's Jetty core handler, the same shedder in front of the servlet context. */
  public static final String WEIR_HANDLER = "weir-handler";
  /** The name of the unprotected server. */
  public static final String NONE = "none";

  /**
   * Every guard of the experiment, in the order they run: none, jetty-qos, netflix-vegas,
   * netflix-gradient2, weir, weir-handler. The QoSHandler's limit is the downstream's pool size,
   * the one number an operator would know to put there; nothing else is tuned.
   */
  public static List<Guard> all() {
    return List.of(
        new Guard(NONE, "no load shedding: Jetty, 200 threads",
            d -> ExampleServer.start(d, null)),
        new Guard("jetty-qos", "Jetty 12 QoSHandler, maxRequestCount = downstream pool size,"
            + " priority 5 - tier; other settings Jetty's defaults (1024 suspended at most,"
            + " no suspend timeout)",
            d -> ExampleServer.start(d, null, h -> new TierQoSHandler(h, d.connections()))),
        new Guard("netflix-vegas", "Netflix concurrency-limits 0.5.4: SimpleLimiter with"
            + " VegasLimit.newDefault(), 429 when refused; no priority",
            d -> ExampleServer.start(d, NetflixLimitFilter.vegas())),
        new Guard("netflix-gradient2", "Netflix concurrency-limits 0.5.4: SimpleLimiter with"
            + " Gradient2Limit.newDefault(), 429 when refused; no priority",
            d -> ExampleServer.start(d, NetflixLimitFilter.gradient2())),
        new Guard(WEIR, "Weir: new WeirFilter(), zero configuration",
            d -> ExampleServer.start(d, new WeirFilter())),
        new Guard(WEIR_HANDLER, "Weir: new WeirHandler(context), the Jetty 12 core handler in"
            + " front of the servlet context, zero configuration",
            d -> ExampleServer.start(d, null, WeirHandler::new)));
  }

  @Override
  public String toString() {
    return name;
  }
}
