package dev.weir.examples.experiment;

import dev.weir.examples.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * Renders the experiment as one self-contained HTML page with a section per endpoint: inline SVG
 * line charts (goodput, top-tier goodput and top-tier P99 against offered load, one line per
 * guard), the goals, the table and each guard's settings. No script, no stylesheet or font from
 * elsewhere. The markup is well-formed XML, so that it can be checked by a parser.
 */
final class HtmlReport {
  // Okabe-Ito colours, distinguishable with the common colour-vision deficiencies.
  private static final String[] COLOURS =
      {"#7f7f7f", "#e69f00", "#56b4e9", "#009e73", "#d55e00", "#cc79a7", "#0072b2"};
  private static final int WIDTH = 640;
  private static final int HEIGHT = 300;
  private static final int LEFT = 60;
  private static final int RIGHT = 150;
  private static final int TOP = 30;
  private static final int BOTTOM = 45;

  private HtmlReport() {}

  /** A page of one untitled section; see {@link #section} for the parameters. */
  static String render(String title, String description, List<Guard> guards, List<Point> points,
      Point baseline, double capacity, double p99Bound, List<Goals.Goal> goals, String runs) {
    return page(title, "", List.of(section(null, description, guards, points, baseline, capacity,
        p99Bound, goals, runs)));
  }

  /**
   * The page: its heading, a paragraph of plain text (none if empty), then the sections, each
   * from {@link #section}.
   */
  static String page(String title, String description, List<String> sections) {
    StringBuilder h = new StringBuilder(16_384 * (1 + sections.size()));
    h.append("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n")
        .append("<meta charset=\"utf-8\"/>\n<title>").append(esc(title)).append("</title>\n")
        .append("<style>body{font-family:sans-serif;max-width:980px;margin:1em auto;color:#222}"
            + "table{border-collapse:collapse;font-size:12px}td,th{padding:2px 6px;"
            + "text-align:right;border-bottom:1px solid #ddd}td.l,th.l{text-align:left}"
            + "svg{display:block;margin:.5em 0}.met{color:#007a3d}.missed{color:#b00020}"
            + "</style>\n</head>\n<body>\n<h1>").append(esc(title)).append("</h1>\n");
    if (!description.isEmpty()) {
      h.append("<p>").append(esc(description)).append("</p>\n");
    }
    sections.forEach(h::append);
    return h.append("</body>\n</html>\n").toString();
  }

  /**
   * One endpoint's section.
   *
   * @param heading the section's heading, or null for none
   * @param description the set-up, one paragraph of plain text
   * @param guards the guards, in legend order
   * @param points every measured point
   * @param baseline the unloaded reference point, shown first in the table only; null for none
   * @param capacity the server's capacity in requests per second, drawn on the goodput chart
   * @param p99Bound the top tier's P99 goal in milliseconds, drawn on the P99 chart; NaN for none
   * @param goals the goals and whether they were met
   * @param runs every run at the goals' loads, as preformatted text; empty if there was one
   */
  static String section(String heading, String description, List<Guard> guards,
      List<Point> points, Point baseline, double capacity, double p99Bound, List<Goals.Goal> goals,
      String runs) {
    StringBuilder h = new StringBuilder(16_384);
    if (heading != null) {
      h.append("<h2>").append(esc(heading)).append("</h2>\n");
    }
    h.append("<p>").append(esc(description)).append("</p>\n");
    List<String> names = guards.stream().map(Guard::label).toList();
    int top = points.isEmpty() ? 1 : points.get(0).topTier();
    h.append(chart("Goodput (successful requests per second, all tiers)", "req/s", names, points,
        Point::totalGoodput, capacity, "capacity"));
    h.append(chart("Tier " + top + " goodput (successful tier-" + top + " requests per second)",
        "req/s", names, points, Point::topGoodput, Double.NaN, ""));
    h.append(chart("Tier " + top + " P99 latency of successes", "ms", names, points,
        Point::topP99Millis, p99Bound, "goal: 2x unloaded"));
    if (!goals.isEmpty()) {
      h.append("<h3>Goals</h3>\n<ul>\n");
      for (Goals.Goal g : goals) {
        h.append("<li><span class=\"").append(g.met() ? "met\">met" : "missed\">not met")
            .append("</span>: ").append(esc(g.goal())).append(" (").append(esc(g.evidence()))
            .append(")</li>\n");
      }
      h.append("</ul>\n");
    }
    if (!runs.isEmpty()) {
      h.append("<pre>").append(esc(runs)).append("</pre>\n");
    }
    h.append("<h3>Measurements</h3>\n<table>\n<tr><th>load</th><th class=\"l\">guard</th>"
        + "<th>offered/s</th><th>t").append(top).append(" ok/s</th><th>other ok/s</th>"
        + "<th>total ok/s</th><th>t").append(top).append(" success</th><th>200</th><th>429</th>"
        + "<th>503</th><th>timeout</th><th>other</th><th>t").append(top)
        .append(" p50 ms</th><th>t").append(top).append(" p99 ms</th></tr>\n");
    List<Point> rows = new ArrayList<>();
    if (baseline != null) {
      rows.add(baseline);
    }
    rows.addAll(points);
    for (Point p : rows) {
      h.append("<tr><td>").append(Goals.fmt(p.load())).append("x</td><td class=\"l\">")
          .append(esc(p.guard())).append(p == baseline ? " (baseline)" : "").append("</td><td>").append(num(p.offeredPerSecond(), 0))
          .append("</td><td>").append(num(p.topGoodput(), 0)).append("</td><td>")
          .append(num(p.otherGoodput(), 0)).append("</td><td>").append(num(p.totalGoodput(), 0))
          .append("</td><td>").append(num(100 * p.topSuccess(), 1)).append("%</td>");
      for (Status s : Status.values()) {
        h.append("<td>").append(num(100 * p.share(s), 1)).append("%</td>");
      }
      h.append("<td>").append(num(p.topP50Millis(), 1)).append("</td><td>")
          .append(num(p.topP99Millis(), 1)).append("</td></tr>\n");
    }
    h.append("</table>\n<h3>Guards</h3>\n<ul>\n");
    for (Guard g : guards) {
      h.append("<li><b>").append(esc(g.label())).append("</b>: ").append(esc(g.settings()))
          .append("</li>\n");
    }
    return h.append("</ul>\n").toString();
  }

  /**
   * One line chart; {@code reference}, unless NaN, is drawn as a dashed horizontal line labelled
   * {@code referenceLabel}.
   */
  private static String chart(String title, String unit, List<String> guards, List<Point> points,
      ToDoubleFunction<Point> y, double reference, String referenceLabel) {
    double xMax = 0;
    double yMax = Double.isNaN(reference) ? 0 : reference;
    for (Point p : points) {
      xMax = Math.max(xMax, p.load());
      double v = y.applyAsDouble(p);
      if (!Double.isNaN(v)) {
        yMax = Math.max(yMax, v);
      }
    }
    xMax = xMax > 0 ? xMax : 1;
    double yStep = niceStep(yMax > 0 ? yMax * 1.05 / 5 : 1);
    double yTop = Math.ceil(yMax * 1.05 / yStep) * yStep;
    yTop = yTop > 0 ? yTop : yStep;
    Scale s = new Scale(xMax, yTop);
    StringBuilder c = new StringBuilder();
    c.append("<h3>").append(esc(title)).append("</h3>\n<svg xmlns=\"http://www.w3.org/2000/svg\""
        + " width=\"").append(WIDTH).append("\" height=\"").append(HEIGHT)
        .append("\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(HEIGHT)
        .append("\" role=\"img\" aria-label=\"").append(esc(title)).append("\">\n");
    // Axes, grid and ticks.
    c.append("<g class=\"axes\" font-size=\"11\" fill=\"#444\">\n");
    for (double v = 0; v <= yTop + yStep / 2; v += yStep) {
      c.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\""
          + " stroke=\"#e5e5e5\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n",
          LEFT, s.y(v), WIDTH - RIGHT, s.y(v), LEFT - 6, s.y(v) + 4, num(v, yStep < 1 ? 1 : 0)));
    }
    List<Double> loads = new ArrayList<>();
    points.stream().map(Point::load).distinct().sorted().forEach(loads::add);
    for (double load : loads) {
      c.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">"
          + "%sx</text>%n", s.x(load), HEIGHT - BOTTOM + 16, Goals.fmt(load)));
    }
    c.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\""
        + " stroke=\"#444\"/><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>%n",
        LEFT, TOP, LEFT, HEIGHT - BOTTOM, LEFT, HEIGHT - BOTTOM, WIDTH - RIGHT, HEIGHT - BOTTOM));
    c.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">offered"
        + " load (x capacity)</text><text x=\"%d\" y=\"%d\">%s</text>%n",
        (LEFT + WIDTH - RIGHT) / 2, HEIGHT - 8, 4, TOP - 12, esc(unit)));
    if (!Double.isNaN(reference)) {
      c.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\""
          + " stroke=\"#444\" stroke-dasharray=\"4 4\"/><text x=\"%d\" y=\"%.1f\""
          + " text-anchor=\"end\">%s</text>%n", LEFT, s.y(reference), WIDTH - RIGHT,
          s.y(reference), WIDTH - RIGHT - 4, s.y(reference) - 4, esc(referenceLabel)));
    }
    c.append("</g>\n");
    for (int i = 0; i < guards.size(); i++) {
      String guard = guards.get(i);
      String colour = COLOURS[i % COLOURS.length];
      StringBuilder line = new StringBuilder();
      StringBuilder dots = new StringBuilder();
      points.stream().filter(p -> p.guard().equals(guard))
          .sorted((a, b) -> Double.compare(a.load(), b.load())).forEach(p -> {
            double v = y.applyAsDouble(p);
            if (Double.isNaN(v)) {
              return;
            }
            line.append(String.format(Locale.ROOT, "%.1f,%.1f ", s.x(p.load()), s.y(v)));
            dots.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\">"
                + "<title>%s at %sx: %s %s</title></circle>", s.x(p.load()), s.y(v),
                esc(guard), Goals.fmt(p.load()), num(v, 1), esc(unit)));
          });
      c.append("<g class=\"series\" data-guard=\"").append(esc(guard)).append("\" stroke=\"")
          .append(colour).append("\" fill=\"").append(colour).append("\">");
      if (line.length() > 0) {
        c.append("<polyline fill=\"none\" stroke-width=\"2\" points=\"")
            .append(line.toString().trim()).append("\"/>");
      }
      c.append(dots).append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" stroke=\"none\""
          + " font-size=\"12\">%s</text>", WIDTH - RIGHT + 12, TOP + 16 * i + 4, esc(guard)))
          .append("</g>\n");
    }
    return c.append("</svg>\n").toString();
  }

  /** The smallest 1, 2 or 5 times a power of ten that is at least {@code raw}. */
  static double niceStep(double raw) {
    double power = Math.pow(10, Math.floor(Math.log10(raw)));
    for (double m : new double[] {1, 2, 5, 10}) {
      if (m * power >= raw * (1 - 1e-9)) {
        return m * power;
      }
    }
    return 10 * power;
  }

  private static String num(double v, int decimals) {
    return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%." + decimals + "f", v);
  }

  /** Escapes text for XML content and attribute values. */
  static String esc(String text) {
    StringBuilder sb = new StringBuilder(text.length());
    for (int i = 0; i < text.length(); i++) {
      char ch = text.charAt(i);
      switch (ch) {
        case '&' -> sb.append("&amp;");
        case '<' -> sb.append("&lt;");
        case '>' -> sb.append("&gt;");
        case '"' -> sb.append("&quot;");
        default -> sb.append(ch);
      }
    }
    return sb.toString();
  }

  /** Maps data to the plot area. */
  private static final class Scale {
    private final double xMax;
    private final double yMax;

    Scale(double xMax, double yMax) {
      this.xMax = xMax;
      this.yMax = yMax;
    }

    double x(double load) {
      return LEFT + (WIDTH - LEFT - RIGHT) * load / xMax;
    }

    double y(double v) {
      return HEIGHT - BOTTOM - (HEIGHT - TOP - BOTTOM) * Math.min(v, yMax) / yMax;
    }
  }
}
