package dev.weir.http;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One of an adapter's own answers, made once when the adapter is configured and shared by every
 * request it answers: a status, its headers and its body. Immutable and thread-safe.
 *
 * <p>Its headers, in {@link #headers()}, are {@code Retry-After} (whole seconds; omitted when
 * configured as 0), {@code Cache-Control: no-store}, {@value HttpAnswers#OUTCOME_HEADER} naming
 * what happened ({@link #outcome()}) and, unless the body is empty, {@code Content-Type}.
 */
public final class HttpAnswer {
  private final int status;
  private final String outcome;
  private final String retryAfter;
  private final String contentType;
  private final String body;
  private final byte[] bytes;
  private final Map<String, String> headers;

  HttpAnswer(int status, String outcome, long retryAfterSeconds, String contentType,
      String body) {
    this.status = status;
    this.outcome = outcome;
    this.retryAfter = retryAfterSeconds > 0 ? Long.toString(retryAfterSeconds) : null;
    this.contentType = body.isEmpty() ? null : contentType;
    this.body = body;
    this.bytes = body.getBytes(StandardCharsets.UTF_8);
    Map<String, String> h = new LinkedHashMap<>();
    if (retryAfter != null) {
      h.put("Retry-After", retryAfter);
    }
    h.put("Cache-Control", "no-store");
    h.put(HttpAnswers.OUTCOME_HEADER, outcome);
    if (this.contentType != null) {
      h.put("Content-Type", this.contentType);
    }
    this.headers = java.util.Collections.unmodifiableMap(h);
  }

  /** The status. */
  public int status() {
    return status;
  }

  /**
   * The {@value HttpAnswers#OUTCOME_HEADER} value: {@code shed}, {@code queue-full}, {@code
   * queue-timeout}, {@code shutting-down}, {@code cancelled} or {@code deadline}.
   */
  public String outcome() {
    return outcome;
  }

  /** The {@code Retry-After} value in seconds, or null if it is omitted. */
  public String retryAfter() {
    return retryAfter;
  }

  /** The {@code Content-Type}, or null if the body is empty. */
  public String contentType() {
    return contentType;
  }

  /** Every header of the answer, in a fixed order; unmodifiable. */
  public Map<String, String> headers() {
    return headers;
  }

  /** The body, possibly empty. */
  public String body() {
    return body;
  }

  /** The body's length in bytes (UTF-8). */
  public int contentLength() {
    return bytes.length;
  }

  /** Writes the body's bytes (UTF-8) to {@code out}, without flushing or closing it. */
  public void writeBody(OutputStream out) throws IOException {
    out.write(bytes);
  }

  @Override
  public String toString() {
    return status + " " + outcome;
  }
}
