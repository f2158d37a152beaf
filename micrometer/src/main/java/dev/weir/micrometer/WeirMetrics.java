package dev.weir.micrometer;

import dev.weir.LoadShedder;
import dev.weir.Priority;
import dev.weir.Snapshot;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Publishes a {@link LoadShedder}'s state to Micrometer. All meters read the shedder's own
 * counters when scraped, so binding adds nothing to the per-request path.
 *
 * <table>
 *   <caption>Meters, each tagged {@code shedder}</caption>
 *   <tr><th>name</th><th>type</th><th>extra tags</th></tr>
 *   <tr><td>weir.limit</td><td>gauge</td><td></td></tr>
 *   <tr><td>weir.inflight</td><td>gauge</td><td></td></tr>
 *   <tr><td>weir.queued</td><td>gauge</td><td></td></tr>
 *   <tr><td>weir.rejection.ratio</td><td>gauge</td><td></td></tr>
 *   <tr><td>weir.cutoff</td><td>gauge (packed priority; 768 sheds nothing)</td><td></td></tr>
 *   <tr><td>weir.overloaded</td><td>gauge (0 or 1)</td><td></td></tr>
 *   <tr><td>weir.requests</td><td>counter</td><td>tier, outcome (admitted, shed, queue_full,
 *       queue_timeout, shutting_down, cancelled, deadline_missed, succeeded, failed,
 *       dropped, reclaimed)</td></tr>
 *   <tr><td>weir.queue.wait</td><td>function timer (count and total of admitted requests' queue
 *       waits)</td><td>tier</td></tr>
 * </table>
 */
public final class WeirMetrics implements MeterBinder {
  /** The gauges {@link #bindTo} registers, by name: {@link #remove} finds them by their ids. */
  private static final String[] GAUGES = {"weir.limit", "weir.inflight", "weir.queued",
      "weir.rejection.ratio", "weir.cutoff", "weir.overloaded"};
  /** The tags every meter carries already: the shedder, and the tier and outcome of some. */
  private static final java.util.Set<String> OWN_TAGS = java.util.Set.of("shedder", "tier", "outcome");

  private final LoadShedder shedder;
  private final Tags tags;

  public WeirMetrics(LoadShedder shedder) {
    this(shedder, Tags.empty());
  }

  /**
   * @param extraTags added to every meter; see {@link #extraTags}
   * @throws IllegalArgumentException for a null shedder, or a tag the meters carry already
   */
  public WeirMetrics(LoadShedder shedder, Iterable<io.micrometer.core.instrument.Tag> extraTags) {
    if (shedder == null) {
      throw new IllegalArgumentException("shedder must not be null");
    }
    this.shedder = shedder;
    this.tags = Tags.of("shedder", shedder.name()).and(extraTags(extraTags));
  }

  /**
   * {@code extraTags}, checked: none may be named {@code shedder}, {@code tier} or {@code
   * outcome}, the tags the meters carry already. For an adapter that takes tags with its registry
   * and must refuse bad ones when configured, before any shedder exists.
   *
   * @throws IllegalArgumentException naming the first such tag
   */
  public static Tags extraTags(Iterable<io.micrometer.core.instrument.Tag> extraTags) {
    Tags all = Tags.of(extraTags);
    for (io.micrometer.core.instrument.Tag t : all) {
      if (OWN_TAGS.contains(t.getKey())) {
        throw new IllegalArgumentException("the tag '" + t.getKey()
            + "' is the meters' own; extra tags may not be named " + OWN_TAGS);
      }
    }
    return all;
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    LoadShedder s = shedder;
    Gauge.builder("weir.limit", s, LoadShedder::limit).tags(tags)
        .description("The inflight limit").register(registry);
    Gauge.builder("weir.inflight", s, LoadShedder::inflight).tags(tags)
        .description("Permits held").register(registry);
    Gauge.builder("weir.queued", s, LoadShedder::queued).tags(tags)
        .description("Requests waiting in the queue").register(registry);
    Gauge.builder("weir.rejection.ratio", s, LoadShedder::rejectionRatio).tags(tags)
        .description("The fraction of traffic the rejector aims to shed").register(registry);
    Gauge.builder("weir.cutoff", s, LoadShedder::cutoff).tags(tags)
        .description("Priorities at or above the cutoff are shed when they would wait")
        .register(registry);
    Gauge.builder("weir.overloaded", s, x -> x.overloaded() ? 1 : 0).tags(tags)
        .description("1 while the rejector judges the shedder overloaded").register(registry);
    for (int tier = 0; tier < Priority.TIERS; tier++) {
      final int t = tier;
      Tags tierTags = tags.and("tier", Integer.toString(tier));
      for (Snapshot.Counter c : Snapshot.Counter.values()) {
        FunctionCounter.builder("weir.requests", s, x -> x.count(c, t))
            .tags(tierTags.and("outcome", c.name().toLowerCase(Locale.ROOT)))
            .description("Requests by tier and outcome").register(registry);
      }
      FunctionTimer.builder("weir.queue.wait", s,
              x -> x.count(Snapshot.Counter.ADMITTED, t),
              x -> x.totalQueueWaitNanos(t), TimeUnit.NANOSECONDS)
          .tags(tierTags).description("Time admitted requests waited in the queue")
          .register(registry);
    }
  }

  /**
   * Removes every meter of the shedder named {@code shedderName} (tagged {@code shedder=name})
   * from {@code registry}: for a shedder that was retired, so that its meters do not linger.
   */
  public static void remove(MeterRegistry registry, String shedderName) {
    removeWhere(registry, m -> shedderName.equals(m.getId().getTag("shedder")));
  }

  /**
   * Removes the meters of the shedder named {@code shedderName} bound with exactly {@code
   * extraTags}, as by {@link #WeirMetrics(LoadShedder, Iterable)}: those of another shedder of
   * the same name, bound with other tags (more or fewer), stay.
   */
  public static void remove(MeterRegistry registry, String shedderName,
      Iterable<io.micrometer.core.instrument.Tag> extraTags) {
    // By the ids the meters were registered with: the registry's filters (its common tags, say)
    // may have added tags of their own, which the meters it holds carry and the binding's lack.
    Tags tags = Tags.of("shedder", shedderName).and(extraTags);
    for (String gauge : GAUGES) {
      registry.removeByPreFilterId(id(gauge, tags, Meter.Type.GAUGE));
    }
    for (int tier = 0; tier < Priority.TIERS; tier++) {
      Tags tierTags = tags.and("tier", Integer.toString(tier));
      for (Snapshot.Counter c : Snapshot.Counter.values()) {
        registry.removeByPreFilterId(id("weir.requests",
            tierTags.and("outcome", c.name().toLowerCase(Locale.ROOT)), Meter.Type.COUNTER));
      }
      registry.removeByPreFilterId(id("weir.queue.wait", tierTags, Meter.Type.TIMER));
    }
  }

  private static Meter.Id id(String name, Tags tags, Meter.Type type) {
    return new Meter.Id(name, tags, null, null, type);
  }

  private static void removeWhere(MeterRegistry registry,
      java.util.function.Predicate<Meter> which) {
    // Collected first: the registry's list is not to be changed while it is walked.
    registry.getMeters().stream().filter(which).collect(java.util.stream.Collectors.toList())
        .forEach(registry::remove);
  }

  /**
   * Whether {@code registry} has meters of a shedder named {@code shedderName} bound with exactly
   * {@code extraTags}. Binding a second shedder so would be ignored by Micrometer (its meters
   * would read the first), and removing either's would remove both: an adapter checks this
   * before it binds, so that two of them on one registry fail at configuration time unless their
   * tags tell them apart.
   */
  public static boolean isBound(MeterRegistry registry, String shedderName,
      Iterable<io.micrometer.core.instrument.Tag> extraTags) {
    Tags extra = Tags.of(extraTags);
    if (registry.getMeters().stream().anyMatch(m -> boundAs(m, shedderName, extra))) {
      return true;
    }
    // The registry's filters may have added tags (common tags) to the meters it holds, so their
    // tags alone do not tell. Registering weir.limit as bindTo does returns the meter there
    // already, if any; one made anew for this question is removed at once.
    java.util.List<Meter> before = registry.getMeters();
    Meter probe;
    try {
      probe = Gauge.builder("weir.limit", () -> Double.NaN)
          .tags(Tags.of("shedder", shedderName).and(extra)).register(registry);
    } catch (RuntimeException e) {
      return false; // a registry that refuses the meter (a filter throws) holds none of them
    }
    if (before.stream().anyMatch(m -> m == probe)) {
      return true;
    }
    if (registry.getMeters().stream().anyMatch(m -> m == probe)) {
      registry.remove(probe);
    }
    return false;
  }

  /**
   * For an adapter with routes ({@link dev.weir.http.RouteShedders}), before it binds: throws
   * unless {@code registry} is free for its meters. Another adapter's overflow shedder (every one
   * has it, named alike) already bound with the same tags means their route keys would collide
   * too.
   *
   * @throws IllegalArgumentException naming {@code meterRegistry}
   */
  public static void requireFreeForRoutes(MeterRegistry registry,
      Iterable<io.micrometer.core.instrument.Tag> extraTags) {
    if (isBound(registry, dev.weir.http.RouteShedders.OVERFLOW_KEY, extraTags)) {
      throw new IllegalArgumentException("meterRegistry: it has the meters of another filter or"
          + " handler with the same tags (" + Tags.of(extraTags) + ") already; give each its own"
          + " tags with meterRegistry(registry, tags), or stop the other first");
    }
  }

  /**
   * Whether {@code m} carries {@code shedder=shedderName} and, besides its own tags, exactly
   * {@code extra}.
   */
  private static boolean boundAs(Meter m, String shedderName, Tags extra) {
    if (!shedderName.equals(m.getId().getTag("shedder"))) {
      return false;
    }
    int others = 0;
    for (io.micrometer.core.instrument.Tag t : m.getId().getTagsAsIterable()) {
      if (!OWN_TAGS.contains(t.getKey())) {
        others++;
      }
    }
    int wanted = 0;
    for (io.micrometer.core.instrument.Tag t : extra) {
      wanted++;
      if (!t.getValue().equals(m.getId().getTag(t.getKey()))) {
        return false;
      }
    }
    return others == wanted;
  }
}
