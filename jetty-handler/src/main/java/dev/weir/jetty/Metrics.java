package dev.weir.jetty;

import dev.weir.LoadShedder;
import dev.weir.micrometer.WeirMetrics;
import io.micrometer.core.instrument.MeterRegistry;

/** Kept apart so that Micrometer is loaded only when a registry was configured. */
final class Metrics {
  private Metrics() {}

  static void bind(LoadShedder shedder, Object registry) {
    new WeirMetrics(shedder).bindTo((MeterRegistry) registry);
  }

  /** Removes the meters of a retired route's shedder. */
  static void unbind(String name, Object registry) {
    WeirMetrics.remove((MeterRegistry) registry, name);
  }
}
