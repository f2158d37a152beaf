package dev.weir.examples.experiment;

import static dev.weir.examples.experiment.HtmlReportTest.point;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.examples.Backends;
import dev.weir.examples.Downstream;
import dev.weir.examples.ExampleServer;
import dev.weir.examples.Status;
import dev.weir.examples.TestReports;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

class OverloadExperimentTest {
  private static OverloadExperiment.Result run(Settings s, ByteArrayOutputStream out,
      ByteArrayOutputStream log) throws Exception {
    return OverloadExperiment.run(s, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(log, true, StandardCharsets.UTF_8));
  }

  @Test
  void smokeRunsEveryGuardAtOneLoadAndReportsEach() throws Exception {
    Settings s = Settings.parse(new String[] {"--endpoints", "work",
        "--loads", "0.5", "--seconds", "1", "--warmup", "0", "--baseline", "0.3",
        "--html", "none"});
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    OverloadExperiment.Result r = run(s, bytes, new ByteArrayOutputStream());
    String out = bytes.toString(StandardCharsets.UTF_8);

    assertEquals(1, r.endpoints().size());
    OverloadExperiment.EndpointResult work = r.endpoints().get(0);
    List<String> labels = Guard.all(8, "the downstream's connections").stream()
        .map(Guard::label).toList();
    assertEquals(labels, work.points().stream().map(Point::guard).toList());
    assertTrue(labels.containsAll(List.of("QoSHandler (default 100)",
        "QoSHandler (hand-picked 8)")), labels.toString());
    for (Point p : work.points()) {
      // Half the capacity for a second: about 200 requests, nearly all served; the margins
      // allow for a stalled CI box.
      assertTrue(p.offeredPerSecond() > 100, p.toString());
      assertEquals(1, Arrays.stream(p.statusShares()).sum(), 1e-9, p.toString());
      assertTrue(p.share(Status.OK) > 0.5, p.guard() + " served " + p.share(Status.OK));
      assertTrue(p.topP99Millis() >= 1, p.toString());
      assertTrue(out.lines().anyMatch(l -> l.startsWith("0.5x  " + p.guard() + " ")),
          p.guard() + " has a row in\n" + out);
    }
    assertTrue(out.contains("GET /work (capacity 400 req/s)"), out);
    assertTrue(out.contains(OverloadExperiment.header()), out);
    assertEquals(0.3, work.baseline().load());
    // Only the P99 goal is decidable at 0.5x.
    assertEquals(1, work.goals().size(), work.goals().toString());
    assertTrue(work.repeats().isEmpty(), "0.5x is not a goal's load: one run each");
    assertFalse(out.contains("every guard ran"), out);
    HtmlReportTest.parse(r.html());
  }

  @Test
  void computeIsMeasuredClosedLoopThenLoadedAtMultiplesOfWhatWasMeasured() throws Exception {
    // --quick: a 2 s probe; ~1 ms requests, so the loads stay modest.
    Settings s = Settings.parse(new String[] {"--quick", "--endpoints", "compute",
        "--guards", "jetty-qos,weir", "--loads", "0.5", "--compute-rounds", "400000",
        "--baseline", "0", "--settle", "2", "--html", "none"});
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    OverloadExperiment.Result r = run(s, bytes, log);
    String out = bytes.toString(StandardCharsets.UTF_8);

    OverloadExperiment.EndpointResult compute = r.endpoints().get(0);
    assertEquals(Endpoint.COMPUTE, compute.endpoint());
    assertTrue(compute.capacity() > 10, "measured " + compute.capacity());
    assertTrue(compute.description().contains("measured closed-loop"), compute.description());
    int cores = Runtime.getRuntime().availableProcessors();
    assertEquals(List.of("QoSHandler (hand-picked " + cores + ")", "weir"),
        compute.points().stream().map(Point::guard).toList());
    for (Point p : compute.points()) {
      // Offered at half the measured capacity: served, through /compute.
      assertEquals(0.5 * compute.capacity(), p.offeredPerSecond(), 0.25 * compute.capacity(),
          p.toString());
      assertTrue(p.share(Status.OK) > 0.5, p.guard() + " served " + p.share(Status.OK));
    }
    String progress = log.toString(StandardCharsets.UTF_8);
    assertTrue(progress.contains("measuring the capacity of GET /compute closed-loop"), progress);
    // Each guard's server warmed first, at the highest load given, in whole steps of 2 s: one
    // step, whether the JIT was then quiet or the 2 s bound ended it.
    Matcher warmed = Pattern.compile("warmed GET /compute, weir at 0\\.5x for (\\d+) s: the JIT"
        + " (is quiet|still compiles)").matcher(progress);
    assertTrue(warmed.find(), progress);
    int seconds = Integer.parseInt(warmed.group(1));
    assertTrue(seconds >= 2 && seconds <= 4, "one step of 2 s and its drain: " + seconds);
    assertTrue(progress.indexOf("warmed GET /compute, weir") < progress.indexOf("running GET"
        + " /compute, weir"), "before its first point:\n" + progress);
    assertTrue(out.contains("each guard's server ran at 0.5x until the JIT compilers were quiet,"
        + " at most 2 s"), out);
    assertTrue(out.contains("GET /compute (capacity "), out);
    assertTrue(out.contains("the machine's cores"), "the hand-picked rule is stated:\n" + out);
    Document page = HtmlReportTest.parse(r.html());
    assertEquals("GET /compute", page.getElementsByTagName("h2").item(0).getTextContent());
  }

  @Test
  void aGivenComputeCapacityStillWarmsTheWorkClosedLoopBeforeTheFirstOverload() throws Exception {
    Settings s = Settings.parse(new String[] {"--quick", "--endpoints", "compute",
        "--guards", "weir", "--loads", "1.5", "--compute-rounds", "400000",
        "--compute-capacity", "200", "--baseline", "0", "--html", "none"});
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    OverloadExperiment.Result r = run(s, bytes, log);

    String progress = log.toString(StandardCharsets.UTF_8);
    assertTrue(progress.contains("warming GET /compute closed-loop, "
        + 2 * Runtime.getRuntime().availableProcessors() + " clients, no guard, for 2 s (its"
        + " capacity was given)"), progress);
    assertFalse(progress.contains("measuring the capacity"), progress);
    assertTrue(progress.indexOf("warming GET /compute") < progress.indexOf("running GET"),
        "before the first point:\n" + progress);
    OverloadExperiment.EndpointResult compute = r.endpoints().get(0);
    assertEquals(200, compute.capacity());
    assertTrue(compute.description().contains("was given (--compute-capacity)"),
        compute.description());
    // --quick probes 2 s, so the warm-up is 2 s too: counted in the estimate.
    assertEquals((1 * 1 + 0) * 3 + 2 + 1, OverloadExperiment.expectedSeconds(s));
  }

  @Test
  void atAGoalsLoadEveryGuardRunsAgainOnTheNextSeedAndTheGoalsPairTheRuns() throws Exception {
    Settings s = Settings.parse(new String[] {"--endpoints", "work",
        "--loads", "0.5,1.5", "--guards", "jetty-qos,weir", "--runs", "2", "--seconds", "1",
        "--warmup", "0", "--baseline", "0", "--html", "none", "--seed", "7"});
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    OverloadExperiment.EndpointResult r = run(s, bytes, log).endpoints().get(0);
    String out = bytes.toString(StandardCharsets.UTF_8);

    assertEquals(4, r.points().size(), "the table: both guards at both loads, once");
    assertEquals(List.of("QoSHandler (hand-picked 8)", "weir"),
        r.repeats().stream().map(Point::guard).toList(), "run 2: 1.5x only, guards in turn");
    assertTrue(r.repeats().stream().allMatch(p -> p.load() == 1.5), r.repeats().toString());
    assertTrue(log.toString(StandardCharsets.UTF_8).contains(
        "running GET /work, weir, run 2 of 2 at 1.5x"), log.toString(StandardCharsets.UTF_8));
    assertTrue(out.contains("At 1.5x every guard ran 2 times, the i-th run on seed 7 + i - 1"),
        out);
    assertTrue(out.contains("Every run at 1.5x (run 1 is the table's):"), out);
    assertTrue(out.lines().anyMatch(l -> l.startsWith("1.5x  weir ") && l.contains("total/s")),
        out);
    assertEquals(2, r.goals().size(), r.goals().toString());
    for (Goals.Goal g : r.goals()) {
      assertTrue(g.evidence().startsWith("means of 2 paired runs: weir "), g.toString());
    }
  }

  @Test
  void eachEndpointHasItsOwnTableAndGoalsJudgedOnItsOwnRuns() {
    List<Guard> guards = HtmlReportTest.guards("none", "qos", "weir");
    // At /work weir leads; at /compute qos leads. Same guards, same loads.
    OverloadExperiment.EndpointResult work = OverloadExperiment.EndpointResult.of(Endpoint.WORK,
        400, "work set-up", guards, List.of(
            point("none", 1.5, 30, 30, 900), point("qos", 1.5, 150, 100, 400),
            point("weir", 1.5, 190, 80, 80)), List.of(), point("none", 0.3, 60, 60, 60));
    OverloadExperiment.EndpointResult compute = OverloadExperiment.EndpointResult.of(
        Endpoint.COMPUTE, 350, "compute set-up", guards, List.of(
            point("none", 1.5, 10, 10, 990), point("qos", 1.5, 170, 120, 30),
            point("weir", 1.5, 160, 100, 40)), List.of(), point("none", 0.3, 5, 5, 10));

    assertTrue(work.goals().stream().allMatch(Goals.Goal::met), work.goals().toString());
    assertEquals(3, compute.goals().size(), compute.goals().toString());
    assertFalse(compute.goals().get(0).met(), "qos's 170 beats weir's 160 at /compute");
    assertFalse(compute.goals().get(1).met(), "and its total, 290 to 260");
    // Each endpoint's P99 goal has its own baseline: 2 x 10 ms at /compute, 2 x 60 ms at /work.
    assertFalse(compute.goals().get(2).met(), compute.goals().get(2).toString());
    assertTrue(compute.goals().get(2).evidence().contains("bound 20.0 ms"),
        compute.goals().get(2).evidence());
    assertTrue(work.goals().get(2).evidence().contains("bound 120.0 ms"),
        work.goals().get(2).evidence());

    String w = OverloadExperiment.report(work);
    String c = OverloadExperiment.report(compute);
    assertTrue(w.startsWith("GET /work (capacity 400 req/s)"), w);
    assertTrue(c.startsWith("GET /compute (capacity 350 req/s)"), c);
    assertTrue(c.contains("compute set-up") && !c.contains("work set-up"), c);
    assertTrue(c.contains("Goals at GET /compute") && c.contains("[NOT met] at 1.5x"), c);
    assertFalse(w.contains("NOT met"), w);
    assertEquals(4, w.lines().filter(l -> l.startsWith("1.5x ") || l.startsWith("0.3x ")).count(),
        "three guards and the baseline:\n" + w);
  }

  @Test
  void theQoSHandlerRunsAtJettysDefaultAndAtAHandPickedLimitPerEndpoint() throws Exception {
    List<Guard> compute = Guard.all(2, "the machine's cores");
    assertEquals(List.of("none", "jetty-qos-default", "jetty-qos"),
        compute.stream().map(Guard::name).toList().subList(0, 3));
    assertEquals("QoSHandler (hand-picked 2)", compute.get(2).label());
    assertTrue(compute.get(2).settings().contains("maxRequestCount = 2, the machine's cores"),
        compute.get(2).settings());
    assertEquals("QoSHandler (default 100)", compute.get(1).label());
    assertEquals(8, Endpoint.WORK.handPickedLimit(8, 2));
    assertEquals(2, Endpoint.COMPUTE.handPickedLimit(8, 2));
    // The label's 100 is what Jetty really picks when the limit is not set.
    AtomicReference<TierQoSHandler> qos = new AtomicReference<>();
    try (ExampleServer server = ExampleServer.start(
        Backends.of(new Downstream(1, Duration.ofMillis(1), 1)), null, h -> {
          qos.set(new TierQoSHandler(h, 0));
          return qos.get();
        })) {
      assertEquals(Guard.QOS_DEFAULT_LIMIT, qos.get().getMaxRequestCount());
      assertEquals(ExampleServer.THREADS / 2, Guard.QOS_DEFAULT_LIMIT);
    }
    assertThrows(IllegalArgumentException.class,
        () -> new TierQoSHandler(new org.eclipse.jetty.server.handler.DefaultHandler(), -1));
  }

  @Test
  void twoRoutesIsAFlag() {
    assertFalse(Settings.parse(new String[] {"--html", "none"}).twoRoutes);
    assertTrue(Settings.parse(new String[] {"--two-routes", "--html", "none"}).twoRoutes);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Settings.parse(new String[] {"--two-routes", "yes", "--html", "none"}));
    assertTrue(e.getMessage().contains("--two-routes"), e.getMessage());
  }

  @Test
  void theExpectedDurationIsStatedAndQuickIsAboutAMinute() {
    Settings full = Settings.parse(new String[] {"--html", "none"});
    assertEquals(List.of(Endpoint.WORK, Endpoint.COMPUTE), full.endpoints);
    int guards = full.guards.size();
    // 2 endpoints x (guards x (6 loads + 2 x 2 repeats) + 1 baseline) x (2 + 6 + 1) s, plus
    // each guard's warm-up (about 15 s at each endpoint) and the probe's 40 + 1 s: 25 minutes
    // with seven guards.
    assertEquals(30, full.settleSeconds);
    assertEquals(1.5, full.settleLoad());
    assertEquals(2 * (guards * (6 + 4) + 1) * 9 + 2 * guards * 15 + 41,
        OverloadExperiment.expectedSeconds(full));
    Settings quick = Settings.parse(new String[] {"--quick", "--html", "none"});
    // A second of warm-up, or the first point measures a cold JVM.
    assertEquals(1, quick.warmupSeconds);
    assertEquals(0, quick.settleSeconds, "no warm-up per guard in a smoke run");
    // 2 endpoints x (guards x 2 loads + 1) x (1 + 1 + 1) s, plus the probe's 2 + 1 s.
    assertEquals(2 * (guards * 2 + 1) * 3 + 3, OverloadExperiment.expectedSeconds(quick));
    assertEquals("18 minutes", OverloadExperiment.duration(2 * (6 * 10 + 1) * 9 + 6));
    assertEquals("93 s", OverloadExperiment.duration(2 * (7 * 2 + 1) * 3 + 3));
    Settings one = Settings.parse(new String[] {"--endpoints", "work", "--html",
        "none"});
    assertEquals((guards * (6 + 4) + 1) * 9 + guards * 15,
        OverloadExperiment.expectedSeconds(one));
    Settings bounded = Settings.parse(new String[] {"--endpoints", "work", "--loads", "0.5,2",
        "--settle", "4", "--html", "none"});
    assertEquals(2.0, bounded.settleLoad(), "the highest load, without 1.5x");
    assertEquals((guards * 2 + 1) * 9 + guards * 4, OverloadExperiment.expectedSeconds(bounded));
  }

  @Test
  void aTieInOneRunCountsAsBestAndTheTotalIsTheTotal() {
    // 10 successes in 6 s at both guards, split 4 + 6 and 5 + 5 between the tiers: 10/6 req/s
    // each. top + (all - top) is 1.6666666666666665 for the first, one rounding step below.
    Point weir = Point.of(Guard.WEIR, 1.5, TestReports.allOk(6, 1, 4, 5, 6));
    Point qos = Point.of("qos", 1.5, TestReports.allOk(6, 1, 5, 5, 5));
    assertEquals(10 / 6.0, weir.totalGoodput(), 0.0);
    assertEquals(10 / 6.0, qos.totalGoodput(), 0.0);
    assertEquals(4 / 6.0, weir.topGoodput(), 0.0);
    assertEquals(6 / 6.0, weir.otherGoodput(), 1e-12);
    List<Goals.Goal> goals = Goals.check(List.of(weir, qos), null);
    assertEquals(2, goals.size(), goals.toString());
    // Every request of both succeeded: a tie in both, and a tie counts as best.
    assertTrue(goals.get(0).met(), goals.get(0).toString());
    assertTrue(goals.get(1).met(), "a tie in total goodput: " + goals.get(1));
  }

  @Test
  void theHtmlPathIsCheckedBeforeTheRun(@TempDir Path dir) throws Exception {
    // A missing directory is created at once.
    Path report = dir.resolve("new/sub/report.html");
    assertEquals(report, Settings.parse(new String[] {"--html", report.toString()}).html);
    assertTrue(Files.isDirectory(report.getParent()));
    assertFalse(Files.exists(report), "nothing is left behind by the check");
    // A parent that is a file, and a directory as the report: fail now, naming --html.
    Path file = Files.writeString(dir.resolve("file"), "x");
    for (Path bad : List.of(file.resolve("report.html"), dir)) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Settings.parse(new String[] {"--html", bad.toString()}), bad.toString());
      assertTrue(e.getMessage().startsWith("--html "), e.getMessage());
    }
    // An existing report is kept until the run replaces it.
    Path old = Files.writeString(dir.resolve("old.html"), "old");
    Settings.parse(new String[] {"--html=" + old});
    assertEquals("old", Files.readString(old));
  }

  @Test
  void theBaselineIsALightLoadAndItsRateIsChecked() {
    assertEquals(0.3, Settings.parse(new String[] {"--html", "none"}).baselineLoad);
    assertEquals(0, Settings.parse(new String[] {"--baseline", "0", "--html=none"}).baselineLoad);
    assertEquals(0.9,
        Settings.parse(new String[] {"--baseline", "0.9", "--html=none"}).baselineLoad);
    for (String bad : List.of("1", "0.95", "100", "-0.1", "x")) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Settings.parse(new String[] {"--baseline", bad}), bad);
      assertTrue(e.getMessage().contains("--baseline"), e.getMessage());
    }
    // /work's capacity 100 000 req/s: 0.01x is 1000 req/s, but 0.5x is more than the client
    // sends.
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Settings.parse(new String[] {"--loads", "0.01", "--baseline", "0.5",
            "--service-ms", "1", "--connections", "100"}));
    assertTrue(e.getMessage().startsWith("--baseline 0.5 is 50000 req/s"), e.getMessage());
  }

  @Test
  void loadsTooHighForTheMeasuredCapacityFailBeforeAnyEndpointRuns() {
    // One hash round a request: /compute serves thousands a second, and 40x that is far more
    // than the client sends; /work, first, would be fine at 40x its 10 req/s.
    Settings s = Settings.parse(new String[] {"--quick", "--endpoints", "work,compute",
        "--guards", "none", "--loads", "40", "--compute-rounds", "1", "--baseline", "0",
        "--connections", "1", "--service-ms", "100", "--html", "none"});
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> run(s, new ByteArrayOutputStream(), log));
    assertTrue(e.getMessage().contains("(capacity measured)"), e.getMessage());
    String progress = log.toString(StandardCharsets.UTF_8);
    assertTrue(progress.contains("measuring the capacity"), progress);
    assertFalse(progress.contains("running"), "nothing ran:\n" + progress);
  }

  @Test
  void rejectsBadOptionsNamingThem() {
    String[][] bad = {
        {"--loads", "1,x"}, {"--loads", "1,1"}, {"--loads", "0"}, {"--seconds", "0"},
        {"--guards", "weir,nginx"}, {"--bogus", "1"}, {"--seconds"}, {"stray"},
        {"--loads", "100", "--service-ms", "1"}, {"--help=yes"}, {"--runs", "0"},
        {"--runs", "21"}, {"--endpoints", "work,disk"}, {"--endpoints", "work,work"},
        {"--quick=yes"}, {"--compute-rounds", "0"}, {"--compute-capacity", "0"},
        {"--loads", "10", "--compute-capacity", "5000"}};
    for (String[] args : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Settings.parse(args), String.join(" ", args));
      String option = args[0].startsWith("--") ? args[0].split("=")[0] : args[0];
      assertTrue(e.getMessage().contains(option),
          e.getMessage() + " names " + option);
    }
    assertNull(Settings.parse(new String[] {"--help"}));
    Settings s = Settings.parse(
        new String[] {"--guards", "weir,none", "--loads=2,0.5", "--html", "none"});
    assertEquals(List.of("weir", "none"), s.guards);
    assertEquals(List.of(2.0, 0.5), s.loads);
    assertNull(s.html);
    // --quick sets the defaults; what is given explicitly wins, in any order.
    Settings q = Settings.parse(new String[] {"--seconds", "2", "--quick", "--endpoints",
        "compute", "--html", "none"});
    assertEquals(2, q.seconds);
    assertEquals(List.of(1.5, 3.0), q.loads);
    assertEquals(1, q.runs);
    assertEquals(List.of(Endpoint.COMPUTE), q.endpoints);
  }
}
