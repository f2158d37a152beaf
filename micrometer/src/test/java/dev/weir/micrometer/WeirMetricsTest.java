package dev.weir.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.AdmissionCallback;
import dev.weir.LoadShedder;
import dev.weir.Permit;
import dev.weir.Priority;
import dev.weir.RejectReason;
import dev.weir.Snapshot;
import dev.weir.Ticket;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import dev.weir.VirtualTime;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The meters, read from a {@link SimpleMeterRegistry}, after a scripted run in virtual time. */
class WeirMetricsTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  private final VirtualTime time = new VirtualTime();
  private final LoadShedder shedder = LoadShedder.builder()
      .name("api")
      .timer(time)
      .limit(() -> Limits.fixed(2))
      .rejector(Rejectors::none)
      .queueCapacity(2)
      .requestTimeout(Duration.ofMillis(300)) // queue timeout 100 ms
      .build();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  /** Records the single answer a request hears. */
  private static final class Answer implements AdmissionCallback {
    Permit permit;
    RejectReason reason;

    @Override
    public void onAdmitted(Permit p) {
      permit = p;
    }

    @Override
    public void onRejected(RejectReason r) {
      reason = r;
    }
  }

  private Answer submit(int tier) {
    Answer a = new Answer();
    shedder.submit(Priority.of(tier, 0), a);
    return a;
  }

  private double requests(int tier, String outcome) {
    return registry.get("weir.requests")
        .tags("shedder", "api", "tier", Integer.toString(tier), "outcome", outcome)
        .functionCounter().count();
  }

  private double gauge(String name) {
    return registry.get(name).tag("shedder", "api").gauge().value();
  }

  private FunctionTimer queueWait(int tier) {
    return registry.get("weir.queue.wait").tags("shedder", "api", "tier", Integer.toString(tier))
        .functionTimer();
  }

  @Test
  void metersFollowTheShedder() {
    new WeirMetrics(shedder).bindTo(registry);
    assertEquals(6 + Priority.TIERS * (Snapshot.Counter.values().length + 1),
        registry.getMeters().size(), "6 gauges, and per tier 10 counters and a timer");
    assertEquals(2, gauge("weir.limit"));
    assertEquals(0, gauge("weir.inflight"));
    assertEquals(Priority.LEVELS, gauge("weir.cutoff"));
    assertEquals(0, gauge("weir.overloaded"));
    assertEquals(0, gauge("weir.rejection.ratio"));

    Answer a = submit(0); // admitted at 0
    Answer b = submit(1); // admitted at 0
    Answer c = submit(2); // queued at 0
    time.advanceTo(40 * MS);
    Answer d = submit(3); // queued at 40 ms
    assertEquals(2, gauge("weir.inflight"));
    assertEquals(2, gauge("weir.queued"));

    time.advanceTo(50 * MS);
    a.permit.success(); // c admitted after 50 ms in the queue
    Answer e = submit(4); // queued; the queue (d, e) is full
    Answer f = submit(1); // evicts e, the least important
    Answer g = submit(5); // nothing less important to evict
    assertEquals(RejectReason.QUEUE_FULL, e.reason);
    assertEquals(RejectReason.QUEUE_FULL, g.reason);

    time.advanceTo(140 * MS); // d, queued at 40 ms, times out
    assertEquals(RejectReason.QUEUE_TIMEOUT, d.reason);
    b.permit.error(); // f admitted after 90 ms in the queue
    c.permit.onDeadline(() -> {});
    time.advanceTo(300 * MS); // c's deadline (arrival 0 + 300 ms) passes while it runs

    Answer h = new Answer();
    Ticket ticket = shedder.submit(Priority.of(3, 5), h); // c and f run: queued
    Answer i = submit(3); // queued
    ticket.cancel();
    assertEquals(RejectReason.CANCELLED, h.reason);
    assertEquals(1, gauge("weir.queued"));
    f.permit.dropped(); // i admitted without waiting in virtual time
    assertEquals(2, gauge("weir.inflight"), "c and i");
    assertEquals(0, gauge("weir.queued"));
    i.permit.success();
    c.permit.success();
    shedder.close();
    assertEquals(RejectReason.SHUTTING_DOWN, submit(0).reason);

    assertEquals(0, gauge("weir.inflight"));
    assertEquals(0, gauge("weir.queued"));
    assertEquals(2, gauge("weir.limit"));

    assertEquals(1, requests(0, "admitted"));
    assertEquals(1, requests(0, "succeeded"));
    assertEquals(1, requests(0, "shutting_down"));
    assertEquals(2, requests(1, "admitted"));
    assertEquals(1, requests(1, "failed"));
    assertEquals(1, requests(1, "dropped"));
    assertEquals(1, requests(2, "admitted"));
    assertEquals(1, requests(2, "deadline_missed"));
    assertEquals(1, requests(2, "succeeded"));
    assertEquals(1, requests(3, "queue_timeout"));
    assertEquals(1, requests(3, "cancelled"));
    assertEquals(1, requests(3, "admitted"));
    assertEquals(1, requests(4, "queue_full"));
    assertEquals(1, requests(5, "queue_full"));
    assertEquals(0, requests(5, "admitted"));
    assertEquals(0, requests(0, "shed"));
    double all = registry.get("weir.requests").functionCounters().stream()
        .mapToDouble(fc -> fc.count()).sum();
    assertEquals(5 + 5 + 1 + 1 + 2 + 1 + 1, all,
        "admitted 5, released 5, deadline 1, timeout 1, full 2, cancelled 1, shutting down 1");

    assertEquals(1, queueWait(0).count());
    assertEquals(0, queueWait(0).totalTime(TimeUnit.MILLISECONDS));
    assertEquals(2, queueWait(1).count());
    assertEquals(90, queueWait(1).totalTime(TimeUnit.MILLISECONDS), 1e-9);
    assertEquals(1, queueWait(2).count());
    assertEquals(50, queueWait(2).totalTime(TimeUnit.MILLISECONDS), 1e-9);
    assertEquals(50, queueWait(2).mean(TimeUnit.MILLISECONDS), 1e-9);
    assertEquals(1, queueWait(3).count());
    assertEquals(0, queueWait(3).totalTime(TimeUnit.MILLISECONDS));
    assertEquals(0, queueWait(5).count());
  }

  @Test
  void extraTagsAreAddedToEveryMeter() {
    new WeirMetrics(shedder, Tags.of("region", "eu")).bindTo(registry);
    for (Meter m : registry.getMeters()) {
      assertEquals("eu", m.getId().getTag("region"), m.getId().toString());
      assertEquals("api", m.getId().getTag("shedder"), m.getId().toString());
    }
  }

  @Test
  void twoSheddersKeepTheirMetersApart() {
    LoadShedder other = LoadShedder.builder().name("batch").timer(time).limit(() -> Limits.fixed(7))
        .rejector(Rejectors::none).build();
    new WeirMetrics(shedder).bindTo(registry);
    new WeirMetrics(other).bindTo(registry);
    submit(0);
    assertEquals(2, gauge("weir.limit"));
    assertEquals(7, registry.get("weir.limit").tag("shedder", "batch").gauge().value());
    assertEquals(1, requests(0, "admitted"));
    assertEquals(0, registry.get("weir.requests")
        .tags("shedder", "batch", "tier", "0", "outcome", "admitted").functionCounter().count());
  }

  @Test
  void removalWithTagsLeavesTheSameNamesMetersBoundWithOtherTags() {
    LoadShedder twin = LoadShedder.builder().name("api").timer(time).limit(() -> Limits.fixed(7))
        .rejector(Rejectors::none).build();
    new WeirMetrics(shedder, Tags.of("app", "one")).bindTo(registry);
    new WeirMetrics(twin, Tags.of("app", "two")).bindTo(registry);
    int each = registry.getMeters().size() / 2;
    WeirMetrics.remove(registry, "api", Tags.of("app", "one"));
    assertEquals(each, registry.getMeters().size());
    assertEquals(7, registry.get("weir.limit").tags("shedder", "api", "app", "two").gauge().value());
    WeirMetrics.remove(registry, "api");
    assertEquals(0, registry.getMeters().size(), "without tags: every meter of that name");
  }

  @Test
  void removalWithExactlyTheBindingsTagsLeavesTheSameNameBoundWithMoreOrFewer() {
    LoadShedder twin = LoadShedder.builder().name("api").timer(time).limit(() -> Limits.fixed(7))
        .rejector(Rejectors::none).build();
    new WeirMetrics(shedder).bindTo(registry);
    new WeirMetrics(twin, Tags.of("app", "two")).bindTo(registry);
    assertTrue(WeirMetrics.isBound(registry, "api", Tags.empty()));
    assertTrue(WeirMetrics.isBound(registry, "api", Tags.of("app", "two")));
    assertFalse(WeirMetrics.isBound(registry, "api", Tags.of("app", "one")));
    assertFalse(WeirMetrics.isBound(registry, "batch", Tags.empty()));
    int each = registry.getMeters().size() / 2;
    WeirMetrics.remove(registry, "api", Tags.empty());
    assertEquals(each, registry.getMeters().size(), "the tagged binding's meters stay");
    assertFalse(WeirMetrics.isBound(registry, "api", Tags.empty()));
    assertEquals(7, registry.get("weir.limit").tags("shedder", "api", "app", "two").gauge().value());
    new WeirMetrics(shedder).bindTo(registry);
    WeirMetrics.remove(registry, "api", Tags.of("app", "two"));
    assertEquals(each, registry.getMeters().size(), "the untagged binding's meters stay");
    assertEquals(2, registry.get("weir.limit").tag("shedder", "api").gauge().value());
  }

  @Test
  void removalFindsTheMetersUnderTheRegistrysCommonTags() {
    // Common tags (Spring Boot's management.metrics.tags.*) are on every meter the registry
    // holds; they are not tags the binding was given, and must not hide its meters.
    registry.config().commonTags("application", "shop");
    new WeirMetrics(shedder).bindTo(registry);
    assertTrue(WeirMetrics.isBound(registry, "api", Tags.empty()));
    WeirMetrics.remove(registry, "api", Tags.empty());
    assertEquals(0, registry.getMeters().size(), "the meters linger after removal");
    assertFalse(WeirMetrics.isBound(registry, "api", Tags.empty()));

    // Bound again (a restarted filter) with a new shedder: its meters, not the old one's.
    LoadShedder restarted = LoadShedder.builder().name("api").timer(time)
        .limit(() -> Limits.fixed(9)).rejector(Rejectors::none).build();
    new WeirMetrics(restarted).bindTo(registry);
    assertEquals(9, gauge("weir.limit"));

    LoadShedder twin = LoadShedder.builder().name("api").timer(time).limit(() -> Limits.fixed(7))
        .rejector(Rejectors::none).build();
    new WeirMetrics(twin, Tags.of("app", "two")).bindTo(registry);
    assertTrue(WeirMetrics.isBound(registry, "api", Tags.of("app", "two")));
    assertFalse(WeirMetrics.isBound(registry, "api", Tags.of("app", "one")));
    int each = registry.getMeters().size() / 2;
    WeirMetrics.remove(registry, "api", Tags.of("app", "two"));
    assertEquals(each, registry.getMeters().size(), "the untagged binding's meters stay");
    assertEquals(9, registry.get("weir.limit").tags("shedder", "api").gauge().value());
  }

  @Test
  void aNullShedderIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new WeirMetrics(null));
  }
}
