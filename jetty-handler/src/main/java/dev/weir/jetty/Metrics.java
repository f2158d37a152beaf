package dev.weir.jetty;

import dev.weir.LoadShedder;
import dev.weir.micrometer.WeirMetrics;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;

/** Kept apart so that Micrometer is loaded only when a registry was configured. */
final class Metrics {
  private Metrics() {}

  static void bind(LoadShedder shedder, Object registry) {
    new WeirMetrics(shedder).bindTo((MeterRegistry) registry);
  }

  /** Removes the meters of a retired route's shedder, tagged {@code shedder=name}. */
  static void unbind(String name, Object registry) {
    MeterRegistry r = (MeterRegistry) registry;
    List<Meter> mine = new ArrayList<>();
    for (Meter m : r.getMeters()) {
      if (name.equals(m.getId().getTag("shedder"))) {
        mine.add(m);
      }
    }
    mine.forEach(r::remove);
  }
}
