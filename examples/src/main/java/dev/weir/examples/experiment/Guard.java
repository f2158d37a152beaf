package dev.weir.examples.experiment;

import dev.weir.examples.Backends;
import dev.weir.examples.ExampleServer;
import dev.weir.jetty.WeirHandler;
import dev.weir.servlet.WeirFilter;
import java.util.List;
import java.util.Objects;

/**
 * One way to protect the example server in the {@link OverloadExperiment}: a name, the label its
 * tables show, its settings in words, and how to start a fresh server guarded by it. A guard
 * protects every endpoint of the server. Immutable.
 */
public final class Guard {
  /** Starts a server over its backends. */
  @FunctionalInterface
  interface ServerFactory {
    ExampleServer start(Backends backends) throws Exception;
  }

  private final String name;
  private final String label;
  private final String settings;
  private final ServerFactory factory;

  /** A guard whose tables show its name. */
  Guard(String name, String settings, ServerFactory factory) {
    this(name, name, settings, factory);
  }

  Guard(String name, String label, String settings, ServerFactory factory) {
    this.name = Objects.requireNonNull(name, "name");
    this.label = Objects.requireNonNull(label, "label");
    this.settings = Objects.requireNonNull(settings, "settings");
    this.factory = Objects.requireNonNull(factory, "factory");
  }

  /** The short name used in {@code --guards}. */
  public String name() {
    return name;
  }

  /** What tables and charts call it: its name, or its name with its one tuned number. */
  public String label() {
    return label;
  }

  /** The guard's settings, in words. */
  public String settings() {
    return settings;
  }

  /** Starts a fresh server on 127.0.0.1, guarded by this, over {@code backends}. */
  ExampleServer start(Backends backends) throws Exception {
    return factory.start(backends);
  }

  /** The name of Weir's guard, whose goals the experiment checks. */
  public static final String WEIR = "weir";
  /** The name of Weir's Jetty core handler, the same shedder in front of the servlet context. */
  public static final String WEIR_HANDLER = "weir-handler";
  /** The name of the unprotected server. */
  public static final String NONE = "none";

  /** The QoSHandler's {@code maxRequestCount} when not set: Jetty 12.1 takes half the threads. */
  public static final int QOS_DEFAULT_LIMIT = ExampleServer.THREADS / 2;

  /** Every guard, with the /work endpoint's hand-picked QoSHandler limit at its default, 8. */
  public static List<Guard> all() {
    return all(8, "the downstream's connections");
  }

  /**
   * Every guard of the experiment, in the order they run: none, jetty-qos-default, jetty-qos,
   * netflix-vegas, netflix-gradient2, weir, weir-handler. The QoSHandler runs twice: untuned, at Jetty's default
   * limit (what a user gets), and at a limit hand-picked for the endpoint under load, the one
   * number an operator would know to put there; nothing else is tuned.
   *
   * @param handPicked the hand-picked QoSHandler limit
   * @param rule where {@code handPicked} comes from, in words
   */
  public static List<Guard> all(int handPicked, String rule) {
    String qos = " priority 5 - tier; other settings Jetty's defaults (1024 suspended at most,"
        + " no suspend timeout)";
    return List.of(
        new Guard(NONE, "no load shedding: Jetty, 200 threads",
            d -> ExampleServer.start(d, null)),
        new Guard("jetty-qos-default", "QoSHandler (default " + QOS_DEFAULT_LIMIT + ")",
            "Jetty 12 QoSHandler, maxRequestCount not set: Jetty's default, half the server's"
            + " threads (" + QOS_DEFAULT_LIMIT + "),"  + qos,
            d -> ExampleServer.start(d, null, h -> new TierQoSHandler(h, 0))),
        new Guard("jetty-qos", "QoSHandler (hand-picked " + handPicked + ")",
            "Jetty 12 QoSHandler, maxRequestCount = " + handPicked + ", " + rule + "," + qos,
            d -> ExampleServer.start(d, null, h -> new TierQoSHandler(h, handPicked))),
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
