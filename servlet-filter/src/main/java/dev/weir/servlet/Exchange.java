package dev.weir.servlet;

import dev.weir.AdmissionCallback;
import dev.weir.LoadShedder;
import dev.weir.Outcome;
import dev.weir.Permit;
import dev.weir.RejectReason;
import dev.weir.Ticket;
import dev.weir.http.HttpAnswers;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.WeakReference;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One request's way through the filter: its submission, its wait, its run and its permit.
 *
 * <p>The admission callback may fire inside {@code submit}, on the container thread, or later on
 * a releasing thread or the timer thread, possibly while the container thread is still starting
 * async. {@code phase} settles who acts on the decision: the callback, if it finds the request
 * {@code PARKED}; otherwise the container thread, once it sees {@code DECIDED}. A request that
 * cannot suspend (not async-supported, or {@code startAsync} refused) is never {@code PARKED}: its
 * container thread waits in place, on {@code decision}, for {@code DECIDED}. Likewise {@code
 * ran} settles that the chain runs at most once and that a permit whose dispatch never ran is
 * still released.
 *
 * <p><b>Reuse.</b> A request decided during {@code submit} (admitted at once, or shed) is acted on
 * by the container thread alone: nothing else holds the exchange afterwards (the shedder calls a
 * callback once, and no listener or attribute was attached), so the thread keeps it for its next
 * request and the fast path allocates no exchange. One that waited, or was attached to its request
 * for our own async dispatch, is never reused: a listener or a later dispatch may still reach it.
 * The request wrapper the chain sees ({@link AdmittedRequest}) is kept with a reused exchange,
 * unless the application went async and may still hold it. Likewise the permit of a request that
 * the chain finished in place is {@linkplain Permit#recycle recycled} for the thread's next
 * request, unless the application read it or a body guard holds it.
 */
final class Exchange implements AdmissionCallback, AsyncListener {
  private static final Logger LOG = Logger.getLogger(Exchange.class.getName());
  private static final int WAITING = 0;
  private static final int DECIDED = 1;
  private static final int PARKED = 2;
  // Past the queue timeout, so that the shedder, not the container, normally ends the wait.
  private static final long ASYNC_TIMEOUT_MARGIN_MILLIS = 5_000;

  private static final VarHandle PHASE;
  private static final VarHandle RAN;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      PHASE = l.findVarHandle(Exchange.class, "phase", int.class);
      RAN = l.findVarHandle(Exchange.class, "ran", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /**
   * Each container thread's spare exchange, decided in place last time; see the class comment.
   * Held weakly: the container's threads outlive the webapp that loaded this class, and a strong
   * value would hold its class loader; a slot the collector cleared is made anew.
   */
  private static final ThreadLocal<WeakReference<Exchange[]>> SPARE = new ThreadLocal<>();

  // Set for each request before submit; final in spirit (see "Reuse").
  private WeirFilter filter;
  private LoadShedder shedder;
  private HttpServletRequest request;
  private HttpServletResponse response;
  private int priority;
  private volatile int phase;
  private volatile boolean ran;
  private volatile Permit permit;
  private volatile RejectReason rejected;
  private volatile Ticket ticket;
  private volatile AsyncContext async;
  /** The async timeout the container gave, before ours; set before {@code async} is. */
  private long containerTimeout;
  /** Only when the container thread must wait in place; published before it reads the phase. */
  private volatile CountDownLatch decision;
  /** The request the chain sees; kept with a reused exchange while nothing else can reach it. */
  private AdmittedRequest admitted;

  private Exchange() {}

  /**
   * Admits {@code request} through {@code shedder} and acts on the decision: runs the chain, or
   * answers, now or once the request has waited. On the container thread of the first dispatch.
   */
  static void handle(WeirFilter filter, LoadShedder shedder, HttpServletRequest request,
      HttpServletResponse response, int priority, FilterChain chain)
      throws IOException, ServletException {
    WeakReference<Exchange[]> ref = SPARE.get();
    Exchange[] spare = ref == null ? null : ref.get();
    if (spare == null) {
      spare = new Exchange[1];
      SPARE.set(new WeakReference<>(spare));
    }
    Exchange e = spare[0];
    spare[0] = null; // in use; a nested request on this thread (none expected) makes its own
    if (e == null) {
      e = new Exchange();
    }
    e.filter = filter;
    e.shedder = shedder;
    e.request = request;
    e.response = response;
    e.priority = priority;
    if (e.submit(chain)) {
      e.clear();
      spare[0] = e;
    }
  }

  /** Forgets the last request, so that a spare exchange holds nothing of it. */
  private void clear() {
    if (admitted != null && !admitted.recycle()) {
      admitted = null; // the application may still hold it: it stays with its request
    }
    filter = null;
    shedder = null;
    request = null;
    response = null;
    // A volatile store costs a fence: only what this request set is reset (an exchange decided
    // in place never had an async context or a latch).
    phase = WAITING;
    if (ran) {
      ran = false;
    }
    if (permit != null) {
      permit = null;
    }
    if (rejected != null) {
      rejected = null;
    }
  }

  private boolean casPhase(int expect, int update) {
    return PHASE.compareAndSet(this, expect, update);
  }

  private boolean claimRun() {
    return RAN.compareAndSet(this, false, true);
  }

  /**
   * Runs on the container thread of the first dispatch.
   *
   * @return true if the decision came during submit and this exchange may be reused once the
   *     call returns normally
   */
  private boolean submit(FilterChain chain) throws IOException, ServletException {
    Ticket t = shedder.submit(priority, this);
    if (phase == DECIDED) {
      actInPlace(chain); // no listener will look for the ticket: it is not stored
      return true;
    }
    ticket = t;
    // Asked only of a request that waits: an admitted one never suspends, and the answer lies in
    // the container's objects, which a request admitted at once need not touch.
    if (!request.isAsyncSupported()) {
      awaitInPlace();
      actInPlace(chain);
      return false;
    }
    // Our own dispatch, once admitted, must find the exchange on the request.
    request.setAttribute(WeirFilter.EXCHANGE_ATTRIBUTE, this);
    AsyncContext ac;
    try {
      ac = request.startAsync();
    } catch (IllegalStateException e) {
      // An earlier filter or the container will not let this request suspend after all.
      LOG.log(Level.FINE, "cannot suspend a queued request; it waits in place", e);
      // No dispatch of ours will come: nothing may find this exchange on the request.
      request.removeAttribute(WeirFilter.EXCHANGE_ATTRIBUTE);
      awaitInPlace();
      actInPlace(chain);
      return false;
    }
    containerTimeout = ac.getTimeout(); // published with async, below
    ac.setTimeout(TimeUnit.NANOSECONDS.toMillis(shedder.queueTimeoutNanos())
        + ASYNC_TIMEOUT_MARGIN_MILLIS); // at most about 292 years in milliseconds: no overflow
    ac.addListener(this);
    async = ac;
    if (casPhase(WAITING, PARKED)) {
      return false; // the callback resumes the request; this thread goes back to the container
    }
    // Decided while async was starting: act here, through the async context.
    Permit p = permit;
    if (p != null) {
      phase = PARKED;
      dispatch(ac, p);
    } else {
      answer(rejected);
      complete(ac);
    }
    return false;
  }

  private void actInPlace(FilterChain chain) throws IOException, ServletException {
    Permit p = permit;
    if (p != null) {
      ran = true;
      runAdmitted(request, response, chain);
    } else {
      answer(rejected);
    }
  }

  private void awaitInPlace() {
    // The latch is published, then the phase read; decide() writes the phase, then reads the
    // latch: one of the two sees the other's write, so the decision is never missed.
    CountDownLatch decision = new CountDownLatch(1);
    this.decision = decision;
    if (phase == DECIDED) {
      return;
    }
    boolean interrupted = false;
    try {
      long margin = TimeUnit.MILLISECONDS.toNanos(ASYNC_TIMEOUT_MARGIN_MILLIS);
      long queue = shedder.queueTimeoutNanos();
      long bound = queue > Long.MAX_VALUE - margin ? Long.MAX_VALUE : queue + margin;
      for (;;) {
        try {
          if (decision.await(bound, TimeUnit.NANOSECONDS)) {
            return;
          }
          ticket.cancel(); // the shedder's own timeout should have fired; never wait for ever
        } catch (InterruptedException e) {
          interrupted = true;
          ticket.cancel(); // if it lost the race, the decision is about to arrive
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Called by the filter on an ASYNC dispatch: true for the one dispatch that runs the chain,
   * which starts the permit's latency here, not at admission on the releasing thread.
   */
  boolean claimResume() {
    Permit p = permit;
    if (p != null && claimRun()) {
      p.started();
      return true;
    }
    return false;
  }

  // ------------------------------------------------------------------------- AdmissionCallback

  @Override
  public void onAdmitted(Permit p) {
    permit = p;
    if (decide()) {
      return;
    }
    dispatch(async, p);
  }

  @Override
  public void onRejected(RejectReason reason) {
    rejected = reason;
    if (decide() || reason == RejectReason.CANCELLED) {
      return; // whoever cancelled answers (or the client is gone)
    }
    AsyncContext ac = async;
    Runnable answer = () -> {
      answer(reason);
      complete(ac);
    };
    try {
      ac.start(answer); // write on a container thread, not on the timer or a releasing thread
    } catch (RuntimeException e) {
      answer.run(); // the container's executor is gone (shutdown): answer here, it is small
    }
  }

  /** True if the container thread will act on the decision. */
  private boolean decide() {
    boolean inPlace = casPhase(WAITING, DECIDED);
    CountDownLatch d = decision;
    if (d != null) {
      d.countDown();
    }
    return inPlace;
  }

  private void dispatch(AsyncContext ac, Permit p) {
    try {
      // The container keeps the timeout for the request: the application's own async cycle in
      // our dispatch must start with the container's, not with our queue wait's.
      ac.setTimeout(containerTimeout);
    } catch (IllegalStateException e) {
      // Refused once the dispatch that started async has returned, as the Servlet spec allows
      // and Undertow does; a container that refuses starts each async cycle with a new context,
      // at its own timeout, so there is nothing to restore.
    }
    try {
      ac.dispatch();
    } catch (RuntimeException e) {
      // The request completed meanwhile (client gone, async timeout): the chain will never run.
      if (claimRun()) {
        p.release(Outcome.DROPPED);
      }
      LOG.log(Level.FINE, "could not resume an admitted request", e);
    }
  }

  // ------------------------------------------------------------------------------ running

  /** Runs the chain with the permit, on a container thread; releases it when really done. */
  void runAdmitted(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    Permit p = permit;
    AdmittedRequest a = admitted;
    if (a == null) {
      a = new AdmittedRequest();
      admitted = a;
    }
    HttpServletRequest in = BodyGuard.wrap(a.wrap(request, p, priority), p,
        filter.bodyReadTimeoutNanos(shedder));
    try {
      if (filter.boundedResponseTime()) {
        try {
          new BoundedRun(filter, in, response, p).run(chain);
        } catch (IOException | ServletException | RuntimeException | Error e) {
          p.release(Outcome.ERROR); // BoundedRun released already; a second release is ignored
          throw e;
        }
        filter.dispatchReturned(shedder, request, request.isAsyncStarted());
        return;
      }
      try {
        chain.doFilter(in, response);
      } catch (IOException | ServletException | RuntimeException | Error e) {
        p.release(Outcome.ERROR);
        throw e;
      }
      // Read once: Jetty answers it under the request's lock, and nothing can start async on a
      // request whose dispatch has returned.
      boolean async = request.isAsyncStarted();
      filter.dispatchReturned(shedder, request, async);
      if (!releaseWhenDone(request, response, p, async) && !async && in == a
          && !a.permitMayBeHeld()) {
        // Released here, and nothing else holds the permit: no body guard, no async cycle, no
        // read of the attribute; this exchange forgets it in clear().
        a.forget();
        p.recycle();
      }
    } finally {
      BodyGuard.end(in);
    }
  }

  /**
   * Releases now, or when the application's own async cycle ends.
   *
   * @return true if a listener will release the permit, false if it was released here
   */
  static boolean releaseWhenDone(HttpServletRequest request, HttpServletResponse response,
      Permit p) {
    return releaseWhenDone(request, response, p, request.isAsyncStarted());
  }

  /** {@link #releaseWhenDone(HttpServletRequest, HttpServletResponse, Permit)}, async read. */
  private static boolean releaseWhenDone(HttpServletRequest request, HttpServletResponse response,
      Permit p, boolean asyncStarted) {
    if (asyncStarted && follow(request, new Completion(p, response))) {
      return true;
    }
    p.release(outcomeOf(response.getStatus()));
    return false;
  }

  /**
   * Adds {@code listener} to the application's async cycle; false if the cycle ended meanwhile
   * (the caller then releases the permit itself).
   */
  static boolean follow(HttpServletRequest request, AsyncListener listener) {
    try {
      request.getAsyncContext().addListener(listener);
      return true;
    } catch (IllegalStateException e) {
      return false; // completed or dispatched between isAsyncStarted() and here
    }
  }

  /** The outcome an application's status means: {@link HttpAnswers#outcomeOf}, as in Ring. */
  static Outcome outcomeOf(int status) {
    return HttpAnswers.outcomeOf(status);
  }

  private void answer(RejectReason reason) {
    try {
      WeirFilter.answer(response, filter.answers().rejected(reason), false);
    } catch (IOException | RuntimeException e) {
      LOG.log(Level.FINE, "could not write the " + reason + " answer (client gone?)", e);
    }
  }

  private static void complete(AsyncContext ac) {
    try {
      ac.complete();
    } catch (IllegalStateException e) {
      // already completed by the container, for example after the client went away
    }
  }

  // ------------------------------------------------------- AsyncListener, while queued

  @Override
  public void onTimeout(AsyncEvent event) {
    // The container gave up before the shedder did; leave the queue and say so.
    Ticket t = ticket;
    if (t != null && t.cancel()) {
      answer(RejectReason.QUEUE_TIMEOUT);
      complete(event.getAsyncContext());
    }
  }

  @Override
  public void onError(AsyncEvent event) {
    // The client went away, or the container is closing the connection (Jetty does on stop):
    // leave the queue at once, and answer 503 in case anyone is still listening; an empty
    // completion would read as a 200.
    Ticket t = ticket;
    if (t != null && t.cancel()) {
      answer(RejectReason.CANCELLED);
      complete(event.getAsyncContext());
    }
  }

  @Override
  public void onComplete(AsyncEvent event) {
    Ticket t = ticket;
    if (t != null) {
      t.cancel(); // completed by the container while still queued
    }
    Permit p = permit;
    if (p != null && claimRun()) {
      // Our dispatch ran the application without passing through this filter.
      warnNotMappedForAsync();
      p.release(outcomeOf(response.getStatus()));
    }
  }

  @Override
  public void onStartAsync(AsyncEvent event) {
    Permit p = permit;
    if (p != null && claimRun()) {
      // The application went async in our dispatch, which did not pass through this filter:
      // follow its cycle from here.
      warnNotMappedForAsync();
      event.getAsyncContext().addListener(new Completion(p, response));
    }
    // Otherwise the filter ran the chain and follows the application's cycle with Completion.
  }

  private static volatile boolean warned;

  private static void warnNotMappedForAsync() {
    if (!warned) {
      warned = true;
      LOG.warning("WeirFilter is not mapped for the ASYNC dispatcher type: requests admitted "
          + "from the queue run without it (permits are still released at completion, but "
          + "bounded response time does not apply to them). Map it for REQUEST and ASYNC.");
    }
  }

  /**
   * Follows an application's own async cycles and releases the permit at their end. A cycle that
   * never ends (timeout 0, never completed, a client gone that the container does not report) is
   * bounded by the shedder's watchdog, which reclaims the permit as {@code DROPPED} past the
   * deadline plus its grace; the async context is left alone, as it belongs to the application.
   */
  static final class Completion implements AsyncListener {
    private final Permit permit;
    private final HttpServletResponse response;
    private final Outcome forced;

    Completion(Permit permit, HttpServletResponse response) {
      this(permit, response, null);
    }

    Completion(Permit permit, HttpServletResponse response, Outcome forced) {
      this.permit = permit;
      this.response = response;
      this.forced = forced;
    }

    private void release(Outcome outcome) {
      permit.release(outcome);
    }

    @Override
    public void onComplete(AsyncEvent event) {
      release(forced != null ? forced : outcomeOf(response.getStatus()));
    }

    @Override
    public void onTimeout(AsyncEvent event) {
      release(Outcome.DROPPED);
    }

    @Override
    public void onError(AsyncEvent event) {
      release(forced != null ? forced : Outcome.ERROR);
    }

    @Override
    public void onStartAsync(AsyncEvent event) {
      event.getAsyncContext().addListener(this); // listeners last one cycle; follow the next
    }
  }
}
