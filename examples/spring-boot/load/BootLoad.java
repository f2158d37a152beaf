import dev.weir.examples.LoadGenerator;
import dev.weir.examples.LoadReport;
import dev.weir.examples.Status;
import dev.weir.examples.TierStats;
import java.net.URI;
import java.time.Duration;

/**
 * The client side of examples/spring-boot/overload.sh and examples/war/overload.sh, run as a
 * single source file on the examples module's class path: Weir's open-loop LoadGenerator (Poisson
 * arrivals, 50% tier 1 / 50% tier 5 in X-Weir-Tier, 3 s client timeout: six times the endpoint's
 * 500 ms) against a URL, 10 s of warm-up then SECONDS measured, printing one line.
 *
 * <p>Usage: java -cp EXAMPLES_CLASSPATH BootLoad.java URL RATE SECONDS SEED
 */
public class BootLoad {
  public static void main(String[] args) throws Exception {
    LoadReport r = LoadGenerator.builder(URI.create(args[0]))
        .rate(Double.parseDouble(args[1]))
        .warmup(Duration.ofSeconds(10))
        .duration(Duration.ofSeconds(Long.parseLong(args[2])))
        .timeout(Duration.ofSeconds(3))
        .seed(Long.parseLong(args[3]))
        .build()
        .run();
    TierStats all = r.total();
    TierStats t1 = r.tier(1);
    System.out.printf("goodput %.1f/s | tier1 %.1f%% p99 %.0f ms | 429 %d, 503 %d, timed out %d"
            + " | max send lag %.0f ms%n",
        all.goodputPerSecond(), 100 * t1.successRatio(), t1.latencyMillis(0.99),
        all.count(Status.TOO_MANY_REQUESTS), all.count(Status.UNAVAILABLE),
        all.count(Status.TIMEOUT), r.maxSendLagMillis());
  }
}
