package dev.weir.jetty;

import dev.weir.RejectReason;
import dev.weir.http.HttpAnswer;
import dev.weir.http.HttpAnswers;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The handler's own answers, from {@link HttpAnswers}, with their bodies encoded once, written to
 * a Jetty core {@link Response} in one write that also completes the exchange. Immutable.
 */
final class Answers {
  private final HttpAnswers answers;
  private final byte[][] rejected = new byte[RejectReason.values().length][];
  private final byte[] deadline;

  Answers(HttpAnswers answers) {
    this.answers = answers;
    for (RejectReason r : RejectReason.values()) {
      rejected[r.ordinal()] = bytes(answers.rejected(r));
    }
    this.deadline = bytes(answers.deadline());
  }

  private static byte[] bytes(HttpAnswer a) {
    return a.body().getBytes(StandardCharsets.UTF_8);
  }

  HttpAnswers answers() {
    return answers;
  }

  /** Writes the answer to a request not admitted for {@code reason}, completing {@code done}. */
  void reject(Response response, RejectReason reason, Callback done) {
    write(response, answers.rejected(reason), rejected[reason.ordinal()], done);
  }

  /** Writes the answer to a request whose deadline passed first, completing {@code done}. */
  void deadline(Response response, Callback done) {
    write(response, answers.deadline(), deadline, done);
  }

  /**
   * Status, headers and body in one last write. Headers set by outer handlers (CORS, say) are
   * kept, so that a browser can read a 429; a response already committed cannot be answered and
   * fails {@code done}, which ends the exchange.
   */
  private static void write(Response response, HttpAnswer a, byte[] body, Callback done) {
    if (response.isCommitted()) {
      done.failed(new IllegalStateException("committed before Weir's " + a + " answer"));
      return;
    }
    response.setStatus(a.status());
    HttpFields.Mutable h = response.getHeaders();
    if (a.retryAfter() != null) {
      h.put(HttpHeader.RETRY_AFTER, a.retryAfter());
    }
    h.put(HttpHeader.CACHE_CONTROL, "no-store");
    h.put(HttpAnswers.OUTCOME_HEADER, a.outcome());
    h.remove(HttpHeader.CONTENT_ENCODING);
    if (a.contentType() != null) {
      h.put(HttpHeader.CONTENT_TYPE, a.contentType());
    } else {
      h.remove(HttpHeader.CONTENT_TYPE);
    }
    h.put(HttpHeader.CONTENT_LENGTH, body.length);
    response.write(true, body.length == 0 ? null : ByteBuffer.wrap(body), done);
  }
}
