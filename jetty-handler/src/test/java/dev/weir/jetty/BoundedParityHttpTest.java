package dev.weir.jetty;

import static dev.weir.jetty.Support.assertDrained;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.Clock;
import dev.weir.LoadShedder;
import dev.weir.Timer;
import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.http.HttpCookie;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.FutureCallback;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Bounded mode against plain mode, on the same core or ee10 application, on the wire (raw
 * HTTP/1.1, Date removed, chunking decoded, interim answers and trailers kept), plus what the
 * application observes; then the deadline against what the application wrote, on a clock the
 * test moves.
 */
class BoundedParityHttpTest {
  interface App {
    boolean handle(List<String> seen, Request req, Response res, Callback cb) throws Exception;
  }

  interface ServletApp {
    void handle(List<String> seen, HttpServletRequest req, HttpServletResponse res)
        throws Exception;
  }

  /** A core application ({@code app}), or an ee10 servlet ({@code servlet}) behind the handler. */
  record Case(String method, App app, ServletApp servlet, boolean doGet) {}

  static final Map<String, Case> CASES = new LinkedHashMap<>();
  static final Map<String, Seen> SEEN = new ConcurrentHashMap<>();

  /**
   * What a case's handler or servlet saw, and a latch counted down when it has returned: what it
   * saw after completing the callback (or writing an error) may be added after the client has its
   * whole answer.
   */
  record Seen(List<String> items, CountDownLatch returned) {
    static Seen start(String key) {
      Seen s = new Seen(Collections.synchronizedList(new ArrayList<>()), new CountDownLatch(1));
      SEEN.put(key, s);
      return s;
    }
  }
  static WeirHandler plainWeir;
  static WeirHandler boundedWeir;
  static TestServer plain;
  static TestServer bounded;

  static void add(String name, App app) {
    CASES.put(name, new Case("GET", app, null, false));
  }

  static void ee10(String name, ServletApp app) {
    CASES.put("ee10-" + name, new Case("GET", null, app, false));
  }

  static ByteBuffer ascii(String s) {
    return ByteBuffer.wrap(s.getBytes(StandardCharsets.US_ASCII));
  }

  static byte[] bytes(int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) ('a' + i % 26);
    }
    return b;
  }

  /** Writes and waits: what went wrong is returned, "ok" otherwise. */
  static String write(Response res, boolean last, ByteBuffer content) {
    FutureCallback f = new FutureCallback();
    res.write(last, content, f);
    try {
      f.get(10, TimeUnit.SECONDS);
      return "ok";
    } catch (Exception e) {
      Throwable c = e.getCause() != null ? e.getCause() : e;
      return c.getClass().getSimpleName();
    }
  }

  static String attempt(Runnable r) {
    try {
      r.run();
      return "ok";
    } catch (RuntimeException e) {
      return e.getClass().getSimpleName();
    }
  }

  static void thread(Runnable r) {
    new Thread(r, "app-thread").start();
  }

  static {
    // ---- writes
    add("sinkWriteString", (seen, req, res, cb) -> {
      Content.Sink.write(res, true, "hello", cb);
      return true;
    });
    add("writeThenLastEmpty", (seen, req, res, cb) -> {
      res.write(false, ascii("a"), Callback.from(() -> res.write(true, null, cb), cb::failed));
      return true;
    });
    add("committedObserved", (seen, req, res, cb) -> {
      seen.add("status " + res.getStatus() + " committed " + res.isCommitted());
      seen.add("write " + write(res, false, ascii("a")));
      seen.add("committed " + res.isCommitted());
      res.setStatus(500);
      seen.add("late status " + res.getStatus());
      seen.add("late header " + attempt(() -> res.getHeaders().put("X-Late", "1")));
      res.write(true, ascii("b"), cb);
      return true;
    });
    add("heldHeadersAcrossCommit", (seen, req, res, cb) -> {
      HttpFields.Mutable h = res.getHeaders();
      h.put("X-Before", "1");
      seen.add("write " + write(res, false, ascii("a")));
      seen.add("late header " + attempt(() -> h.put("X-After", "1")));
      seen.add("X-After " + res.getHeaders().get("X-After"));
      res.write(true, null, cb);
      return true;
    });
    add("headersPutAdd", (seen, req, res, cb) -> {
      HttpFields.Mutable h = res.getHeaders();
      h.put("X-S", "1");
      h.put("X-S", "2");
      h.add("X-M", "a");
      h.add("X-M", "b");
      h.add("x-m", "c");
      h.put("Content-Type", "text/plain;charset=utf-8");
      seen.add("X-M " + h.getValuesList("X-M") + " X-S " + h.get("X-S"));
      List<String> names = new ArrayList<>();
      for (HttpField f : res.getHeaders()) {
        if (!f.getName().equalsIgnoreCase("Date")) {
          names.add(f.getName());
        }
      }
      seen.add("names " + names);
      Content.Sink.write(res, true, "ok", cb);
      return true;
    });
    add("headerRemoveAndCookie", (seen, req, res, cb) -> {
      res.getHeaders().remove("Server");
      Response.addCookie(res, HttpCookie.from("c", "v"));
      Response.putCookie(res, HttpCookie.from("d", "w"));
      Content.Sink.write(res, true, "ok", cb);
      return true;
    });
    add("serverHeaderReplaced", (seen, req, res, cb) -> {
      res.getHeaders().put("Server", "app");
      Content.Sink.write(res, true, "ok", cb);
      return true;
    });
    add("serverHeaderAdded", (seen, req, res, cb) -> {
      res.getHeaders().add("Server", "extra");
      res.getHeaders().remove("X-Outer");
      Content.Sink.write(res, true, "ok", cb);
      return true;
    });
    add("contentLengthThenWrite", (seen, req, res, cb) -> {
      res.getHeaders().put("Content-Length", 5);
      res.write(true, ascii("hello"), cb);
      return true;
    });
    add("resetBeforeWrite", (seen, req, res, cb) -> {
      res.setStatus(500);
      res.getHeaders().put("X-Gone", "1");
      res.setTrailersSupplier(() -> HttpFields.build().put("X-Gone-Trailer", "1"));
      res.reset();
      seen.add("status " + res.getStatus() + " trailers " + (res.getTrailersSupplier() != null));
      Content.Sink.write(res, true, "good", cb);
      return true;
    });
    add("succeededWithoutWrite", (seen, req, res, cb) -> {
      res.setStatus(201);
      res.getHeaders().put("X-App", "1");
      cb.succeeded();
      return true;
    });
    add("outputStream", (seen, req, res, cb) -> {
      try (OutputStream out = Content.Sink.asOutputStream(res)) {
        out.write("stream".getBytes(StandardCharsets.US_ASCII));
      }
      cb.succeeded();
      return true;
    });
    add("interim103", (seen, req, res, cb) -> {
      res.writeInterim(103, HttpFields.build().add("Link", "</s.css>; rel=preload"))
          .get(10, TimeUnit.SECONDS);
      Content.Sink.write(res, true, "after hints", cb);
      return true;
    });
    add("bytesWritten", (seen, req, res, cb) -> {
      write(res, false, ascii("12345"));
      seen.add("written " + Response.getContentBytesWritten(res));
      res.write(true, null, cb);
      return true;
    });
    // ---- Response.writeError, Response.sendRedirect
    add("writeError", (seen, req, res, cb) -> {
      Response.writeError(req, res, cb, 409);
      seen.add("committed " + res.isCommitted());
      return true;
    });
    add("writeErrorMessage", (seen, req, res, cb) -> {
      Response.writeError(req, res, cb, 409, "conflict here");
      return true;
    });
    add("writeErrorAfterHeaders", (seen, req, res, cb) -> {
      res.getHeaders().put("X-Keep", "yes");
      res.getHeaders().put("Content-Type", "application/json");
      Response.writeError(req, res, cb, 403);
      return true;
    });
    add("writeErrorAfterWriting", (seen, req, res, cb) -> {
      seen.add("write " + write(res, false, ascii("partial")));
      Response.writeError(req, res, cb, 400, "bad");
      return true;
    });
    add("redirectRelative", (seen, req, res, cb) -> {
      Response.sendRedirect(req, res, cb, "sibling?x=1");
      return true;
    });
    add("redirectAbsolute", (seen, req, res, cb) -> {
      res.getHeaders().put("X-Keep", "yes");
      Response.sendRedirect(req, res, cb, "https://example.com/x");
      return true;
    });
    // ---- 204, 304, HEAD
    add("noContent", (seen, req, res, cb) -> {
      res.setStatus(204);
      cb.succeeded();
      return true;
    });
    add("noContentWithBody", (seen, req, res, cb) -> {
      res.setStatus(204);
      Content.Sink.write(res, true, "x", Callback.from(() -> {
        seen.add("write ok");
        cb.succeeded();
      }, x -> {
        seen.add("write " + x.getClass().getSimpleName());
        cb.failed(x);
      }));
      return true;
    });
    add("notModified", (seen, req, res, cb) -> {
      res.setStatus(304);
      res.getHeaders().put("ETag", "\"v1\"");
      cb.succeeded();
      return true;
    });
    add("notModifiedWithLength", (seen, req, res, cb) -> {
      res.setStatus(304);
      res.getHeaders().put("Content-Length", 1234);
      res.write(true, null, cb);
      return true;
    });
    add("notModifiedWithBody", (seen, req, res, cb) -> {
      res.setStatus(304);
      seen.add("write " + write(res, true, ascii("body")));
      cb.succeeded();
      return true;
    });
    App hello = (seen, req, res, cb) -> {
      res.getHeaders().put("Content-Type", "text/plain");
      Content.Sink.write(res, true, "hello world", cb);
      return true;
    };
    CASES.put("head", new Case("HEAD", hello, null, false));
    CASES.put("headWithLength", new Case("HEAD", (seen, req, res, cb) -> {
      res.getHeaders().put("Content-Length", 11);
      res.write(true, ascii("hello world"), cb);
      return true;
    }, null, false));
    // ---- trailers
    add("trailers", (seen, req, res, cb) -> {
      res.setTrailersSupplier(() -> HttpFields.build().put("X-Sum", "42"));
      write(res, false, ascii("body"));
      res.write(true, null, cb);
      return true;
    });
    add("trailersAfterCommit", (seen, req, res, cb) -> {
      write(res, false, ascii("body"));
      res.setTrailersSupplier(() -> HttpFields.build().put("X-Sum", "43"));
      res.write(true, ascii("!"), cb);
      return true;
    });
    add("trailersRead", (seen, req, res, cb) -> {
      seen.add("before " + (res.getTrailersSupplier() != null));
      res.setTrailersSupplier(() -> HttpFields.build().put("X-Sum", "44"));
      seen.add("after " + (res.getTrailersSupplier() != null));
      write(res, false, ascii("body"));
      res.write(true, null, cb);
      return true;
    });
    // ---- other threads, after handle returned true
    add("writeFromThread", (seen, req, res, cb) -> {
      thread(() -> Content.Sink.write(res, true, "from thread", cb));
      return true;
    });
    add("statusAndHeadersFromThread", (seen, req, res, cb) -> {
      res.getHeaders().put("X-Handle", "1");
      thread(() -> {
        res.setStatus(201);
        res.getHeaders().add("X-Thread", "1");
        write(res, false, ascii("a,"));
        Content.Sink.write(res, true, "b", cb);
      });
      return true;
    });
    add("succeededFromThread", (seen, req, res, cb) -> {
      thread(() -> {
        res.setStatus(202);
        cb.succeeded();
      });
      return true;
    });
    // ---- large bodies
    add("manyWrites", (seen, req, res, cb) -> {
      byte[] b = bytes(200_017);
      for (int off = 0; off < b.length; off += 999) {
        String r = write(res, false, ByteBuffer.wrap(b, off, Math.min(999, b.length - off)));
        if (!r.equals("ok")) {
          seen.add("write " + r);
        }
      }
      res.write(true, null, cb);
      return true;
    });
    add("manyWritesFromThread", (seen, req, res, cb) -> {
      thread(() -> {
        byte[] b = bytes(100_003);
        for (int off = 0; off < b.length; off += 4096) {
          write(res, false, ByteBuffer.wrap(b, off, Math.min(4096, b.length - off)));
        }
        res.write(true, null, cb);
      });
      return true;
    });
    add("oneLargeWrite", (seen, req, res, cb) -> {
      res.write(true, ByteBuffer.wrap(bytes(1 << 20)), cb);
      return true;
    });
    // ---- misuse
    add("writeAfterLast", (seen, req, res, cb) -> {
      seen.add("last " + write(res, true, ascii("a")));
      seen.add("after last " + write(res, false, ascii("b")));
      cb.succeeded();
      return true;
    });
    add("callbackFailed", (seen, req, res, cb) -> {
      cb.failed(new IOException("failed by the application"));
      return true;
    });
    add("callbackFailedAfterHeaders", (seen, req, res, cb) -> {
      res.setStatus(201);
      res.getHeaders().put("X-App", "1");
      cb.failed(new IOException("failed by the application"));
      return true;
    });
    add("callbackFailedAfterWrite", (seen, req, res, cb) -> {
      seen.add("write " + write(res, false, ascii("partial")));
      cb.failed(new IOException("failed by the application"));
      return true;
    });
    add("throws", (seen, req, res, cb) -> {
      throw new IllegalStateException("boom");
    });
    add("throwsAfterHeaders", (seen, req, res, cb) -> {
      res.setStatus(201);
      res.getHeaders().put("X-App", "1");
      throw new IllegalStateException("boom");
    });
    add("throwsAfterWrite", (seen, req, res, cb) -> {
      seen.add("write " + write(res, false, ascii("partial")));
      throw new IllegalStateException("boom");
    });
    add("declines", (seen, req, res, cb) -> false);
    add("declinesAfterHeaders", (seen, req, res, cb) -> {
      res.getHeaders().put("X-App", "1");
      return false;
    });
    // ---- an ee10 servlet context behind the handler
    ee10("print", (seen, req, res) -> {
      res.setContentType("text/plain");
      res.getWriter().print("hello world");
    });
    ee10("headers", (seen, req, res) -> {
      res.addHeader("X-M", "a");
      res.addHeader("X-M", "b");
      res.setHeader("X-S", "1");
      res.setHeader("X-S", "2");
      seen.add("X-M " + res.getHeaders("X-M"));
      res.getOutputStream().write("ok".getBytes(StandardCharsets.US_ASCII));
    });
    ee10("sendError", (seen, req, res) -> res.sendError(409, "conflict here"));
    ee10("sendErrorAfterHeaders", (seen, req, res) -> {
      res.setHeader("X-Keep", "yes");
      res.sendError(403);
    });
    ee10("sendRedirect", (seen, req, res) -> {
      res.sendRedirect("/elsewhere");
      seen.add("committed " + res.isCommitted());
    });
    ee10("flushThenStatus", (seen, req, res) -> {
      res.getOutputStream().write("a".getBytes(StandardCharsets.US_ASCII));
      res.flushBuffer();
      seen.add("committed " + res.isCommitted());
      res.setStatus(404);
      res.setHeader("X-Late", "1");
    });
    ee10("resetAfterWriting", (seen, req, res) -> {
      res.setHeader("X-Gone", "1");
      res.getWriter().print("junk");
      res.reset();
      res.getWriter().print("good");
    });
    ee10("contentLength", (seen, req, res) -> {
      res.setContentLength(5);
      res.getOutputStream().write("hello".getBytes(StandardCharsets.US_ASCII));
    });
    ee10("noContent", (seen, req, res) -> res.setStatus(204));
    ee10("notModified", (seen, req, res) -> {
      res.setStatus(304);
      res.setHeader("ETag", "\"v1\"");
    });
    ee10("trailers", (seen, req, res) -> {
      res.setTrailerFields(() -> Map.of("X-Sum", "42"));
      res.getOutputStream().write("body".getBytes(StandardCharsets.US_ASCII));
    });
    ee10("large", (seen, req, res) -> {
      byte[] b = bytes(300_001);
      for (int off = 0; off < b.length; off += 777) {
        res.getOutputStream().write(b, off, Math.min(777, b.length - off));
      }
    });
    ee10("throws", (seen, req, res) -> {
      throw new IllegalStateException("boom");
    });
    ee10("async", (seen, req, res) -> {
      res.getWriter().print("before,");
      AsyncContext ac = req.startAsync(req, res);
      thread(() -> {
        try {
          ac.getResponse().getWriter().print("after");
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
        ac.complete();
      });
    });
    ServletApp helloServlet = (seen, req, res) -> {
      res.setContentType("text/plain");
      res.getWriter().print("hello world");
    };
    CASES.put("ee10-headOfDoGet", new Case("HEAD", null, helloServlet, true));
    CASES.put("ee10-unmapped", new Case("GET", null, null, false));
  }

  // ------------------------------------------------------------------------- servers

  static Handler handlerFor(String mode) {
    ServletContextHandler context = new ServletContextHandler("/ee10");
    CASES.forEach((name, c) -> {
      if (c.servlet() != null) {
        context.addServlet(new ServletHolder(servletFor(mode, name, c)),
            "/" + name.substring("ee10-".length()));
      }
    });
    Handler core = new Handler.Abstract() {
      @Override
      public boolean handle(Request req, Response res, Callback cb) throws Exception {
        String path = Request.getPathInContext(req);
        Case c = path.startsWith("/c/") ? CASES.get(path.substring(3)) : null;
        if (c == null || c.app() == null) {
          return false;
        }
        Seen seen = Seen.start(mode + path.substring(3));
        try {
          return c.app().handle(seen.items(), req, res, cb);
        } finally {
          seen.returned().countDown();
        }
      }
    };
    return new Handler.Sequence(context, core);
  }

  /** An outer handler's header, which the application sees and may change. */
  static Handler outer(Handler weir) {
    return new Handler.Wrapper(weir) {
      @Override
      public boolean handle(Request req, Response res, Callback cb) throws Exception {
        res.getHeaders().put("X-Outer", "1");
        return super.handle(req, res, cb);
      }
    };
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
    Seen seen = Seen.start(mode + name);
    try {
      c.servlet().handle(seen.items(), req, res);
    } catch (IOException | RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    } finally {
      seen.returned().countDown();
    }
  }

  /** What a case's handler saw, once it returned (nothing if it never ran). */
  static List<String> seen(String key) throws InterruptedException {
    Seen seen = SEEN.get(key);
    if (seen == null) {
      return null;
    }
    assertTrue(seen.returned().await(10, TimeUnit.SECONDS), key + "'s handler never returned");
    return seen.items();
  }

  @BeforeAll
  static void start() throws Exception {
    plainWeir = WeirHandler.builder().handler(handlerFor("plain:")).build();
    boundedWeir = WeirHandler.builder().boundedResponseTime(true)
        .handler(handlerFor("bounded:")).build();
    plain = TestServer.start(outer(plainWeir));
    bounded = TestServer.start(outer(boundedWeir));
  }

  @AfterAll
  static void stop() throws Exception {
    plain.close();
    bounded.close();
  }

  static Stream<String> names() {
    return CASES.keySet().stream();
  }

  static String pathOf(String name) {
    return name.startsWith("ee10-") ? "/ee10/" + name.substring(5) : "/c/" + name;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("names")
  void boundedAnswersAsPlain(String name) throws Exception {
    Case c = CASES.get(name);
    String p = exchange(plain.port(), c.method(), pathOf(name));
    assertDrained(plainWeir);
    String b = exchange(bounded.port(), c.method(), pathOf(name));
    assertDrained(boundedWeir);
    System.out.println("== " + name + "\n" + p + "\n-- bounded\n" + b);
    assertEquals(p + "\nseen " + seen("plain:" + name),
        b + "\nseen " + seen("bounded:" + name), name);
  }

  // ----------------------------------------------------------------- the deadline

  private static final Duration TIMEOUT = Duration.ofMinutes(10);

  /** Real time plus a jump; tasks run only when the test jumps, on its thread. */
  static final class JumpTime implements Timer, Clock {
    private final List<Object[]> tasks = new ArrayList<>();
    private volatile long offset;

    @Override
    public long nanoTime() {
      return System.nanoTime() + offset;
    }

    @Override
    public Clock clock() {
      return this;
    }

    @Override
    public synchronized Timeout schedule(Runnable task, long deadlineNanos) {
      Object[] t = {task, deadlineNanos, false};
      tasks.add(t);
      return () -> {
        synchronized (JumpTime.this) {
          boolean was = !(Boolean) t[2];
          t[2] = true;
          return was;
        }
      };
    }

    /** Moves the clock by {@code d} and runs every task then due. */
    void jump(Duration d) {
      offset += d.toNanos();
      List<Runnable> due = new ArrayList<>();
      synchronized (this) {
        long now = nanoTime();
        tasks.removeIf(t -> {
          if ((Boolean) t[2]) {
            return true;
          }
          if ((Long) t[1] - now <= 0) {
            t[2] = true;
            due.add((Runnable) t[0]);
            return true;
          }
          return false;
        });
      }
      due.forEach(Runnable::run);
    }
  }

  private static WeirHandler weir(boolean bounded, JumpTime time, App app) {
    return WeirHandler.builder().boundedResponseTime(bounded)
        .shedder(LoadShedder.builder().timer(time).requestTimeout(TIMEOUT)
            .rejector(Rejectors::none).limit(() -> Limits.fixed(4)))
        .handler(new Handler.Abstract() {
          @Override
          public boolean handle(Request req, Response res, Callback cb) throws Exception {
            return app.handle(null, req, res, cb);
          }
        }).build();
  }

  private static CompletableFuture<String> exchangeAsync(TestServer s, String path) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return exchange(s.port(), "GET", path);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    });
  }

  /**
   * The application's first write (its commit) happens well before the deadline, the rest after
   * it: both modes answer the application's 200, whole.
   */
  @ParameterizedTest(name = "bounded={0}")
  @ValueSource(booleans = {false, true})
  void committedBeforeTheDeadlineIsNotReplaced(boolean boundedMode) throws Exception {
    JumpTime time = new JumpTime();
    CountDownLatch committed = new CountDownLatch(1);
    CountDownLatch go = new CountDownLatch(1);
    WeirHandler weir = weir(boundedMode, time, (seen, req, res, cb) -> {
      res.getHeaders().put("X-App", "1");
      write(res, false, ascii("head,"));
      committed.countDown();
      thread(() -> {
        try {
          go.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        Content.Sink.write(res, true, "tail", cb);
      });
      return true;
    });
    try (TestServer s = TestServer.start(weir)) {
      CompletableFuture<String> f = exchangeAsync(s, "/x");
      assertTrue(committed.await(10, TimeUnit.SECONDS));
      time.jump(TIMEOUT.plusSeconds(1));
      go.countDown();
      String answer = f.get(20, TimeUnit.SECONDS);
      assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
      assertTrue(answer.contains("x-app: 1") && answer.contains("body: head,tail"), answer);
      assertDrained(weir);
    }
  }

  /** Headers and status set, nothing written, by the deadline: the 503, with none of them. */
  @Test
  void noWriteByTheDeadlineGetsThe503() throws Exception {
    JumpTime time = new JumpTime();
    CountDownLatch in = new CountDownLatch(1);
    CountDownLatch go = new CountDownLatch(1);
    CompletableFuture<String> late = new CompletableFuture<>();
    WeirHandler weir = weir(true, time, (seen, req, res, cb) -> {
      res.setStatus(201);
      res.getHeaders().put("X-App", "1");
      res.setTrailersSupplier(() -> HttpFields.build().put("X-Checksum", "app"));
      in.countDown();
      thread(() -> {
        try {
          go.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        late.complete(write(res, true, ascii("late")) + " committed " + res.isCommitted());
        cb.succeeded();
      });
      return true;
    });
    try (TestServer s = TestServer.start(weir)) {
      CompletableFuture<String> f = exchangeAsync(s, "/x");
      assertTrue(in.await(10, TimeUnit.SECONDS));
      time.jump(TIMEOUT.plusSeconds(1));
      String answer = f.get(20, TimeUnit.SECONDS);
      go.countDown();
      assertTrue(answer.startsWith("HTTP/1.1 503"), answer);
      assertTrue(answer.contains("body: Service unavailable: the request took too long"), answer);
      assertFalse(answer.contains("x-app") || answer.contains("x-checksum"), answer);
      assertFalse(answer.contains("after the answer"), answer);
      assertEquals("IOException committed true", late.get(20, TimeUnit.SECONDS));
      assertDrained(weir);
    }
  }

  /**
   * The application writes exactly as the deadline fires, many times: each request gets one
   * whole answer, the application's or the 503, and every permit comes back.
   */
  @Test
  void writingAtTheDeadlineGivesOneAnswer() throws Exception {
    JumpTime time = new JumpTime();
    CountDownLatch[] in = new CountDownLatch[1];
    CountDownLatch[] go = new CountDownLatch[1];
    WeirHandler weir = weir(true, time, (seen, req, res, cb) -> {
      CountDownLatch i = in[0];
      CountDownLatch g = go[0];
      thread(() -> {
        i.countDown();
        try {
          g.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        res.getHeaders().put("X-App", "1");
        Content.Sink.write(res, true, "ok", cb);
      });
      return true;
    });
    try (TestServer s = TestServer.start(weir)) {
      int app = 0;
      int deadline = 0;
      for (int n = 0; n < 100; n++) {
        in[0] = new CountDownLatch(1);
        go[0] = new CountDownLatch(1);
        CompletableFuture<String> f = exchangeAsync(s, "/race");
        assertTrue(in[0].await(10, TimeUnit.SECONDS));
        Thread t = new Thread(go[0]::countDown);
        t.start();
        time.jump(TIMEOUT.plusSeconds(1));
        t.join();
        String answer = f.get(20, TimeUnit.SECONDS);
        assertFalse(answer.contains("after the answer"), answer);
        if (answer.startsWith("HTTP/1.1 200")) {
          assertTrue(answer.contains("x-app: 1") && answer.endsWith("body: ok [hex 6f6b]"),
              answer);
          app++;
        } else {
          assertTrue(answer.startsWith("HTTP/1.1 503"), answer);
          assertFalse(answer.contains("x-app"), answer);
          deadline++;
        }
        assertDrained(weir);
      }
      System.out.println("race: app " + app + ", deadline " + deadline);
    }
  }

  // ------------------------------------------------------------------ a raw HTTP/1.1 client

  /** Interim answers, status line, headers (no Date; sorted by name), decoded body, trailers. */
  static String exchange(int port, String method, String path) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write((method + " " + path + " HTTP/1.1\r\nHost: localhost\r\n"
          + "TE: trailers\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      try {
        in.transferTo(all);
      } catch (IOException e) {
        all.write(("\n[" + e.getClass().getSimpleName() + "]").getBytes(StandardCharsets.US_ASCII));
      }
      return parse(all.toByteArray(), method.equals("HEAD"));
    }
  }

  static String parse(byte[] raw, boolean head) {
    int[] pos = {0};
    StringBuilder interim = new StringBuilder();
    String status = line(raw, pos);
    while (status.startsWith("HTTP/1.1 1")) {
      interim.append(status);
      for (String h = line(raw, pos); !h.isEmpty(); h = line(raw, pos)) {
        interim.append(" | ").append(h.toLowerCase(Locale.ROOT));
      }
      interim.append('\n');
      status = line(raw, pos);
    }
    List<String> headers = new ArrayList<>();
    boolean chunked = false;
    long length = -1;
    for (String h = line(raw, pos); !h.isEmpty(); h = line(raw, pos)) {
      int colon = h.indexOf(':');
      if (colon < 0) {
        headers.add("?? " + h);
        continue;
      }
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
    headers.sort((a, b) -> a.substring(0, a.indexOf(':') < 0 ? 0 : a.indexOf(':'))
        .compareTo(b.substring(0, b.indexOf(':') < 0 ? 0 : b.indexOf(':'))));
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    List<String> trailers = new ArrayList<>();
    boolean noBody = head || status.startsWith("HTTP/1.1 204") || status.startsWith("HTTP/1.1 304");
    String broken = "";
    if (!noBody && chunked) {
      try {
        for (int size = Integer.parseInt(line(raw, pos).split(";")[0].trim(), 16); size > 0;
            size = Integer.parseInt(line(raw, pos).split(";")[0].trim(), 16)) {
          body.write(raw, pos[0], Math.min(size, raw.length - pos[0]));
          pos[0] += size;
          line(raw, pos);
        }
        for (String t = line(raw, pos); !t.isEmpty(); t = line(raw, pos)) {
          trailers.add(t.toLowerCase(Locale.ROOT));
        }
      } catch (RuntimeException e) {
        broken = "\nchunking cut short";
        pos[0] = raw.length;
      }
    } else if (!noBody) {
      int n = length >= 0 ? (int) Math.min(length, raw.length - pos[0]) : raw.length - pos[0];
      body.write(raw, pos[0], n);
      pos[0] += n;
    }
    String text = body.toString(StandardCharsets.ISO_8859_1);
    String shown = text.length() > 200
        ? text.substring(0, 60) + "...(" + body.size() + " bytes, hash "
            + Arrays.hashCode(body.toByteArray()) + ")"
        : body.size() > 0 ? text + " [hex " + HexFormat.of().formatHex(body.toByteArray()) + "]"
            : "";
    return interim + status + "\n" + String.join("\n", headers) + "\nbody: " + shown + broken
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
