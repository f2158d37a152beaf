package dev.weir.http;

import dev.weir.Outcome;
import dev.weir.RejectReason;
import dev.weir.internal.Check;
import java.time.Duration;
import java.util.Locale;

/**
 * What an adapter answers when it does not run the application, and what the application's own
 * answer means for the permit.
 *
 * <table>
 *   <caption>The adapters' own answers</caption>
 *   <tr><th>what happened</th><th>status</th><th>{@value #OUTCOME_HEADER}</th></tr>
 *   <tr><td>{@link RejectReason#SHED}</td><td>shed status, default 429</td><td>shed</td></tr>
 *   <tr><td>{@link RejectReason#QUEUE_FULL}</td><td>shed status</td><td>queue-full</td></tr>
 *   <tr><td>{@link RejectReason#QUEUE_TIMEOUT}</td><td>unavailable status, default 503</td>
 *       <td>queue-timeout</td></tr>
 *   <tr><td>{@link RejectReason#SHUTTING_DOWN}</td><td>unavailable status</td>
 *       <td>shutting-down</td></tr>
 *   <tr><td>{@link RejectReason#CANCELLED}</td><td>unavailable status</td><td>cancelled</td></tr>
 *   <tr><td>the processing deadline passed first</td><td>unavailable status</td>
 *       <td>deadline</td></tr>
 * </table>
 *
 * <p>Each carries {@code Retry-After} (default 1 s; 0 omits it), {@code Cache-Control: no-store}
 * and a body in the configured {@link RejectionFormat}; see {@link HttpAnswer}. The answers are
 * made once, at {@link Builder#build()}, so answering allocates nothing.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class HttpAnswers {
  /** The response header naming what happened, on every answer of the adapters' own. */
  public static final String OUTCOME_HEADER = "X-Weir-Outcome";
  /** The default status for {@link RejectReason#SHED} and {@link RejectReason#QUEUE_FULL}. */
  public static final int DEFAULT_SHED_STATUS = 429;
  /** The default status for the other reasons and a missed deadline. */
  public static final int DEFAULT_UNAVAILABLE_STATUS = 503;
  /** The default {@code Retry-After}, 1 s. */
  public static final Duration DEFAULT_RETRY_AFTER = Duration.ofSeconds(1);

  // By RejectReason ordinal.
  private static final String[] TEXTS = {
      "shed under load", "queue full", "waited too long in the queue", "shutting down",
      "cancelled while queued"};

  private static final HttpAnswers DEFAULTS = builder().build();

  private final int shedStatus;
  private final int unavailableStatus;
  private final long retryAfterSeconds;
  private final RejectionFormat format;
  private final HttpAnswer[] rejected = new HttpAnswer[RejectReason.values().length];
  private final HttpAnswer deadline;

  private HttpAnswers(Builder b) {
    this.shedStatus = b.shedStatus;
    this.unavailableStatus = b.unavailableStatus;
    this.retryAfterSeconds = b.retryAfter.toSeconds();
    this.format = b.format;
    for (RejectReason r : RejectReason.values()) {
      boolean shed = r == RejectReason.SHED || r == RejectReason.QUEUE_FULL;
      rejected[r.ordinal()] = answer(shed, r.name(), TEXTS[r.ordinal()]);
    }
    this.deadline = answer(false, "DEADLINE_EXCEEDED", "the request took too long");
  }

  private HttpAnswer answer(boolean shed, String reason, String text) {
    int status = shed ? shedStatus : unavailableStatus;
    String outcome = reason.equals("DEADLINE_EXCEEDED") ? "deadline"
        : reason.toLowerCase(Locale.ROOT).replace('_', '-');
    switch (format) {
      case JSON:
        return new HttpAnswer(status, outcome, retryAfterSeconds, "application/json",
            "{\"error\":\"" + (shed ? "overloaded" : "unavailable") + "\",\"reason\":\"" + reason
                + "\",\"status\":" + status + ",\"retryAfterSeconds\":" + retryAfterSeconds
                + "}");
      case TEXT:
        return new HttpAnswer(status, outcome, retryAfterSeconds, "text/plain; charset=utf-8",
            (shed ? "Too many requests: " : "Service unavailable: ") + text + "\n");
      default:
        return new HttpAnswer(status, outcome, retryAfterSeconds, null, "");
    }
  }

  /** The answers with every default: 429, 503, {@code Retry-After: 1}, text bodies. */
  public static HttpAnswers defaults() {
    return DEFAULTS;
  }

  /** A builder; every setting has a default. */
  public static Builder builder() {
    return new Builder();
  }

  /** The answer to a request that was not admitted for {@code reason}. */
  public HttpAnswer rejected(RejectReason reason) {
    return rejected[reason.ordinal()];
  }

  /** The answer to an admitted request whose processing deadline passed before it answered. */
  public HttpAnswer deadline() {
    return deadline;
  }

  /** The status for shed requests and a full queue. */
  public int shedStatus() {
    return shedStatus;
  }

  /** The status for queue timeouts, shutdown, cancellation and missed deadlines. */
  public int unavailableStatus() {
    return unavailableStatus;
  }

  /** The {@code Retry-After} in whole seconds, 0 if omitted. */
  public long retryAfterSeconds() {
    return retryAfterSeconds;
  }

  /** The body format. */
  public RejectionFormat format() {
    return format;
  }

  /**
   * The outcome an admitted request's status means, the same in every adapter: below 500 {@link
   * Outcome#SUCCESS}; 503 and 504 {@link Outcome#DROPPED}, since the application reports that it
   * is itself overloaded or that something it waited for timed out, both signs of load; any other
   * status from 500 up {@link Outcome#ERROR}, a failure that says nothing about capacity.
   */
  public static Outcome outcomeOf(int status) {
    if (status < 500) {
      return Outcome.SUCCESS;
    }
    return status == 503 || status == 504 ? Outcome.DROPPED : Outcome.ERROR;
  }

  /**
   * Settings for {@link HttpAnswers}. Every setting has a default; an invalid value throws {@link
   * IllegalArgumentException} naming the setting. Not thread-safe.
   */
  public static final class Builder {
    private int shedStatus = DEFAULT_SHED_STATUS;
    private int unavailableStatus = DEFAULT_UNAVAILABLE_STATUS;
    private Duration retryAfter = DEFAULT_RETRY_AFTER;
    private RejectionFormat format = RejectionFormat.TEXT;

    private Builder() {}

    /** The status for shed requests and a full queue, 400..599. Default 429. */
    public Builder shedStatus(int status) {
      this.shedStatus = Check.inRange("shedStatus", status, 400, 599);
      return this;
    }

    /**
     * The status for queue timeouts, shutdown, cancellation and missed deadlines, 400..599.
     * Default 503.
     */
    public Builder unavailableStatus(int status) {
      this.unavailableStatus = Check.inRange("unavailableStatus", status, 400, 599);
      return this;
    }

    /**
     * The {@code Retry-After}, in whole seconds (rounded down); zero omits it. Default 1 s.
     *
     * @throws IllegalArgumentException if negative, or above zero but under a second: rounded
     *     down it would omit the header the setting asks for
     */
    public Builder retryAfter(Duration retryAfter) {
      Check.notNegative("retryAfter", retryAfter);
      if (!retryAfter.isZero() && retryAfter.toSeconds() == 0) {
        throw new IllegalArgumentException("retryAfter must be zero (no Retry-After) or at least"
            + " one second, was " + retryAfter);
      }
      this.retryAfter = retryAfter;
      return this;
    }

    /** The body format. Default {@link RejectionFormat#TEXT}. */
    public Builder format(RejectionFormat format) {
      this.format = Check.notNull("format", format);
      return this;
    }

    public HttpAnswers build() {
      return new HttpAnswers(this);
    }
  }
}
