package dev.weir.examples;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;

/**
 * Takes a screenshot of the live status page under overload: starts the example server with the
 * filter, sends it twice its capacity in all six tiers for a while, watches {@code
 * /weir/status?view=html} in a headless Chromium ({@link HeadlessChromium}) meanwhile, and writes
 * the page as a PNG. Bounded in time: the load stops by itself and everything is closed. Used by
 * {@code bin/screenshot}; see {@link #USAGE}.
 */
public final class StatusScreenshot {
  static final String USAGE = String.join("\n",
      "Usage: bin/screenshot [options]",
      "  --seconds N   how long the load runs before the screenshot (default 20, at most 120)",
      "  --out FILE    where the PNG goes (default reports/status.png)",
      "  --help        this text");

  /** The downstream: 2 connections, 20 ms each, so a capacity of 100 requests a second. */
  private static final int CONNECTIONS = 2;
  private static final Duration SERVICE_TIME = Duration.ofMillis(20);
  /** Twice the capacity: enough overload that every chart moves. */
  private static final double RATE = 200;
  /** Every tier, the least important most numerous, as in a real mix. */
  private static final String MIX = "0:5,1:15,2:15,3:25,4:20,5:20";

  private StatusScreenshot() {}

  public static void main(String[] args) throws Exception {
    int seconds;
    Path out;
    try {
      Args a = Args.parse(args, "seconds", "out", "help");
      if (a.flag("help")) {
        System.out.println(USAGE);
        return;
      }
      seconds = a.intValue("seconds", 20, 3, 120);
      out = Path.of(a.string("out", "reports/status.png"));
    } catch (IllegalArgumentException e) {
      System.err.println("screenshot: " + e.getMessage());
      System.err.println(USAGE);
      System.exit(2);
      return;
    }
    Path chromium = HeadlessChromium.find().orElse(null);
    if (chromium == null) {
      System.err.println("screenshot: no Chromium found (install it, e.g. apt-get install"
          + " chromium, or set WEIR_CHROMIUM)");
      System.exit(1);
      return;
    }
    Files.createDirectories(out.toAbsolutePath().getParent());
    Downstream downstream = new Downstream(CONNECTIONS, SERVICE_TIME, 42);
    try (ExampleServer server = ExampleServer.start(downstream, Observability.filter());
        HeadlessChromium browser = HeadlessChromium.start(chromium, 1400, 1000)) {
      LoadGenerator load = LoadGenerator.builder(server.workUri()).rate(RATE)
          .warmup(Duration.ZERO).duration(Duration.ofSeconds(seconds))
          .timeout(Duration.ofSeconds(2)).mix(TierMix.parse(MIX)).build();
      CompletableFuture<LoadReport> report = load.runInBackground();
      URI page = server.workUri().resolve(Observability.STATUS_PATH + "?view=html");
      browser.open(page);
      LoadReport r = report.get();
      browser.screenshot(out);
      Object polls = browser.evaluate("document.body.getAttribute('data-polls')");
      List<String> errors = browser.errors();
      System.out.printf(Locale.ROOT, "%s: %s polls of %s under %.0f req/s for %d s (capacity"
          + " %.0f req/s); %d sent; page errors: %s%n", out, polls, page, RATE, seconds,
          downstream.capacityPerSecond(), r.total().sent(), errors.isEmpty() ? "none" : errors);
      if (!errors.isEmpty()) {
        System.exit(1);
      }
    }
  }
}
