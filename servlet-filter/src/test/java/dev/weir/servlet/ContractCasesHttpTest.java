package dev.weir.servlet;

import static dev.weir.servlet.Support.await;
import static dev.weir.servlet.Support.servlet;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.Cohorts;
import dev.weir.LoadShedder;
import dev.weir.Priority;
import dev.weir.RejectReason;
import dev.weir.Snapshot;
import dev.weir.http.HttpAnswer;
import dev.weir.http.PriorityHeaders;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The core contract's table (core/src/test/resources/dev/weir/http/contract-cases.tsv) through
 * the filter on a real Jetty 12 server: headers sent over HTTP/1.1, answers and outcomes read back.
 */
class ContractCasesHttpTest {
  static final Path TABLE = Path.of("../core/src/test/resources/dev/weir/http/contract-cases.tsv");
  private static final Cohorts COHORTS = Cohorts.rotating(Duration.ofDays(3650));
  private static final Duration TIMEOUT = Duration.ofSeconds(20);

  static List<String[]> rows(String kind) throws IOException {
    List<String[]> out = new ArrayList<>();
    for (String line : Files.readAllLines(TABLE, StandardCharsets.UTF_8)) {
      if (line.startsWith(kind + "\t")) {
        out.add(line.split("\t", -1));
      }
    }
    return out;
  }

  /** Name, value, name, value...; {N*text} expanded; '-' for none. */
  static List<String> headers(String cell) {
    List<String> out = new ArrayList<>();
    if (!cell.equals("-")) {
      for (String pair : cell.split(" \\| ")) {
        int colon = pair.indexOf(':');
        out.add(pair.substring(0, colon).trim());
        out.add(expand(pair.substring(colon + 1)).trim());
      }
    }
    return out;
  }

  static String expand(String s) {
    StringBuilder b = new StringBuilder();
    int i = 0;
    for (int open; (open = s.indexOf('{', i)) >= 0; ) {
      int star = s.indexOf('*', open);
      int close = s.indexOf('}', star);
      b.append(s, i, open).append(s.substring(star + 1, close)
          .repeat(Integer.parseInt(s.substring(open + 1, star))));
      i = close + 1;
    }
    return b.append(s.substring(i)).toString();
  }

  private static HttpResponse<String> get(HttpClient http, TestServer s, String path,
      List<String> headers) throws Exception {
    HttpRequest.Builder r = HttpRequest.newBuilder(s.uri(path)).timeout(TIMEOUT);
    for (int i = 0; i < headers.size(); i += 2) {
      r.header(headers.get(i), headers.get(i + 1));
    }
    return http.send(r.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void everyCaseThroughTheFilter() throws Exception {
    WeirFilter filter = WeirFilter.builder().priorityHeaders(PriorityHeaders.builder()
        .callerTier("checkout", 0).callerTier("batch", 5).cohorts(COHORTS).build()).build();
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    try (TestServer s = TestServer.with(filter)
        .servlet("/echo", servlet((req, res) -> res.getWriter().print(
            req.getAttribute(WeirFilter.PRIORITY_ATTRIBUTE))))
        .servlet("/answer", servlet((req, res) -> {
          String reason = req.getParameter("reason");
          HttpAnswer a = reason.equals("DEADLINE") ? filter.answers().deadline()
              : filter.answers().rejected(RejectReason.valueOf(reason));
          WeirFilter.answer(res, a, reason.equals("DEADLINE"));
        }))
        .servlet("/status", servlet((req, res) ->
            res.setStatus(Integer.parseInt(req.getParameter("s")))))
        .start()) {
      int n = 0;
      for (String[] row : rows("priority")) {
        HttpResponse<String> r = get(http, s, "/echo", headers(row[1]));
        assertEquals(200, r.statusCode(), row[1]);
        assertPriority(row, Integer.parseInt(r.body()));
        n++;
      }
      assertTrue(n > 40, "cases run: " + n);

      for (String[] row : rows("answer")) {
        HttpResponse<String> r = get(http, s, "/answer?reason=" + row[1], List.of());
        assertEquals(Integer.parseInt(row[2]), r.statusCode(), row[1]);
        assertEquals(row[3], r.headers().firstValue("X-Weir-Outcome").orElse(null), row[1]);
        assertEquals(row[4], r.headers().firstValue("Retry-After").orElse(null), row[1]);
        assertEquals("no-store", r.headers().firstValue("Cache-Control").orElse(null), row[1]);
      }

      for (String[] row : rows("outcome")) {
        get(http, s, "/status?s=" + row[1], List.of("X-Weir-Tier", "2"));
        LoadShedder shedder = filter.shedders().get("GET /status");
        Snapshot.Counter counter = Snapshot.Counter.valueOf(
            row[2].equals("SUCCESS") ? "SUCCEEDED" : row[2].equals("ERROR") ? "FAILED" : "DROPPED");
        int expected = (int) rows("outcome").stream().limit(rowIndex(row)).filter(
            x -> x[2].equals(row[2])).count() + 1;
        await(() -> shedder.count(counter, 2) == expected, TIMEOUT,
            () -> "status " + row[1] + ": " + shedder.snapshot());
      }
    }
    // Shutting down through the real path, not only the answer.
    try (TestServer s = TestServer.with(filter).servlet("/echo", servlet((req, res) -> { }))
        .start()) {
      filter.destroy();
      HttpResponse<String> r = get(http, s, "/echo", List.of());
      assertEquals(503, r.statusCode());
      assertEquals("shutting-down", r.headers().firstValue("X-Weir-Outcome").orElse(null));
    }
  }

  private static int rowIndex(String[] row) throws IOException {
    List<String[]> all = rows("outcome");
    for (int i = 0; i < all.size(); i++) {
      if (all.get(i)[1].equals(row[1])) {
        return i;
      }
    }
    throw new AssertionError(row[1]);
  }

  static void assertPriority(String[] row, int p) {
    String what = row[1].length() > 80 ? row[1].substring(0, 80) + "..." : row[1];
    assertTrue(Priority.isValid(p), what);
    assertEquals(Integer.parseInt(row[2]), Priority.tier(p), "tier of " + what + " (" + row[4] + ")");
    if (row[3].startsWith("user:")) {
      String key = row[3].substring(5);
      int c = Priority.cohort(p);
      assertTrue(c == COHORTS.cohort(key)
          || c == COHORTS.cohort(key, System.currentTimeMillis() - 60_000), "cohort of " + what);
    } else if (!row[3].equals("*")) {
      assertEquals(Integer.parseInt(row[3]), Priority.cohort(p), "cohort of " + what);
    }
  }
}
