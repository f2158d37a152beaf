package dev.weir.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.LoadShedder;
import dev.weir.Outcome;
import dev.weir.Permit;
import dev.weir.Priority;
import dev.weir.VirtualTime;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StatusPageTest {

  @Test
  void theViewIsChosenByTheQuery() {
    assertTrue(StatusPage.wantsHtml("view=html"));
    assertTrue(StatusPage.wantsHtml("a=1&view=HTML"));
    assertTrue(StatusPage.wantsHtml("view=json&view=html&x"));
    assertFalse(StatusPage.wantsHtml(null));
    assertFalse(StatusPage.wantsHtml(""));
    assertFalse(StatusPage.wantsHtml("&"));
    assertFalse(StatusPage.wantsHtml("view=json"));
    assertFalse(StatusPage.wantsHtml("view=htmlx"));
    assertFalse(StatusPage.wantsHtml("aview=html"));
    assertFalse(StatusPage.wantsHtml("view"));
    assertFalse(StatusPage.wantsHtml("view=htm"));
  }

  @Test
  void thePageIsSelfContained() {
    String page = new String(StatusPage.html(), StandardCharsets.UTF_8);
    assertTrue(page.startsWith("<!DOCTYPE html>"), page.substring(0, 40));
    assertTrue(page.contains("searchParams.set('view', 'json')"), "fetches its own JSON");
    // Nothing from elsewhere: no script src, stylesheet or absolute URL; the icon is inline.
    assertFalse(page.contains("src="), "an external resource");
    assertFalse(page.contains("stylesheet"), "an external resource");
    assertTrue(page.contains("<link rel=\"icon\" href=\"data:,\">"), "no favicon request");
    assertFalse(page.contains("http://") || page.contains("https://"), "an absolute URL");
    byte[] a = StatusPage.html();
    a[0] = 0;
    assertEquals('<', StatusPage.html()[0], "each caller gets its own copy");
  }

  @Test
  void theJsonCarriesGaugesCountersAndQueueWait() throws Exception {
    VirtualTime time = new VirtualTime();
    try (LoadShedder s = LoadShedder.builder().name("a").timer(time).build()) {
      Permit p = s.acquire(Priority.of(1, 0));
      p.release(Outcome.SUCCESS);
      Map<String, LoadShedder> all = new LinkedHashMap<>();
      all.put("GET /a\"\\\n", s);
      String json = StatusPage.json(all, 1234L);
      assertTrue(json.startsWith("{\"shedders\":{\"GET /a\\\"\\\\\\u000a\":{\"limit\":"), json);
      assertTrue(json.contains(",\"inflight\":0,\"queued\":0,\"cutoff\":768,"
          + "\"rejectionRatio\":0.0000,\"overloaded\":false,"), json);
      assertTrue(json.contains("\"admitted\":[0,1,0,0,0,0],\"shed\":[0,0,0,0,0,0],"), json);
      assertTrue(json.contains("\"succeeded\":[0,1,0,0,0,0],"), json);
      assertTrue(json.contains("\"reclaimed\":[0,0,0,0,0,0],\"queueWaitNanos\":[0,0,0,0,0,0]}"),
          json);
      assertTrue(json.endsWith("}},\"time\":1234}"), json);
      assertFalse(json.contains("concurrencyCap"), "uncapped: " + json);
      s.capConcurrency(185);
      assertTrue(StatusPage.json(all, 1234L).contains("\"overloaded\":false,\"concurrencyCap\":185,"));
      assertEquals("{\"shedders\":{},\"time\":5}", StatusPage.json(Map.of(), 5));
    }
  }
}
