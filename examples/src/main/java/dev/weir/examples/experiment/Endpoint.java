package dev.weir.examples.experiment;

import dev.weir.examples.ExampleServer;
import java.net.URI;

/**
 * An endpoint of the example server that the {@link OverloadExperiment} overloads, each behind the
 * same guards: what bounds its capacity, and how the QoSHandler's limit is hand-picked for it.
 */
enum Endpoint {
  /** {@code GET /work}: bounded by the downstream's connections, whatever the cores. */
  WORK("work", ExampleServer.WORK_PATH, "the downstream's connections"),
  /** {@code GET /compute}: bounded by the cores, shared with the server and its clients. */
  COMPUTE("compute", ExampleServer.COMPUTE_PATH, "the machine's cores");

  /** The name used in {@code --endpoints}. */
  final String key;
  /** The path, such as {@code /work}. */
  final String path;
  /** Where the hand-picked QoSHandler limit comes from, in words. */
  final String handPickedRule;

  Endpoint(String key, String path, String handPickedRule) {
    this.key = key;
    this.path = path;
    this.handPickedRule = handPickedRule;
  }

  /**
   * The hand-picked QoSHandler limit: the number of requests that can run at once without
   * waiting, which an operator can read off the deployment. For /work, the downstream's
   * connections; for /compute, the cores.
   */
  int handPickedLimit(int connections, int cores) {
    return this == WORK ? connections : cores;
  }

  /** This endpoint's URI on {@code server}. */
  URI uri(ExampleServer server) {
    return this == WORK ? server.workUri() : server.computeUri();
  }

  /** {@code GET /work}. */
  String title() {
    return "GET " + path;
  }

  /**
   * The endpoint named {@code key}.
   *
   * @throws IllegalArgumentException if none is
   */
  static Endpoint of(String key) {
    for (Endpoint e : values()) {
      if (e.key.equals(key.trim())) {
        return e;
      }
    }
    throw new IllegalArgumentException("--endpoints: unknown endpoint '" + key
        + "'; endpoints are work,compute");
  }
}
