package dev.weir.sim;

import dev.weir.LoadShedder;
import dev.weir.Timer;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import java.time.Duration;

/** What stands between the simulated clients and the simulated service. */
public enum Guard {
  /** Weir with zero configuration: the adaptive limit and the PID rejector. */
  WEIR("weir"),
  /** A fixed limit equal to the number of servers (the ideal static value), no rejector. */
  FIXED_IDEAL("fixed-ideal"),
  /** An adaptive limit without priority shedding: Vegas alone, as a priority-blind shedder. */
  BLIND_ADAPTIVE("vegas-only"),
  /** Nothing: every request goes straight to the service. */
  NONE("none");

  private final String label;

  Guard(String label) {
    this.label = label;
  }

  public String label() {
    return label;
  }

  /** The shedder for this guard on {@code timer}, or null for {@link #NONE}. */
  public LoadShedder shedder(Timer timer, Scenario s) {
    Duration timeout = Duration.ofNanos((long) (s.requestTimeoutSeconds * 1e9));
    LoadShedder.Builder b = LoadShedder.builder().name(label).timer(timer).requestTimeout(timeout);
    switch (this) {
      case WEIR:
        return b.build();
      case FIXED_IDEAL:
        return b.limit(() -> Limits.fixed(s.servers)).rejector(Rejectors::none).build();
      case BLIND_ADAPTIVE:
        return b.limit(Limits::adaptive).rejector(Rejectors::none).build();
      case NONE:
        return null;
      default:
        throw new AssertionError(this);
    }
  }

  public static Guard parse(String text) {
    for (Guard g : values()) {
      if (g.label.equalsIgnoreCase(text) || g.name().equalsIgnoreCase(text)) {
        return g;
      }
    }
    throw new IllegalArgumentException("unknown guard '" + text + "'");
  }
}
