package dev.weir.servlet;

import dev.weir.RejectReason;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/** Writes the filter's own answers: rejections and missed deadlines. */
final class Responder {
  private final Settings settings;

  Responder(Settings settings) {
    this.settings = settings;
  }

  /** The status for a rejection: shed and queue-full are "slow down", the rest "unavailable". */
  int status(RejectReason reason) {
    return reason == RejectReason.SHED || reason == RejectReason.QUEUE_FULL
        ? settings.shedStatus
        : settings.unavailableStatus;
  }

  /**
   * Answers a request the filter refused, which the application never saw. The container sends it,
   * headers and body in one write, when the filter returns or the async cycle completes. Under
   * overload this path answers most requests: closing the stream here, as a deadline answer must,
   * flushed on the request thread instead, and at 3x in the overload experiment it took about
   * three times the CPU (174 profile samples against 60).
   */
  void reject(HttpServletResponse response, RejectReason reason) throws IOException {
    write(response, status(reason), reason.name(), false);
  }

  /**
   * Answers a request whose processing passed its deadline, and closes the output, so that the
   * client has the answer while the application's thread is still inside the container.
   */
  void deadline(HttpServletResponse response) throws IOException {
    write(response, settings.unavailableStatus, "DEADLINE_EXCEEDED", true);
  }

  private void write(HttpServletResponse response, int status, String reason, boolean close)
      throws IOException {
    if (response.isCommitted()) {
      return; // the application answered already; nothing honest can be added
    }
    // Keep what outer filters set (CORS headers, say): a browser must be able to read a 429.
    response.resetBuffer();
    response.setStatus(status);
    if (settings.retryAfterSeconds > 0) {
      response.setHeader("Retry-After", Long.toString(settings.retryAfterSeconds));
    }
    response.setHeader("Cache-Control", "no-store");
    byte[] body = body(status, reason);
    if (body.length > 0) {
      response.setContentType(settings.format == RejectionFormat.JSON
          ? "application/json" : "text/plain;charset=utf-8");
    }
    OutputStream out = response.getOutputStream();
    if (!close) {
      out.write(body); // the container adds the length when it completes the response
      return;
    }
    response.setContentLength(body.length);
    out.write(body);
    out.close();
  }

  private byte[] body(int status, String reason) {
    String text;
    switch (settings.format) {
      case JSON:
        text = "{\"error\":\"" + (status == settings.shedStatus ? "overloaded" : "unavailable")
            + "\",\"reason\":\"" + reason + "\",\"status\":" + status
            + ",\"retryAfterSeconds\":" + settings.retryAfterSeconds + "}";
        break;
      case TEXT:
        text = (status == settings.shedStatus
            ? "Too many requests: the server is overloaded"
            : "Service unavailable") + " (" + reason.toLowerCase(Locale.ROOT) + ")\n";
        break;
      default:
        text = "";
    }
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
