package dev.weir.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.Cohorts;
import dev.weir.Outcome;
import dev.weir.Priority;
import dev.weir.RejectReason;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** contract-cases.tsv against the contract itself. */
class ContractCasesTest {
  static final Cohorts COHORTS = Cohorts.rotating(Duration.ofDays(3650));
  static final PriorityHeaders HEADERS = PriorityHeaders.builder().callerTier("checkout", 0)
      .callerTier("batch", 5).cohorts(COHORTS).build();
  /** Joins repeated headers with ",", as both adapters' lookups do; names in lower case. */
  static final HeaderLookup<Map<String, String>> MAP = (m, name) -> m.get(name);

  static Map<String, String> joined(List<Map.Entry<String, String>> headers) {
    Map<String, String> m = new TreeMap<>();
    for (Map.Entry<String, String> h : headers) {
      m.merge(h.getKey().toLowerCase(Locale.ROOT), h.getValue(), (a, b) -> a + "," + b);
    }
    return m;
  }

  @Test
  void priorities() {
    List<String[]> rows = ContractCases.rows("priority");
    assertTrue(rows.size() > 40, "cases read: " + rows.size());
    for (String[] row : rows) {
      Map<String, String> headers = joined(ContractCases.headers(row[1]));
      assertPriority(row, HEADERS.priority(headers, MAP));
    }
  }

  /** Checks a resolved priority against a row; shared in spirit with the adapters' runners. */
  static void assertPriority(String[] row, int p) {
    String what = row[1].length() > 80 ? row[1].substring(0, 80) + "..." : row[1];
    assertTrue(Priority.isValid(p), what);
    assertEquals(Integer.parseInt(row[2]), Priority.tier(p), "tier of " + what + " (" + row[4] + ")");
    if (row[3].startsWith("user:")) {
      int c = Priority.cohort(p);
      String key = row[3].substring(5);
      assertTrue(c == COHORTS.cohort(key) || c == COHORTS.cohort(key, System.currentTimeMillis()
          - 1000), "cohort of " + what);
    } else if (!row[3].equals("*")) {
      assertEquals(Integer.parseInt(row[3]), Priority.cohort(p), "cohort of " + what);
    }
  }

  @Test
  void answers() {
    List<String[]> rows = ContractCases.rows("answer");
    assertEquals(RejectReason.values().length + 1, rows.size());
    for (String[] row : rows) {
      HttpAnswer a = row[1].equals("DEADLINE") ? HttpAnswers.defaults().deadline()
          : HttpAnswers.defaults().rejected(RejectReason.valueOf(row[1]));
      assertEquals(Integer.parseInt(row[2]), a.status(), row[1]);
      assertEquals(row[3], a.outcome(), row[1]);
      assertEquals(row[4], a.retryAfter(), row[1]);
      assertEquals(row[3], a.headers().get(HttpAnswers.OUTCOME_HEADER));
      assertEquals(row[4], a.headers().get("Retry-After"));
      assertEquals("no-store", a.headers().get("Cache-Control"));
    }
  }

  @Test
  void outcomes() {
    List<String[]> rows = ContractCases.rows("outcome");
    assertTrue(rows.size() >= 8);
    for (String[] row : rows) {
      assertEquals(Outcome.valueOf(row[2]), HttpAnswers.outcomeOf(Integer.parseInt(row[1])),
          row[1]);
    }
  }

  @Test
  void retryAfterZeroOmitsTheHeaderAndFormatsDiffer() {
    HttpAnswers a = HttpAnswers.builder().retryAfter(Duration.ZERO).shedStatus(503)
        .format(RejectionFormat.JSON).build();
    HttpAnswer shed = a.rejected(RejectReason.SHED);
    assertNull(shed.retryAfter());
    assertEquals(503, shed.status());
    assertEquals("application/json", shed.contentType());
    assertEquals("{\"error\":\"overloaded\",\"reason\":\"SHED\",\"status\":503,"
        + "\"retryAfterSeconds\":0}", shed.body());
    HttpAnswer empty = HttpAnswers.builder().format(RejectionFormat.EMPTY).build().deadline();
    assertNull(empty.contentType());
    assertEquals(0, empty.contentLength());
    assertEquals("deadline", empty.outcome());
  }
}
