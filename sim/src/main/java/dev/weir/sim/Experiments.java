package dev.weir.sim;

import dev.weir.LoadShedder;
import dev.weir.control.VegasLimit;
import java.time.Duration;
import java.util.List;

/**
 * Experimental scorecard contenders, not Weir's defaults: Weir's shedder with a differently
 * configured {@link VegasLimit}, to show what one setting does across the corpus.
 */
final class Experiments {
  private Experiments() {}

  static List<Scorecard.Contender> contenders() {
    return List.of(vegasTarget(0.5), vegasTarget(0.9));
  }

  /** Weir's default shedder, but its Vegas limit aims at {@code target} of the limit queued. */
  static Scorecard.Contender vegasTarget(double target) {
    String label = "exp-tq" + target;
    return new Scorecard.Contender(label, (timer, s) -> LoadShedder.builder().name(label)
        .timer(timer).requestTimeout(Duration.ofNanos((long) (s.requestTimeoutSeconds * 1e9)))
        .limit(() -> VegasLimit.builder().targetQueue(target).build()).build());
  }
}
