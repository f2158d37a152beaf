package dev.weir.jetty;

import dev.weir.LoadShedder;
import dev.weir.micrometer.WeirMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;

/** Kept apart so that Micrometer is loaded only when a registry was configured. */
final class Metrics {
  private Metrics() {}

  /**
   * {@code tags}, checked ({@link WeirMetrics#extraTags}).
   *
   * @throws IllegalArgumentException naming {@code meterRegistry}, for a tag the meters carry
   */
  static Object tags(Iterable<Tag> tags) {
    try {
      return WeirMetrics.extraTags(tags);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("meterRegistry: " + e.getMessage(), e);
    }
  }

  /** @param tags from {@link #tags}, or null for none */
  static void bind(LoadShedder shedder, Object registry, Object tags) {
    new WeirMetrics(shedder, tags == null ? Tags.empty() : (Tags) tags)
        .bindTo((MeterRegistry) registry);
  }

  /** @throws IllegalArgumentException naming {@code meterRegistry}, if another adapter uses it
   *     with the same tags ({@link WeirMetrics#requireFreeForRoutes}) */
  static void checkFree(Object registry, Object tags) {
    WeirMetrics.requireFreeForRoutes((MeterRegistry) registry,
        tags == null ? Tags.empty() : (Tags) tags);
  }

  /** Removes the meters of a retired shedder: those bound with {@code tags}. */
  static void unbind(String name, Object registry, Object tags) {
    WeirMetrics.remove((MeterRegistry) registry, name, tags == null ? Tags.empty() : (Tags) tags);
  }
}
