package dev.weir.servlet;

import dev.weir.LoadShedder;
import dev.weir.micrometer.WeirMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import java.util.Set;

/** Kept apart so that Micrometer is loaded only when a registry was configured. */
final class Metrics {
  private Metrics() {}

  /** Tag keys the meters carry already. */
  private static final Set<String> OURS = Set.of("shedder", "tier", "outcome");

  /**
   * {@code tags}, checked: none named as the meters' own tags.
   *
   * @throws IllegalArgumentException naming {@code meterRegistry}, for such a tag
   */
  static Object tags(Iterable<Tag> tags) {
    Tags all = Tags.of(tags);
    for (Tag t : all) {
      if (OURS.contains(t.getKey())) {
        throw new IllegalArgumentException("meterRegistry: the tag '" + t.getKey()
            + "' is the meters' own; tags may not be named " + OURS);
      }
    }
    return all;
  }

  /** @param tags from {@link #tags}, or null for none */
  static void bind(LoadShedder shedder, Object registry, Object tags) {
    new WeirMetrics(shedder, tags == null ? Tags.empty() : (Tags) tags)
        .bindTo((MeterRegistry) registry);
  }

  /** Removes the meters of a retired shedder: those bound with {@code tags}. */
  static void unbind(String name, Object registry, Object tags) {
    WeirMetrics.remove((MeterRegistry) registry, name, tags == null ? Tags.empty() : (Tags) tags);
  }
}
