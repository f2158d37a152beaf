package dev.weir.examples.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

class HtmlReportTest {
  private static final String SVG = "http://www.w3.org/2000/svg";

  static Point point(String guard, double load, double top, double other, double p99) {
    // Shares of OK, 429, 503, timeout, other.
    return new Point(guard, load, 400 * load, 1, top, top + other, top / (200 * load), p99 / 2,
        p99, new double[] {0.5, 0.5, 0, 0, 0});
  }

  static List<Guard> guards(String... names) {
    List<Guard> guards = new ArrayList<>();
    for (String name : names) {
      guards.add(new Guard(name, "settings of " + name, d -> {
        throw new AssertionError("not started");
      }));
    }
    return guards;
  }

  static Document parse(String html) throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setNamespaceAware(true);
    f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", false);
    return f.newDocumentBuilder()
        .parse(new ByteArrayInputStream(html.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void rendersAWellFormedPageWithOneSeriesPerGuardInEachChart() throws Exception {
    // A name with markup in it must be escaped, or the page would not parse.
    List<Guard> guards = guards("none", "q<&>\"", "weir");
    List<Point> points = new ArrayList<>();
    for (double load : new double[] {0.5, 3}) {
      points.add(point("none", load, 30, 30, 900));
      points.add(point("q<&>\"", load, 150, 0, 400));
      points.add(point("weir", load, 190, 10, Double.NaN)); // no success: no latency
    }
    String html = HtmlReport.render("T & T", "set-up <here>", guards, points,
        point("none", 0.3, 60, 60, 60), 400, 120, Goals.check(points, null), "every run <here>");

    Document doc = parse(html);
    NodeList svgs = doc.getElementsByTagNameNS(SVG, "svg");
    assertEquals(3, svgs.getLength(), "goodput, top-tier goodput and top-tier P99");
    for (int c = 0; c < svgs.getLength(); c++) {
      List<String> series = new ArrayList<>();
      NodeList groups = ((Element) svgs.item(c)).getElementsByTagNameNS(SVG, "g");
      for (int i = 0; i < groups.getLength(); i++) {
        Element g = (Element) groups.item(i);
        if (g.getAttribute("class").equals("series")) {
          series.add(g.getAttribute("data-guard"));
          int polylines = g.getElementsByTagNameNS(SVG, "polyline").getLength();
          int dots = g.getElementsByTagNameNS(SVG, "circle").getLength();
          boolean noLatency = c == 2 && g.getAttribute("data-guard").equals("weir");
          assertEquals(noLatency ? 0 : 1, polylines, "chart " + c + " " + series);
          assertEquals(noLatency ? 0 : 2, dots, "chart " + c + " " + series);
        }
      }
      assertEquals(List.of("none", "q<&>\"", "weir"), series, "chart " + c);
    }
    assertEquals("T & T", doc.getElementsByTagName("title").item(0).getTextContent());
    // One table row per point, plus the header and the baseline.
    assertEquals(points.size() + 2, doc.getElementsByTagName("tr").getLength());
    assertTrue(html.contains("none (baseline)"), "the baseline is in the table");
    assertTrue(html.contains("<pre>every run &lt;here&gt;</pre>"), "the runs, escaped");
    // Self-contained: no script and nothing fetched from elsewhere.
    assertFalse(html.contains("<script"), "no script");
    assertFalse(html.replace("xmlns=\"http://www.w3.org/1999/xhtml\"", "")
        .replace("xmlns=\"http://www.w3.org/2000/svg\"", "").contains("://"), "no URL");
  }

  @Test
  void niceStepsAreOneTwoOrFiveTimesAPowerOfTen() {
    assertEquals(1, HtmlReport.niceStep(0.7), 1e-9);
    assertEquals(2, HtmlReport.niceStep(1.5), 1e-9);
    assertEquals(50, HtmlReport.niceStep(41), 1e-9);
    assertEquals(100, HtmlReport.niceStep(100), 1e-9);
    assertEquals(200, HtmlReport.niceStep(100.5), 1e-9);
  }

  @Test
  void goalsCompareWeirWithTheBestOtherGuard() {
    List<Point> points = List.of(
        point("none", 1.5, 30, 30, 900), point("qos", 1.5, 150, 100, 400),
        point("weir", 1.5, 190, 10, 80),
        point("none", 3, 20, 20, 950), point("qos", 3, 200, 100, 300),
        point("weir", 3, 199, 1, 130));
    Point baseline = point("none", 0.3, 60, 60, 60);
    List<Goals.Goal> goals = Goals.check(points, baseline);
    assertEquals(5, goals.size(), goals.toString());
    assertTrue(goals.get(0).met(), goals.get(0).toString()); // 1.5x top tier: 190 > 150
    assertFalse(goals.get(1).met(), goals.get(1).toString()); // 1.5x total: 200 < 250
    assertFalse(goals.get(2).met(), goals.get(2).toString()); // 3x top tier: 199 < 200
    assertTrue(goals.get(3).evidence().contains("best other qos 300/s"), goals.get(3).evidence());
    // P99 bound is 120 ms; 130 ms at 3x is over it.
    assertFalse(goals.get(4).met(), goals.get(4).toString());
    assertTrue(goals.get(4).evidence().contains("3x: 130 ms"), goals.get(4).evidence());
    assertTrue(Goals.check(points.subList(0, 3), point("none", 0.3, 60, 60, 100)).get(2).met());
  }

  /** Three paired runs at 3x: weir's total goodput in each, and another guard's. */
  private static List<Point> threeRuns(double[] weir, double[] other) {
    List<Point> points = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      points.add(point("weir", 3, 190, weir[i] - 190, 80));
      points.add(point("gradient", 3, 100, other[i] - 100, 300));
    }
    return points;
  }

  @Test
  void withRepeatedRunsAGuardIsBetterOnlyIfItsLeadStandsOutOfTheNoise() {
    // A lead of 1 req/s in every run, on seeds that move both guards together by 10: small, but
    // the same every time, so measurably better.
    Goals.Goal steady = Goals.check(threeRuns(new double[] {380, 390, 370},
        new double[] {381, 391, 371}), null).get(1);
    assertFalse(steady.met(), steady.toString());
    assertTrue(steady.evidence().contains("means of 3 paired runs: weir 380.0/s (380, 390, 370),"
        + " gradient 381.0/s (381, 391, 371); its lead over weir +1.0/s, standard error 0.0/s:"
        + " measurably better"), steady.evidence());
    // A larger mean lead (2) that changes sign from run to run (+6, -3, +3): not measurably
    // better, although a plain comparison of the means would call it the best.
    Goals.Goal noisy = Goals.check(threeRuns(new double[] {380, 390, 370},
        new double[] {386, 387, 373}), null).get(1);
    assertTrue(noisy.met(), noisy.toString());
    assertTrue(noisy.evidence().contains("standard error 2.6/s: not measurably better"),
        noisy.evidence());
    // Weir ahead in every run.
    assertTrue(Goals.check(threeRuns(new double[] {380, 390, 370},
        new double[] {370, 385, 369}), null).get(1).met());
  }

  @Test
  void theP99GoalHoldsInEveryRunAndRunsMustPairUp() {
    List<Point> points = new ArrayList<>(threeRuns(new double[] {380, 390, 370},
        new double[] {370, 385, 369}));
    Point baseline = point("none", 0.3, 60, 60, 60);
    assertTrue(Goals.check(points, baseline).get(2).met(), "80 ms in every run, bound 120");
    points.set(4, point("weir", 3, 190, 200, 130)); // the third weir run, over the bound
    Goals.Goal p99 = Goals.check(points, baseline).get(2);
    assertFalse(p99.met(), p99.toString());
    assertTrue(p99.evidence().contains("3x: 130 ms"), p99.evidence());

    points.remove(5); // gradient's third run
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Goals.check(points, baseline));
    assertTrue(e.getMessage().contains("gradient has 2 runs and weir 3"), e.getMessage());
  }
}
