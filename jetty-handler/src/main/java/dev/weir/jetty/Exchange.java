package dev.weir.jetty;

import dev.weir.AdmissionCallback;
import dev.weir.LoadShedder;
import dev.weir.Outcome;
import dev.weir.Permit;
import dev.weir.RejectReason;
import dev.weir.Ticket;
import dev.weir.http.HttpAnswers;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * One request's way through the handler: its submission, its wait, its run and its permit. It is
 * at once the request's {@link AdmissionCallback}, the request the application is given, the
 * {@link Callback} the application completes (which releases the permit), the request's failure
 * listener (which withdraws it from the queue) and the task that runs it on a server thread once
 * admitted from the queue: one object a request, allocated when it arrives.
 *
 * <p>As the application's request it is Jetty's, wrapped, with {@link WeirHandler#PERMIT_ATTRIBUTE}
 * answered from here rather than stored in Jetty's attributes, which would create their map (about
 * 220 bytes) for a request that has none. The attribute is read-only: setting or removing it has
 * no effect on what this answers.
 *
 * <p>The admission callback may fire inside {@code submit}, on the handling thread, or later on a
 * releasing thread or the timer thread. {@code phase} settles who acts on the decision: the
 * handling thread, if it finds it {@code DECIDED} after {@code submit}; otherwise the callback,
 * which hands the work to the request's context executor, never writing on the timer thread.
 * {@code done} makes the application's completion count once.
 *
 * <p><b>Recycling.</b> The permit of a request decided during {@code submit} is {@linkplain
 * Permit#recycle recycled} once the application's completion released it, unless the
 * application read it from the attribute or a bounded response holds it. Nothing else can reach
 * it: the ticket (the same object) is stored for the failure listener only when the request was
 * parked in the queue, and a permit that waited is never recycled.
 */
final class Exchange extends Request.Wrapper
    implements AdmissionCallback, Callback, Consumer<Throwable>, Runnable {
  private static final Logger LOG = Logger.getLogger(Exchange.class.getName());
  private static final int SUBMITTING = 0;
  private static final int DECIDED = 1;
  private static final int PARKED = 2;
  private static final VarHandle PHASE;
  private static final VarHandle DONE;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      PHASE = l.findVarHandle(Exchange.class, "phase", int.class);
      DONE = l.findVarHandle(Exchange.class, "done", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final WeirHandler handler;
  private final Handler next;
  private final Response response;
  private final Callback callback;
  @SuppressWarnings("unused") private volatile int phase; // through PHASE
  private volatile boolean done; // set through DONE
  private volatile Permit permit;
  private volatile RejectReason rejected;
  private volatile Ticket ticket;
  private volatile boolean clientGone;
  /** What Jetty reported failed, for the callback this exchange fails if the request was queued. */
  private volatile Throwable clientFailure;
  private volatile BoundedResponse bounded;
  /** Whether the application was handed the permit, as an attribute: then it is never recycled. */
  private volatile boolean permitRead;
  private LoadShedder shedder; // set before submit

  Exchange(WeirHandler handler, Handler next, Request request, Response response,
      Callback callback) {
    super(request);
    this.handler = handler;
    this.next = next;
    this.response = response;
    this.callback = callback;
  }

  /** On the handling thread: submits, then acts here if decided, or leaves it to the callback. */
  boolean start(LoadShedder shedder, int priority) throws Exception {
    this.shedder = shedder;
    getWrapped().addFailureListener(this);
    Ticket t = shedder.submit(priority, this);
    if (PHASE.compareAndSet(this, SUBMITTING, PARKED)) {
      // Stored, then clientGone read; the listener writes clientGone, then reads the ticket:
      // one of the two sees the other's write, so a client gone while queued always cancels.
      ticket = t;
      if (clientGone) {
        t.cancel(); // the client went away before the ticket was known
      }
      return true; // queued: no thread waits; the callback carries on
    }
    Permit p = permit;
    if (p != null) {
      return run(p, true);
    }
    RejectReason reason = rejected;
    if (reason == RejectReason.CANCELLED) {
      failCancelled();
    } else {
      handler.answerWriter().reject(response, reason, callback);
    }
    return true;
  }

  // ------------------------------------------------------------------- AdmissionCallback

  @Override
  public void onAdmitted(Permit p) {
    permit = p;
    if (!PHASE.compareAndSet(this, SUBMITTING, DECIDED)) {
      execute();
    }
  }

  @Override
  public void onRejected(RejectReason reason) {
    rejected = reason;
    if (!PHASE.compareAndSet(this, SUBMITTING, DECIDED)) {
      if (reason == RejectReason.CANCELLED) {
        failCancelled(); // on the thread that cancelled: Jetty's, reporting the failure
      } else {
        execute();
      }
    }
  }

  /** Hands the decision to a server thread: never the timer's, nor a releasing application's. */
  private void execute() {
    try {
      getWrapped().getContext().execute(this);
    } catch (RuntimeException e) {
      // The executor refuses (the server is stopping): answer here, it is one small write.
      LOG.log(Level.FINE, "could not hand a decided request to the server's executor", e);
      Permit p = permit;
      if (p != null) {
        p.release(Outcome.DROPPED);
      }
      handler.answerWriter().reject(response, p != null ? RejectReason.SHUTTING_DOWN : rejected,
          callback);
    }
  }

  /** On a server thread, for a request decided after it was parked. */
  @Override
  public void run() {
    Permit p = permit;
    if (p == null) {
      handler.answerWriter().reject(response, rejected, callback);
      return;
    }
    if (clientGone) {
      // Admitted just as its client left: never run it.
      if (DONE.compareAndSet(this, false, true)) {
        p.release(Outcome.DROPPED);
      }
      failCancelled();
      return;
    }
    p.started(); // handed off to this thread: the latency starts here, not at admission
    try {
      run(p, false);
    } catch (Exception e) {
      failed(e); // not reached: run catches the application's failures
    }
  }

  // -------------------------------------------------------------------------- running

  /**
   * Runs the application with the permit. Whatever it throws fails the callback (once), so Jetty
   * answers its error and the permit is released.
   *
   * @param inline on the handling thread, whose {@code handle} may still return false
   * @return what {@code handle} returns
   */
  private boolean run(Permit p, boolean inline) throws Exception {
    Response res = response;
    if (handler.boundedResponseTime()) {
      BoundedResponse b = new BoundedResponse(getWrapped(), response);
      bounded = b;
      res = b;
      p.onDeadline(this::deadlinePassed);
    }
    boolean handled;
    try {
      handled = next.handle(this, res, this);
    } catch (Throwable x) {
      LOG.log(Level.FINE, "the application threw; failing its callback", x);
      failed(x);
      return true;
    }
    if (handled) {
      // done: it completed before handle returned, so it held this thread while it ran.
      handler.handleReturned(shedder, getWrapped(), done);
      return true;
    }
    BoundedResponse b = bounded;
    if (inline && (b == null || b.claimForApp()) && DONE.compareAndSet(this, false, true)) {
      p.release(Outcome.SUCCESS); // nothing ran: Jetty answers 404 itself
      return false;
    }
    Response.writeError(getWrapped(), res, this, 404); // too late to decline: answer as Jetty would
    return true;
  }

  /** On the timer thread: claim the response, then answer on a server thread. */
  private void deadlinePassed() {
    BoundedResponse b = bounded;
    if (b == null || !b.claimForDeadline()) {
      return;
    }
    Runnable answer = () -> handler.answerWriter().deadline(response, callback);
    try {
      getWrapped().getContext().execute(answer);
    } catch (RuntimeException e) {
      answer.run(); // the server is stopping
    }
  }

  // ------------------------------------------------------------ the application's callback

  @Override
  public void succeeded() {
    if (!DONE.compareAndSet(this, false, true)) {
      return;
    }
    Permit p = permit;
    BoundedResponse b = bounded;
    if (b != null && !b.claimForApp()) {
      p.release(Outcome.DROPPED); // the deadline answered; the application's thread was busy
      return;
    }
    releaseAndRecycle(p, HttpAnswers.outcomeOf(response.getStatus()));
    callback.succeeded();
  }

  /** Releases the permit, and recycles it if nothing but this exchange can reach it. */
  private void releaseAndRecycle(Permit p, Outcome outcome) {
    if (p.release(outcome) && bounded == null && ticket == null) {
      if (!permitRead) {
        p.recycle(); // the core keeps it only if its life left nothing behind
      }
    }
  }

  @Override
  public void failed(Throwable x) {
    if (!DONE.compareAndSet(this, false, true)) {
      return;
    }
    Permit p = permit;
    BoundedResponse b = bounded;
    if (b != null && !b.claimForApp()) {
      p.release(Outcome.DROPPED);
      LOG.log(Level.FINE, "the application failed after its deadline answer", x);
      return;
    }
    releaseAndRecycle(p, Outcome.ERROR);
    callback.failed(x);
  }

  @Override
  public InvocationType getInvocationType() {
    return callback.getInvocationType();
  }

  // ------------------------------------------------------------ the application's request

  @Override
  public Object getAttribute(String name) {
    if (WeirHandler.PERMIT_ATTRIBUTE.equals(name)) {
      permitRead = true;
      return permit;
    }
    return super.getAttribute(name);
  }

  @Override
  public Set<String> getAttributeNameSet() {
    Set<String> names = new HashSet<>(super.getAttributeNameSet());
    names.add(WeirHandler.PERMIT_ATTRIBUTE);
    return names;
  }

  @Override
  public Map<String, Object> asAttributeMap() {
    Map<String, Object> map = new HashMap<>(super.asAttributeMap());
    permitRead = true;
    map.put(WeirHandler.PERMIT_ATTRIBUTE, permit);
    return map;
  }

  // ------------------------------------------------------------------- failure listener

  /** Jetty reports the request failed (client gone, stream reset, idle timeout). */
  @Override
  public void accept(Throwable failure) {
    clientFailure = failure;
    clientGone = true;
    Ticket t = ticket;
    if (t != null) {
      t.cancel(); // still queued: leave at once, and fail the callback (onRejected)
    }
  }

  /**
   * Fails the callback of a request that Jetty reported failed before it ran. Jetty fails it
   * itself when the client is gone, and then ignores this second completion; but Jetty 12.1 also
   * reports to a request's listeners a failure that belongs to its connection's previous request
   * (the completion of that request's error response, run after the connection had moved on:
   * "channel already completed"), and then completes neither callback: without this the request
   * would never be answered.
   */
  private void failCancelled() {
    Throwable f = clientFailure;
    try {
      callback.failed(f != null ? f : new IOException("request failed while queued"));
    } catch (RuntimeException e) {
      LOG.log(Level.FINE, "could not fail a cancelled request's callback", e);
    }
  }
}
