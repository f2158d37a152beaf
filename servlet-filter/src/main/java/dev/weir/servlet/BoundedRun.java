package dev.weir.servlet;

import dev.weir.Outcome;
import dev.weir.Permit;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One admitted request in bounded-response-time mode: the application writes into a {@link
 * BufferedResponse}; whichever comes first, the application committing its response (returning,
 * flushing, closing, sending an error or redirect, writing past the cap) or the permit's deadline,
 * answers the client, and the other is silenced.
 */
final class BoundedRun {
  private static final Logger LOG = Logger.getLogger(BoundedRun.class.getName());
  // The deadline answer is a few hundred bytes into an untouched response; waiting longer than
  // this for it means the connection is stuck, and the container will deal with that.
  private static final long ANSWER_WAIT_SECONDS = 10;

  private final WeirFilter filter;
  private final HttpServletRequest request;
  private final HttpServletResponse response;
  private final Permit permit;
  private final BufferedResponse buffered;
  private final CountDownLatch answered = new CountDownLatch(1);

  BoundedRun(WeirFilter filter, HttpServletRequest request, HttpServletResponse response,
      Permit permit) {
    this.filter = filter;
    this.request = request;
    this.response = response;
    this.permit = permit;
    this.buffered = new BufferedResponse(response, filter.settings().maxBufferedBytes,
        carriesTrailers(request.getProtocol()));
  }

  /**
   * Runs the chain and answers. The permit is released exactly once on every path: here, in the
   * {@code finally}, unless an async listener took it over; a response that cannot be written
   * (the client reset) is released as {@code ERROR} and the exception goes on to the container.
   */
  void run(FilterChain chain) throws IOException, ServletException {
    Outcome outcome = Outcome.ERROR;
    boolean handedOff = false; // an async listener releases the permit
    try {
      permit.onDeadline(this::deadlinePassed);
      Throwable failure = null;
      try {
        chain.doFilter(request, buffered);
      } catch (IOException | ServletException | RuntimeException | Error e) {
        failure = e;
      }
      if (buffered.finish()) {
        if (failure != null) {
          rethrow(failure);
        }
        if (request.isAsyncStarted()) {
          // The application went async: what it wrote so far goes out, the rest streams through.
          buffered.passThrough();
          handedOff = Exchange.releaseWhenDone(request, response, permit);
        } else {
          int status = buffered.getStatus();
          buffered.commit();
          outcome = Exchange.outcomeOf(status);
        }
        return;
      }
      // The deadline answer won. Let it finish before the response goes back to the container.
      awaitAnswer();
      if (failure != null) {
        LOG.log(Level.FINE, "application failed after its deadline answer", failure);
      }
      outcome = Outcome.DROPPED; // held until now: the application's thread was busy
      if (request.isAsyncStarted()) {
        handedOff = Exchange.follow(request, new Exchange.Completion(permit, response,
            Outcome.DROPPED));
      }
    } finally {
      if (!handedOff) {
        permit.release(outcome);
      }
    }
  }

  /** On the timer thread: claim the response, then write the answer on a Weir thread. */
  private void deadlinePassed() {
    if (!buffered.expire()) {
      return;
    }
    Runnable write = () -> {
      try {
        WeirFilter.answer(response, filter.answers().deadline(), true);
      } catch (IOException | RuntimeException e) {
        LOG.log(Level.FINE, "could not write the deadline answer (client gone?)", e);
      } finally {
        answered.countDown();
      }
    };
    try {
      filter.deadlinePool().execute(write);
    } catch (RuntimeException e) {
      write.run(); // the pool is closed: the filter is being destroyed
    }
  }

  private void awaitAnswer() {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          if (!answered.await(ANSWER_WAIT_SECONDS, TimeUnit.SECONDS)) {
            LOG.warning("deadline answer not written within " + ANSWER_WAIT_SECONDS + "s");
          }
          return;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Whether the protocol has trailers: HTTP/1.1 and later, as containers check. */
  private static boolean carriesTrailers(String protocol) {
    return !("HTTP/1.0".equalsIgnoreCase(protocol) || "HTTP/0.9".equalsIgnoreCase(protocol));
  }

  private static void rethrow(Throwable t) throws IOException, ServletException {
    if (t instanceof IOException) {
      throw (IOException) t;
    }
    if (t instanceof ServletException) {
      throw (ServletException) t;
    }
    if (t instanceof RuntimeException) {
      throw (RuntimeException) t;
    }
    throw (Error) t;
  }
}
