package dev.weir.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.util.ajax.JSON;
import org.junit.jupiter.api.Test;

/**
 * Every series {@code dashboards/weir.json} queries exists in a real Prometheus scrape: the
 * example server with the filter bound to a {@code PrometheusMeterRegistry} ({@link
 * Observability}) serves some requests, {@code /metrics} is fetched over HTTP, and for each PromQL
 * expression of the dashboard (panel targets and template variables) each metric name must appear
 * with every label the expression selects on, groups by or names in its legend, and every literal
 * label value it matches. Renaming a meter, a tag or an outcome fails it.
 */
class DashboardMetricsTest {
  private static final Pattern METRIC = Pattern.compile("\\b(weir_[a-z0-9_]+)");
  private static final Pattern SELECTOR = Pattern.compile("(weir_[a-z0-9_]+)\\s*\\{([^}]*)}");
  private static final Pattern MATCHER =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
  private static final Pattern GROUPING =
      Pattern.compile("\\b(?:by|without|on|ignoring)\\s*\\(([^)]*)\\)");
  private static final Pattern LEGEND = Pattern.compile("\\{\\{\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*}}");
  private static final Pattern LABEL_VALUES =
      Pattern.compile("label_values\\(\\s*(weir_[a-z0-9_]+)\\s*,\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*\\)");
  private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})?\\s");
  private static final Pattern SCRAPED_LABEL =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  /** One query of the dashboard and what it needs of the scrape. */
  private record Query(String where, String expr, Set<String> metrics, Set<String> labels,
      Map<String, Set<String>> values) {}

  @Test
  void everyQueriedSeriesExistsInARealScrape() throws Exception {
    List<Query> queries = queries(Path.of(System.getProperty("basedir", "."))
        .resolve("../dashboards/weir.json"));
    assertTrue(queries.size() >= 10, "found only " + queries.size() + " queries");

    Map<String, List<Map<String, String>>> scraped;
    try (ExampleServer server = ExampleServer.start(new Downstream(2, Duration.ofMillis(1), 3),
        Observability.filter())) {
      HttpClient http = HttpClient.newHttpClient();
      for (int tier = 0; tier < 6; tier++) {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(server.workUri())
            .header("X-Weir-Tier", Integer.toString(tier)).build(),
            HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
      }
      HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(
          server.workUri().resolve(Observability.METRICS_PATH)).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(200, metrics.statusCode());
      assertTrue(metrics.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"));
      scraped = parse(metrics.body());
    }
    // The requests went through: the scrape is of live meters, not an empty registry.
    assertTrue(scraped.getOrDefault("weir_requests_total", List.of()).stream().anyMatch(
        s -> "GET /work".equals(s.get("shedder")) && "succeeded".equals(s.get("outcome"))),
        scraped.keySet().toString());

    List<String> missing = new ArrayList<>();
    for (Query q : queries) {
      for (String metric : q.metrics()) {
        List<Map<String, String>> series = scraped.getOrDefault(metric, List.of());
        if (series.isEmpty()) {
          missing.add(q.where() + ": no metric " + metric + " in `" + q.expr() + "`");
          continue;
        }
        for (String label : q.labels()) {
          if (series.stream().noneMatch(s -> s.containsKey(label))) {
            missing.add(q.where() + ": " + metric + " has no label " + label);
          }
        }
      }
      q.values().forEach((key, values) -> {
        String metric = key.substring(0, key.indexOf(' '));
        String label = key.substring(key.indexOf(' ') + 1);
        for (String v : values) {
          if (scraped.getOrDefault(metric, List.of()).stream()
              .noneMatch(s -> v.equals(s.get(label)))) {
            missing.add(q.where() + ": no " + metric + "{" + label + "=\"" + v + "\"}");
          }
        }
      });
    }
    assertEquals(List.of(), missing, "dashboard queries the scrape cannot answer");
  }

  /** Every PromQL expression of the dashboard, with what it needs. */
  private static List<Query> queries(Path dashboard) throws Exception {
    Map<?, ?> root = (Map<?, ?>) new JSON().fromJSON(Files.readString(dashboard));
    List<Query> out = new ArrayList<>();
    for (Object p : (Object[]) root.get("panels")) {
      Map<?, ?> panel = (Map<?, ?>) p;
      for (Object t : (Object[]) panel.get("targets")) {
        Map<?, ?> target = (Map<?, ?>) t;
        out.add(query("panel '" + panel.get("title") + "' " + target.get("refId"),
            (String) target.get("expr"), (String) target.get("legendFormat")));
      }
    }
    for (Object v : (Object[]) ((Map<?, ?>) root.get("templating")).get("list")) {
      Map<?, ?> variable = (Map<?, ?>) v;
      Object q = variable.get("query");
      String text = q instanceof Map ? (String) ((Map<?, ?>) q).get("query") : (String) q;
      Matcher m = LABEL_VALUES.matcher(text == null ? "" : text);
      if (m.find()) {
        out.add(new Query("variable " + variable.get("name"), text, Set.of(m.group(1)),
            Set.of(m.group(2)), Map.of()));
      }
    }
    return out;
  }

  private static Query query(String where, String expr, String legend) {
    Set<String> metrics = new LinkedHashSet<>();
    Set<String> labels = new LinkedHashSet<>();
    Map<String, Set<String>> values = new TreeMap<>();
    Matcher m = METRIC.matcher(expr);
    while (m.find()) {
      metrics.add(m.group(1));
    }
    Matcher s = SELECTOR.matcher(expr);
    while (s.find()) {
      Matcher lm = MATCHER.matcher(s.group(2));
      while (lm.find()) {
        labels.add(lm.group(1));
        String value = lm.group(3);
        boolean positive = lm.group(2).equals("=") || lm.group(2).equals("=~");
        if (positive && !value.contains("$") && value.matches("[a-zA-Z0-9_ /|]+")) {
          for (String alternative : value.split("\\|")) {
            values.computeIfAbsent(s.group(1) + " " + lm.group(1), k -> new LinkedHashSet<>())
                .add(alternative);
          }
        }
      }
    }
    Matcher g = GROUPING.matcher(expr);
    while (g.find()) {
      for (String label : g.group(1).split(",")) {
        if (!label.isBlank()) {
          labels.add(label.trim());
        }
      }
    }
    Matcher l = LEGEND.matcher(legend == null ? "" : legend);
    while (l.find()) {
      labels.add(l.group(1));
    }
    assertTrue(!metrics.isEmpty(), where + ": no weir metric in `" + expr + "`");
    return new Query(where, expr, metrics, labels, values);
  }

  /** The text exposition format: metric name to the label sets of its samples. */
  private static Map<String, List<Map<String, String>>> parse(String scrape) {
    Map<String, List<Map<String, String>>> out = new HashMap<>();
    for (String line : scrape.split("\n")) {
      Matcher m = SAMPLE.matcher(line);
      if (line.startsWith("#") || !m.find()) {
        continue;
      }
      Map<String, String> labels = new HashMap<>();
      if (m.group(3) != null) {
        Matcher lm = SCRAPED_LABEL.matcher(m.group(3));
        while (lm.find()) {
          labels.put(lm.group(1), lm.group(2));
        }
      }
      out.computeIfAbsent(m.group(1), k -> new ArrayList<>()).add(labels);
    }
    return out;
  }
}
