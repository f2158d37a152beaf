import dev.weir.examples.LoadGenerator;
import dev.weir.examples.LoadReport;
import dev.weir.examples.Status;
import dev.weir.examples.TierStats;
import java.net.URI;
import java.time.Duration;

/**
 * The client side of examples/ring/overload.sh, run as a single source file on the examples
 * module's class path: Weir's open-loop LoadGenerator (Poisson arrivals, 50% tier 1 / 50% tier 5
 * in X-Weir-Tier, 1 s client timeout) against a URL, printing one line per run.
 *
 * <p>Usage: java -cp EXAMPLES_CLASSPATH RingLoad.java URL RATE SECONDS SEED
 */
public class RingLoad {
  public static void main(String[] args) throws Exception {
    LoadReport r = LoadGenerator.builder(URI.create(args[0]))
        .rate(Double.parseDouble(args[1]))
        .warmup(Duration.ofSeconds(3))
        .duration(Duration.ofSeconds(Long.parseLong(args[2])))
        .timeout(Duration.ofSeconds(1))
        .seed(Long.parseLong(args[3]))
        .build()
        .run();
    TierStats t1 = r.tier(1);
    TierStats t5 = r.tier(5);
    System.out.printf("tier1 %.2f%% p99 %.0f ms (sent %d; 429 %d, 503 %d, late %d, other %d)"
            + " | tier5 %.2f%% | goodput %.0f/s | max send lag %.0f ms%n",
        100 * t1.successRatio(), t1.latencyMillis(0.99), t1.sent(),
        t1.count(Status.TOO_MANY_REQUESTS), t1.count(Status.UNAVAILABLE), t1.count(Status.TIMEOUT),
        t1.count(Status.OTHER), 100 * t5.successRatio(), r.total().goodputPerSecond(),
        r.maxSendLagMillis());
  }
}
