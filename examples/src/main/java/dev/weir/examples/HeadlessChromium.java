package dev.weir.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.eclipse.jetty.util.ajax.JSON;

/**
 * A headless Chromium driven over the DevTools protocol, just enough to look at a web page the
 * way a person would: open it, evaluate script in it, collect what it reports as errors (uncaught
 * exceptions, {@code console.error}, failed loads), and take a PNG screenshot. Real time runs, so
 * a page that polls its server does so as in a browser.
 *
 * <p>{@link #find()} looks for the binary in {@code $WEIR_CHROMIUM}, then {@code chromium},
 * {@code chromium-browser}, {@code google-chrome} and {@code google-chrome-stable} on the {@code
 * PATH}. The browser runs in a fresh profile in a temporary directory, which {@link #close()}
 * deletes after stopping the browser. Not thread-safe: one caller at a time.
 */
public final class HeadlessChromium implements AutoCloseable {
  /** How long the browser may take to start and open its DevTools port. */
  private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
  /** How long one DevTools command may take. */
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);
  private static final List<String> NAMES =
      List.of("chromium", "chromium-browser", "google-chrome", "google-chrome-stable");

  private final Process process;
  private final Path profile;
  private final WebSocket socket;
  private final AtomicInteger ids = new AtomicInteger();
  private final Map<Integer, CompletableFuture<Map<String, Object>>> pending =
      new ConcurrentHashMap<>();
  private final List<String> errors = new CopyOnWriteArrayList<>();
  /** Completed by the next load event; set before each navigation. */
  private volatile CompletableFuture<Map<String, Object>> loadWaiter;

  private HeadlessChromium(Process process, Path profile, WebSocket socket) {
    this.process = process;
    this.profile = profile;
    this.socket = socket;
  }

  /** The Chromium binary, if there is one. */
  public static Optional<Path> find() {
    String env = System.getenv("WEIR_CHROMIUM");
    if (env != null && !env.isBlank()) {
      Path p = Path.of(env);
      return Files.isExecutable(p) ? Optional.of(p) : Optional.empty();
    }
    String path = System.getenv().getOrDefault("PATH", "");
    for (String name : NAMES) {
      for (String dir : path.split(java.io.File.pathSeparator)) {
        Path p = Path.of(dir.isEmpty() ? "." : dir, name);
        if (Files.isExecutable(p)) {
          return Optional.of(p);
        }
      }
    }
    return Optional.empty();
  }

  /**
   * Starts {@code binary} headless with a window of {@code width} by {@code height} pixels, and
   * attaches to its blank page.
   *
   * @throws IOException if it does not start or open its DevTools port within 30 s
   */
  public static HeadlessChromium start(Path binary, int width, int height)
      throws IOException, InterruptedException {
    Path profile = Files.createTempDirectory("weir-chromium");
    Process p = new ProcessBuilder(binary.toString(), "--headless", "--no-sandbox",
        "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--hide-scrollbars",
        "--remote-debugging-port=0", "--remote-allow-origins=*",
        "--user-data-dir=" + profile, "--window-size=" + width + "," + height, "about:blank")
        .redirectErrorStream(true)
        .redirectOutput(profile.resolve("chromium.log").toFile())
        .start();
    try {
      long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
      Path portFile = profile.resolve("DevToolsActivePort");
      List<String> lines = List.of();
      while (lines.size() < 2) {
        if (!p.isAlive() || System.nanoTime() > deadline) {
          throw new IOException("chromium did not open its DevTools port; its log: "
              + Files.readString(profile.resolve("chromium.log")));
        }
        Thread.sleep(50); // polling a file the browser writes once, with a deadline
        lines = Files.exists(portFile) ? Files.readAllLines(portFile) : List.of();
      }
      HttpClient http = HttpClient.newHttpClient();
      URI list = URI.create("http://127.0.0.1:" + lines.get(0).trim() + "/json/list");
      String targets = http.send(HttpRequest.newBuilder(list).timeout(COMMAND_TIMEOUT).build(),
          HttpResponse.BodyHandlers.ofString()).body();
      String page = null;
      for (Object t : (Object[]) new JSON().fromJSON(targets)) {
        Map<?, ?> target = (Map<?, ?>) t;
        if ("page".equals(target.get("type"))) {
          page = (String) target.get("webSocketDebuggerUrl");
          break;
        }
      }
      if (page == null) {
        throw new IOException("chromium has no page target: " + targets);
      }
      Listener listener = new Listener();
      WebSocket ws = http.newWebSocketBuilder().connectTimeout(COMMAND_TIMEOUT)
          .buildAsync(URI.create(page), listener).get(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      HeadlessChromium c = new HeadlessChromium(p, profile, ws);
      listener.owner = c;
      c.call("Runtime.enable", Map.of());
      c.call("Log.enable", Map.of());
      c.call("Page.enable", Map.of());
      return c;
    } catch (IOException | InterruptedException | RuntimeException e) {
      stop(p, profile);
      throw e;
    } catch (Exception e) {
      stop(p, profile);
      throw new IOException("could not attach to chromium", e);
    }
  }

  /** Opens {@code url} and waits for its load event. */
  public void open(URI url) throws IOException, InterruptedException {
    CompletableFuture<Map<String, Object>> loaded = new CompletableFuture<>();
    loadWaiter = loaded;
    call("Page.navigate", Map.of("url", url.toString()));
    await(loaded, "the load of " + url);
  }

  /**
   * Evaluates {@code expression} in the page and returns its value, which must be JSON-able (a
   * string, number, boolean or null; use {@code JSON.stringify} for more).
   *
   * @throws IOException if the expression throws
   */
  public Object evaluate(String expression) throws IOException, InterruptedException {
    Map<String, Object> r = call("Runtime.evaluate",
        Map.of("expression", expression, "returnByValue", true));
    if (r.get("exceptionDetails") != null) {
      throw new IOException(expression + " threw: " + r.get("exceptionDetails"));
    }
    return ((Map<?, ?>) r.get("result")).get("value");
  }

  /** Writes a PNG of the whole page to {@code file}. */
  public void screenshot(Path file) throws IOException, InterruptedException {
    Map<String, Object> r = call("Page.captureScreenshot",
        Map.of("format", "png", "captureBeyondViewport", true));
    Files.write(file, Base64.getDecoder().decode((String) r.get("data")));
  }

  /** What the page reported as errors so far, one line each. */
  public List<String> errors() {
    return List.copyOf(errors);
  }

  /** Stops the browser and deletes its profile. */
  @Override
  public void close() {
    socket.abort();
    stop(process, profile);
  }

  // ------------------------------------------------------------------------------ protocol

  private Map<String, Object> call(String method, Map<String, Object> params)
      throws IOException, InterruptedException {
    int id = ids.incrementAndGet();
    CompletableFuture<Map<String, Object>> answer = new CompletableFuture<>();
    pending.put(id, answer);
    String message = new JSON().toJSON(Map.of("id", id, "method", method, "params", params));
    socket.sendText(message, true);
    Map<String, Object> reply = await(answer, method);
    if (reply.get("error") != null) {
      throw new IOException(method + " failed: " + reply.get("error"));
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> result = (Map<String, Object>) reply.get("result");
    return result == null ? Map.of() : result;
  }

  private static Map<String, Object> await(CompletableFuture<Map<String, Object>> f, String what)
      throws IOException, InterruptedException {
    try {
      return f.get(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IOException("chromium: no answer to " + what, e);
    }
  }

  @SuppressWarnings("unchecked")
  private void receive(String text) {
    Map<String, Object> m = (Map<String, Object>) new JSON().fromJSON(text);
    Object id = m.get("id");
    if (id != null) {
      CompletableFuture<Map<String, Object>> f = pending.remove(((Number) id).intValue());
      if (f != null) {
        f.complete(m);
      }
      return;
    }
    Map<String, Object> params = (Map<String, Object>) m.getOrDefault("params", Map.of());
    switch (String.valueOf(m.get("method"))) {
      case "Page.loadEventFired":
        CompletableFuture<Map<String, Object>> w = loadWaiter;
        if (w != null) {
          w.complete(params);
        }
        break;
      case "Runtime.exceptionThrown":
        errors.add("exception: " + params.get("exceptionDetails"));
        break;
      case "Runtime.consoleAPICalled":
        if ("error".equals(params.get("type")) || "assert".equals(params.get("type"))) {
          errors.add("console." + params.get("type") + ": " + new JSON().toJSON(params.get("args")));
        }
        break;
      case "Log.entryAdded":
        Map<?, ?> entry = (Map<?, ?>) params.get("entry");
        if (entry != null && "error".equals(entry.get("level"))) {
          errors.add("log: " + entry.get("text") + " " + entry.get("url"));
        }
        break;
      default:
        break;
    }
  }

  /** Assembles text frames into messages for its owner. */
  private static final class Listener implements WebSocket.Listener {
    volatile HeadlessChromium owner; // set before the first command, so before any message
    private final StringBuilder partial = new StringBuilder();

    @Override
    public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
      partial.append(data);
      if (last) {
        String message = partial.toString();
        partial.setLength(0);
        owner.receive(message);
      }
      ws.request(1);
      return null;
    }
  }

  private static void stop(Process p, Path profile) {
    p.destroy();
    try {
      if (!p.waitFor(5, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    try (Stream<Path> files = Files.walk(profile)) {
      files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException | UncheckedIOException e) {
      // A temporary directory left behind is harmless.
    }
  }
}
