package dev.weir.servlet;

import static dev.weir.servlet.Support.assertDrained;
import static org.junit.jupiter.api.Assertions.assertEquals;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bounded mode against plain mode, on the same application, byte for byte on the wire (raw
 * HTTP/1.1, Date removed, chunking decoded, trailers kept), plus what the application observes.
 */
class BoundedParityHttpTest {
  static final int CAP = 1000;

  interface App {
    void handle(List<String> seen, HttpServletRequest req, HttpServletResponse res)
        throws Exception;
  }

  record Case(String method, boolean doGet, App app) {}

  static final Map<String, Case> CASES = new LinkedHashMap<>();
  static final Map<String, List<String>> SEEN = new ConcurrentHashMap<>();
  static WeirFilter plainFilter;
  static WeirFilter boundedFilter;
  static TestServer plain;
  static TestServer bounded;

  static void add(String name, App app) {
    CASES.put(name, new Case("GET", false, app));
  }

  static byte[] bytes(int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) ('a' + i % 26);
    }
    return b;
  }

  static {
    // ---- resetBuffer / reset after writing
    add("writerResetBuffer", (seen, req, res) -> {
      res.getWriter().print("junk");
      res.resetBuffer();
      res.getWriter().print("good");
    });
    add("writerReset", (seen, req, res) -> {
      res.setHeader("X-Gone", "1");
      res.getWriter().print("junk");
      res.reset();
      res.getWriter().print("good");
    });
    add("streamResetBuffer", (seen, req, res) -> {
      res.getOutputStream().write("junk".getBytes(StandardCharsets.US_ASCII));
      res.resetBuffer();
      res.getOutputStream().write("good".getBytes(StandardCharsets.US_ASCII));
    });
    add("resetClearsLocale", (seen, req, res) -> {
      res.setLocale(Locale.FRANCE);
      res.reset();
      res.getOutputStream().write("x".getBytes(StandardCharsets.US_ASCII));
    });
    // ---- flushBuffer, isCommitted
    add("flushBufferCommits", (seen, req, res) -> {
      res.getWriter().print("a");
      res.flushBuffer();
      seen.add("committed=" + res.isCommitted());
      res.setStatus(500);
      res.setHeader("X-Late", "1");
    });
    add("sendErrorCommits", (seen, req, res) -> {
      res.sendError(404);
      seen.add("committed=" + res.isCommitted());
      if (!res.isCommitted()) {
        res.sendError(500); // an outer handler's "if nothing was answered yet"
      }
    });
    add("sendRedirectCommits", (seen, req, res) -> {
      res.sendRedirect("/elsewhere");
      seen.add("committed=" + res.isCommitted());
    });
    // ---- close, writes after close
    add("streamCloseThenWrite", (seen, req, res) -> {
      ServletOutputStream out = res.getOutputStream();
      out.write("a".getBytes(StandardCharsets.US_ASCII));
      out.close();
      seen.add("committed=" + res.isCommitted());
      try {
        out.write("b".getBytes(StandardCharsets.US_ASCII));
        seen.add("write after close: ok");
      } catch (IOException e) {
        seen.add("write after close: " + e.getClass().getSimpleName());
      }
      res.setHeader("X-Late", "1");
    });
    add("writerCloseThenHeader", (seen, req, res) -> {
      PrintWriter w = res.getWriter();
      w.print("a");
      w.close();
      seen.add("committed=" + res.isCommitted());
      res.setStatus(201);
      res.setHeader("X-Late", "1");
    });
    // ---- sendError / sendRedirect
    add("sendErrorMessage", (seen, req, res) -> res.sendError(409, "conflict here"));
    add("sendErrorNoMessage", (seen, req, res) -> res.sendError(409));
    add("sendErrorAfterWriting", (seen, req, res) -> {
      res.getWriter().print("partial");
      res.sendError(400, "bad");
    });
    add("sendErrorAfterHeaders", (seen, req, res) -> {
      res.setHeader("X-Keep", "yes");
      res.addCookie(new Cookie("c", "v"));
      res.setContentType("application/json");
      res.sendError(403);
    });
    add("writeAfterSendErrorPastCap", (seen, req, res) -> {
      res.sendError(404);
      try {
        res.getOutputStream().write(bytes(CAP + 1));
        seen.add("write ok");
      } catch (IOException | IllegalStateException e) {
        seen.add("write: " + e.getClass().getSimpleName());
      }
    });
    add("redirectRelative", (seen, req, res) -> res.sendRedirect("sibling?x=1"));
    add("redirectAbsolute", (seen, req, res) -> res.sendRedirect("https://example.com/x"));
    add("redirectAfterWriting", (seen, req, res) -> {
      res.setHeader("X-Keep", "yes");
      res.getWriter().print("partial");
      res.sendRedirect("/there");
    });
    // ---- 304 / 204 / HEAD / Content-Length
    add("notModified", (seen, req, res) -> {
      res.setStatus(304);
      res.setHeader("ETag", "\"v1\"");
    });
    add("notModifiedWithLength", (seen, req, res) -> {
      res.setStatus(304);
      res.setContentLength(1234); // the representation's length, allowed on a 304
    });
    add("noContent", (seen, req, res) -> res.setStatus(204));
    add("noContentWithBody", (seen, req, res) -> {
      res.setStatus(204);
      res.getOutputStream().write("x".getBytes(StandardCharsets.US_ASCII));
    });
    add("contentLengthLong", (seen, req, res) -> {
      res.setContentLengthLong(5);
      res.getOutputStream().write("hello".getBytes(StandardCharsets.US_ASCII));
    });
    App hello = (seen, req, res) -> {
      res.setContentType("text/plain");
      res.getWriter().print("hello world");
    };
    CASES.put("headOfDoGet", new Case("HEAD", true, hello));
    CASES.put("getOfDoGet", new Case("GET", true, hello));
    CASES.put("headWithLength", new Case("HEAD", false, (seen, req, res) -> {
      res.setContentLength(11);
      res.getOutputStream().write(bytes(11));
    }));
    // ---- stream / writer mixing
    add("writerThenStream", (seen, req, res) -> {
      res.getWriter().print("text,");
      try {
        res.getOutputStream().write("bytes".getBytes(StandardCharsets.US_ASCII));
        seen.add("stream after writer: ok");
      } catch (IllegalStateException e) {
        seen.add("stream after writer: ISE");
        res.getWriter().print("fallback");
      }
    });
    add("streamThenWriter", (seen, req, res) -> {
      res.getOutputStream().write("bytes,".getBytes(StandardCharsets.US_ASCII));
      try {
        res.getWriter().print("text");
        seen.add("writer after stream: ok");
      } catch (IllegalStateException e) {
        seen.add("writer after stream: ISE");
      }
    });
    add("resetClearsBodyChoice", (seen, req, res) -> {
      res.getWriter().print("junk");
      res.reset();
      res.getOutputStream().write("bytes".getBytes(StandardCharsets.US_ASCII));
    });
    add("surrogatePairAcrossWrites", (seen, req, res) -> {
      res.setContentType("text/plain;charset=UTF-8");
      String clef = "\uD834\uDD1E";
      res.getWriter().print(clef.charAt(0));
      res.getWriter().print(clef.charAt(1));
    });
    add("flushThenStatus", (seen, req, res) -> {
      res.getOutputStream().flush();
      seen.add("committed=" + res.isCommitted());
      res.setStatus(404);
      res.getOutputStream().write("late".getBytes(StandardCharsets.US_ASCII));
    });
    add("sendErrorThenWriter", (seen, req, res) -> {
      res.sendError(410);
      res.getWriter().print("ignored");
      seen.add("writer error " + res.getWriter().checkError());
    });
    // ---- buffer size
    add("bufferSize", (seen, req, res) -> {
      res.setBufferSize(64 << 10);
      seen.add("getBufferSize>=requested: " + (res.getBufferSize() >= (64 << 10)));
    });
    add("bufferSizeAfterContent", (seen, req, res) -> {
      res.getOutputStream().write("x".getBytes(StandardCharsets.US_ASCII));
      try {
        res.setBufferSize(1 << 16);
        seen.add("setBufferSize: ok");
      } catch (IllegalStateException e) {
        seen.add("setBufferSize: ISE");
      }
    });
    // ---- headers
    add("multiHeaders", (seen, req, res) -> {
      res.addHeader("X-M", "a");
      res.addHeader("X-M", "b");
      res.setHeader("X-S", "1");
      res.setHeader("X-S", "2");
      res.addIntHeader("X-I", 7);
      res.addHeader("x-m", "c");
      seen.add("contains X-M " + res.containsHeader("x-M"));
      seen.add("X-M " + res.getHeaders("X-M"));
      seen.add("X-S " + res.getHeader("X-S"));
      res.getWriter().print("ok");
    });
    add("headerViewOfTypeAndCookies", (seen, req, res) -> {
      res.setContentType("text/plain");
      res.addCookie(new Cookie("k", "v"));
      seen.add("contains Content-Type " + res.containsHeader("Content-Type"));
      seen.add("Content-Type " + res.getHeader("Content-Type"));
      seen.add("Set-Cookie " + res.getHeaders("Set-Cookie"));
    });
    add("contentTypeByHeaderUtf8", (seen, req, res) -> {
      res.setHeader("Content-Type", "text/plain;charset=UTF-8");
      seen.add("type " + res.getContentType());
      res.getWriter().print("Zoë 日本");
    });
    add("contentTypeByHeaderJson", (seen, req, res) -> {
      res.setHeader("Content-Type", "application/json");
      res.getWriter().print("{\"n\":\"Zoë\"}");
    });
    add("dateHeaderEarlyInMonth", (seen, req, res) -> {
      res.setDateHeader("Last-Modified", Instant.parse("2024-01-05T10:00:00Z").toEpochMilli());
    });
    // ---- cookies
    add("cookieAttributes", (seen, req, res) -> {
      Cookie c = new Cookie("sid", "abc");
      c.setPath("/");
      c.setMaxAge(60);
      c.setHttpOnly(true);
      c.setSecure(true);
      c.setAttribute("SameSite", "Lax");
      res.addCookie(c);
    });
    add("headerViewOfCookieAttributesInLowerCase", (seen, req, res) -> {
      Cookie c = new Cookie("k", "v");
      c.setAttribute("path", "/");
      c.setAttribute("samesite", "Lax");
      res.addCookie(c);
      seen.add("Set-Cookie " + res.getHeaders("Set-Cookie"));
    });
    add("cookieReused", (seen, req, res) -> {
      Cookie c = new Cookie("step", "1");
      res.addCookie(c);
      c.setValue("2");
      res.addCookie(c);
    });
    // ---- locale, charset, content type
    add("localeThenWriter", (seen, req, res) -> {
      res.setLocale(Locale.JAPAN);
      res.setContentType("text/plain");
      res.getWriter().print("ok");
    });
    add("contentTypeAfterWriter", (seen, req, res) -> {
      res.getWriter().print("<p>x</p>");
      res.setContentType("text/html");
      seen.add("type " + res.getContentType());
    });
    add("charsetEncodingThenType", (seen, req, res) -> {
      res.setCharacterEncoding("UTF-8");
      res.setContentType("text/plain");
      res.getWriter().print("Zoë");
    });
    // ---- trailers
    add("trailers", (seen, req, res) -> {
      res.setTrailerFields(() -> Map.of("X-Sum", "42"));
      res.getOutputStream().write("body".getBytes(StandardCharsets.US_ASCII));
    });
    // ---- across the cap
    add("exactlyCap", (seen, req, res) -> res.getOutputStream().write(bytes(CAP)));
    add("capPlusOne", (seen, req, res) -> res.getOutputStream().write(bytes(CAP + 1)));
    add("manyChunks", (seen, req, res) -> {
      byte[] b = bytes(5 * CAP + 17);
      OutputStream out = res.getOutputStream();
      for (int off = 0; off < b.length; off += 99) {
        out.write(b, off, Math.min(99, b.length - off));
      }
    });
    add("byteByByteAcrossCap", (seen, req, res) -> {
      for (byte x : bytes(CAP + 3)) {
        res.getOutputStream().write(x);
      }
    });
    add("writerAcrossCap", (seen, req, res) -> {
      res.setContentType("text/plain;charset=UTF-8");
      for (int i = 0; i < 3 * CAP; i++) {
        res.getWriter().print(i % 10 == 0 ? 'é' : 'x');
      }
    });
    add("capPlusOneWithLength", (seen, req, res) -> {
      res.setContentLength(CAP + 1);
      res.getOutputStream().write(bytes(CAP + 1));
    });
    // ---- async
    add("asyncWriterFromThread", (seen, req, res) -> {
      AsyncContext ac = req.startAsync();
      new Thread(() -> {
        try {
          ac.getResponse().getWriter().print("from thread");
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
        ac.complete();
      }).start();
    });
    add("asyncWriterBothSides", (seen, req, res) -> {
      res.getWriter().print("before,");
      AsyncContext ac = req.startAsync(req, res);
      new Thread(() -> {
        try {
          ac.getResponse().getWriter().print("after");
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
        ac.complete();
      }).start();
    });
    add("asyncWriterOnlyAfterHandOff", (seen, req, res) -> {
      res.setContentType("text/plain;charset=UTF-8");
      AsyncContext ac = req.startAsync(req, res);
      new Thread(() -> {
        try {
          ac.getResponse().getWriter().print("Zo\u00eb later");
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
        ac.complete();
      }).start();
    });
    add("asyncStreamFromThread", (seen, req, res) -> {
      AsyncContext ac = req.startAsync(req, res);
      new Thread(() -> {
        try {
          ac.getResponse().getOutputStream().write("bytes".getBytes(StandardCharsets.US_ASCII));
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
        ac.complete();
      }).start();
    });
  }

  static HttpServlet servletFor(String mode, String name, Case c) {
    if (c.doGet()) {
      return new HttpServlet() {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse res) throws IOException {
          run(mode, name, c, req, res);
        }
      };
    }
    return new HttpServlet() {
      private static final long serialVersionUID = 1L;

      @Override
      protected void service(HttpServletRequest req, HttpServletResponse res) throws IOException {
        run(mode, name, c, req, res);
      }
    };
  }

  static void run(String mode, String name, Case c, HttpServletRequest req,
      HttpServletResponse res) throws IOException {
    List<String> seen = Collections.synchronizedList(new ArrayList<>());
    SEEN.put(mode + name, seen);
    try {
      c.app().handle(seen, req, res);
    } catch (IOException | RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @BeforeAll
  static void start() throws Exception {
    plainFilter = WeirFilter.builder().build();
    boundedFilter = WeirFilter.builder().boundedResponseTime(true).maxBufferedBytes(CAP).build();
    TestServer.Builder p = TestServer.with(plainFilter);
    TestServer.Builder b = TestServer.with(boundedFilter);
    CASES.forEach((name, c) -> {
      p.servlet("/c/" + name, servletFor("plain:", name, c));
      b.servlet("/c/" + name, servletFor("bounded:", name, c));
    });
    plain = p.start();
    bounded = b.start();
  }

  @AfterAll
  static void stop() {
    plain.close();
    bounded.close();
  }

  static Stream<String> names() {
    return CASES.keySet().stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("names")
  void boundedAnswersAsPlain(String name) throws Exception {
    Case c = CASES.get(name);
    String p = exchange(plain, c.method(), "/c/" + name);
    assertDrained(plainFilter);
    String b = exchange(bounded, c.method(), "/c/" + name);
    assertDrained(boundedFilter);
    System.out.println("== " + name + "\n" + p + "\n-- bounded\n" + b);
    assertEquals(p + "\nseen " + SEEN.get("plain:" + name),
        b + "\nseen " + SEEN.get("bounded:" + name), name);
  }

  // ------------------------------------------------------------------ a raw HTTP/1.1 client

  /** Status line, headers (no Date; sorted by name, values in order), decoded body, trailers. */
  static String exchange(TestServer s, String method, String path) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", s.uri("/").getPort())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write((method + " " + path + " HTTP/1.1\r\nHost: localhost\r\n"
          + "TE: trailers\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      in.transferTo(all);
      return parse(all.toByteArray(), method.equals("HEAD"));
    }
  }

  static String parse(byte[] raw, boolean head) {
    int[] pos = {0};
    String status = line(raw, pos);
    List<String> headers = new ArrayList<>();
    boolean chunked = false;
    long length = -1;
    for (String h = line(raw, pos); !h.isEmpty(); h = line(raw, pos)) {
      int colon = h.indexOf(':');
      String n = h.substring(0, colon).trim().toLowerCase(Locale.ROOT);
      String v = h.substring(colon + 1).trim();
      if (n.equals("transfer-encoding") && v.equalsIgnoreCase("chunked")) {
        chunked = true;
        continue; // framing, not content
      }
      if (n.equals("content-length")) {
        length = Long.parseLong(v);
      }
      if (!n.equals("date")) {
        headers.add(n + ": " + v);
      }
    }
    headers.sort((a, b) -> a.substring(0, a.indexOf(':')).compareTo(b.substring(0,
        b.indexOf(':'))));
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    List<String> trailers = new ArrayList<>();
    if (!head && chunked) {
      for (int size = Integer.parseInt(line(raw, pos).split(";")[0].trim(), 16); size > 0;
          size = Integer.parseInt(line(raw, pos).split(";")[0].trim(), 16)) {
        body.write(raw, pos[0], size);
        pos[0] += size;
        line(raw, pos);
      }
      for (String t = line(raw, pos); !t.isEmpty(); t = line(raw, pos)) {
        trailers.add(t.toLowerCase(Locale.ROOT));
      }
    } else if (!head) {
      int n = length >= 0 ? (int) Math.min(length, raw.length - pos[0]) : raw.length - pos[0];
      body.write(raw, pos[0], n);
      pos[0] += n;
    }
    String text = body.toString(StandardCharsets.ISO_8859_1);
    String shown = text.length() > 200
        ? text.substring(0, 60) + "...(" + body.size() + " bytes, hash "
            + java.util.Arrays.hashCode(body.toByteArray()) + ")"
        : java.util.HexFormat.of().formatHex(body.toByteArray()).length() > 0 ? text + " [hex "
            + java.util.HexFormat.of().formatHex(body.toByteArray()) + "]" : "";
    return status + "\n" + String.join("\n", headers) + "\nbody: " + shown
        + (trailers.isEmpty() ? "" : "\ntrailers: " + trailers)
        + (pos[0] < raw.length ? "\n+" + (raw.length - pos[0]) + " bytes after the answer" : "");
  }

  static String line(byte[] raw, int[] pos) {
    int start = pos[0];
    while (pos[0] < raw.length && raw[pos[0]] != '\n') {
      pos[0]++;
    }
    int end = pos[0] > start && raw[pos[0] - 1] == '\r' ? pos[0] - 1 : pos[0];
    if (pos[0] < raw.length) {
      pos[0]++;
    }
    return new String(raw, start, Math.max(0, end - start), StandardCharsets.ISO_8859_1);
  }
}
