import dev.weir.examples.LoadGenerator;
import dev.weir.examples.LoadReport;
import dev.weir.examples.Status;
import dev.weir.examples.TierStats;
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Executors;

/**
 * The client side of examples/ring/overload.sh, run as a single source file on the examples
 * module's class path: Weir's open-loop LoadGenerator (Poisson arrivals, 50% tier 1 / 50% tier 5
 * in X-Weir-Tier, 1 s client timeout) against a URL, printing one line per run.
 *
 * <p>With SELF_WARM_SECONDS above 0, the generator first sends the same load for that long to a
 * trivial server of its own, so that its own JIT compilation is done before it sends to URL: a
 * cold generator on 2 shared cores stalls for up to a second and then sends the backlog as a
 * burst, which is not the open-loop load the run is meant to offer. The server under test stays
 * cold.
 *
 * <p>Usage: java -cp EXAMPLES_CLASSPATH RingLoad.java URL RATE SECONDS SEED [SELF_WARM_SECONDS]
 */
public class RingLoad {
  public static void main(String[] args) throws Exception {
    int selfWarm = args.length > 4 ? Integer.parseInt(args[4]) : 0;
    if (selfWarm > 0) {
      HttpServer sink = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 1024);
      sink.setExecutor(Executors.newFixedThreadPool(4));
      byte[] ok = "ok".getBytes(StandardCharsets.US_ASCII);
      sink.createContext("/", x -> {
        x.sendResponseHeaders(200, ok.length);
        x.getResponseBody().write(ok);
        x.close();
      });
      sink.start();
      try {
        LoadGenerator.builder(URI.create("http://127.0.0.1:" + sink.getAddress().getPort() + "/"))
            .rate(Double.parseDouble(args[1]))
            .warmup(Duration.ZERO)
            .duration(Duration.ofSeconds(selfWarm))
            .timeout(Duration.ofSeconds(1))
            .seed(Long.parseLong(args[3]) + 1000)
            .build()
            .run();
      } finally {
        sink.stop(0);
        ((java.util.concurrent.ExecutorService) sink.getExecutor()).shutdownNow();
      }
    }
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
