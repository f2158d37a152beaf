package dev.weir.jetty;

import static dev.weir.jetty.Support.WAIT;
import static dev.weir.jetty.Support.app;
import static dev.weir.jetty.Support.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.Cohorts;
import dev.weir.LoadShedder;
import dev.weir.Permit;
import dev.weir.Priority;
import dev.weir.RejectReason;
import dev.weir.Snapshot;
import dev.weir.http.PriorityHeaders;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.util.Fields;
import org.junit.jupiter.api.Test;

/**
 * The core contract's table (core/src/test/resources/dev/weir/http/contract-cases.tsv) through
 * the handler on a real Jetty 12 server: headers sent over HTTP/1.1, answers and outcomes read back.
 */
class ContractCasesHttpTest {
  static final Path TABLE = Path.of("../core/src/test/resources/dev/weir/http/contract-cases.tsv");
  private static final Cohorts COHORTS = Cohorts.rotating(Duration.ofDays(3650));

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

  private static ContentResponse get(HttpClient http, TestServer s, String path,
      List<String> headers) throws Exception {
    org.eclipse.jetty.client.Request r = http.newRequest(s.uri(path))
        .timeout(WAIT.toSeconds(), TimeUnit.SECONDS);
    for (int i = 0; i < headers.size(); i += 2) {
      String name = headers.get(i);
      String value = headers.get(i + 1);
      r.headers(h -> h.add(name, value));
    }
    return r.send();
  }

  @Test
  void everyCaseThroughTheHandler() throws Exception {
    WeirHandler[] self = new WeirHandler[1];
    WeirHandler weir = WeirHandler.builder()
        .priorityHeaders(PriorityHeaders.builder().callerTier("checkout", 0)
            .callerTier("batch", 5).cohorts(COHORTS).build())
        .routeKey(r -> r.getHttpURI().getPath())
        .handler(app((req, res, cb) -> {
          Fields q = org.eclipse.jetty.server.Request.extractQueryParameters(req);
          switch (req.getHttpURI().getPath()) {
            case "/echo":
              Permit p = (Permit) req.getAttribute(WeirHandler.PERMIT_ATTRIBUTE);
              Content.Sink.write(res, true, String.valueOf(p.priority()), cb);
              return true;
            case "/answer":
              String reason = q.getValue("reason");
              if (reason.equals("DEADLINE")) {
                self[0].answerWriter().deadline(res, cb);
              } else {
                self[0].answerWriter().reject(res, RejectReason.valueOf(reason), cb);
              }
              return true;
            default:
              res.setStatus(Integer.parseInt(q.getValue("s")));
              cb.succeeded();
              return true;
          }
        })).build();
    self[0] = weir;
    HttpClient http = Support.Protocol.HTTP1.client();
    http.setFollowRedirects(false);
    http.setRequestBufferSize(256 * 1024); // the hostile 100 KB header cases
    try (TestServer s = TestServer.start(weir)) {
      int n = 0;
      for (String[] row : rows("priority")) {
        ContentResponse r = get(http, s, "/echo", headers(row[1]));
        assertEquals(200, r.getStatus(), row[1]);
        assertPriority(row, Integer.parseInt(r.getContentAsString()));
        n++;
      }
      assertTrue(n > 40, "cases run: " + n);

      for (String[] row : rows("answer")) {
        ContentResponse r = get(http, s, "/answer?reason=" + row[1], List.of());
        assertEquals(Integer.parseInt(row[2]), r.getStatus(), row[1]);
        assertEquals(row[3], r.getHeaders().get("X-Weir-Outcome"), row[1]);
        assertEquals(row[4], r.getHeaders().get("Retry-After"), row[1]);
        assertEquals("no-store", r.getHeaders().get("Cache-Control"), row[1]);
      }

      List<String[]> outcomes = rows("outcome");
      for (int i = 0; i < outcomes.size(); i++) {
        String[] row = outcomes.get(i);
        get(http, s, "/status?s=" + row[1], List.of("X-Weir-Tier", "2"));
        LoadShedder shedder = weir.shedders().get("GET /status");
        Snapshot.Counter counter = Snapshot.Counter.valueOf(
            row[2].equals("SUCCESS") ? "SUCCEEDED" : row[2].equals("ERROR") ? "FAILED" : "DROPPED");
        int expected = (int) outcomes.stream().limit(i).filter(x -> x[2].equals(row[2])).count()
            + 1;
        await(() -> shedder.count(counter, 2) == expected, WAIT,
            () -> "status " + row[1] + ": " + shedder.snapshot());
      }

      // Shutting down through the real path, not only the answer.
      weir.stop();
      ContentResponse r = get(http, s, "/echo", List.of());
      assertEquals(503, r.getStatus());
      assertEquals("shutting-down", r.getHeaders().get("X-Weir-Outcome"));
    } finally {
      http.stop();
    }
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
