package dev.weir.servlet;

import dev.weir.Permit;
import dev.weir.Priority;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.stream.IntStream;

/**
 * The request an admitted request's chain sees: the container's request, with {@link
 * WeirFilter#PERMIT_ATTRIBUTE} and {@link WeirFilter#PRIORITY_ATTRIBUTE} answered from this
 * wrapper's fields rather than stored in the request's attributes. Storing them would create the
 * container's attribute map for a request that has none (about 220 bytes in Jetty 12) on every
 * admitted request; a wrapper that a container thread reuses allocates nothing.
 *
 * <h2>Reuse</h2>
 * An {@link Exchange} decided in place keeps its wrapper for the thread's next request ({@link
 * #reusable()}), unless the request may outlive the chain: if the application started async
 * through this wrapper, or on the container's request, it may still hold the wrapper, which then
 * stays with this request for good. The Servlet specification makes a request object valid only
 * within {@code service} or its async cycle, so an application that keeps one past both is already
 * reading a container's recycled object.
 *
 * <p>An application that starts async through this wrapper gets an {@code AsyncContext} whose
 * request, for the no-argument {@code startAsync()}, is the container's own: so before delegating,
 * the two attributes are also stored on the container's request, where the async thread will look.
 * The attributes are read-only: setting or removing them through this wrapper has no effect on what
 * it answers.
 *
 * <p>Not thread-safe while being set up ({@link #wrap}, {@link #recycle}); afterwards, as safe as the
 * container's request.
 */
final class AdmittedRequest extends HttpServletRequestWrapper {
  /** What a cleared wrapper wraps, so that it keeps no finished request reachable. */
  private static final HttpServletRequest NONE = (HttpServletRequest) Proxy.newProxyInstance(
      AdmittedRequest.class.getClassLoader(), new Class<?>[] {HttpServletRequest.class},
      (proxy, method, args) -> {
        throw new IllegalStateException("the request is finished");
      });
  /** Every priority boxed once: answering {@link WeirFilter#PRIORITY_ATTRIBUTE} allocates nothing. */
  private static final Integer[] BOXED =
      IntStream.range(0, Priority.LEVELS).boxed().toArray(Integer[]::new);

  private Permit permit;
  private int priority;
  private volatile boolean escaped;
  /** Whether anyone read the permit through {@link WeirFilter#PERMIT_ATTRIBUTE}. */
  private volatile boolean permitRead;

  AdmittedRequest() {
    super(NONE);
  }

  /** Wraps {@code request}, admitted with {@code permit} at {@code priority}. */
  AdmittedRequest wrap(HttpServletRequest request, Permit permit, int priority) {
    setRequest(request);
    this.permit = permit;
    this.priority = priority;
    // A volatile store costs a fence: reset only what the last request set.
    if (escaped) {
      escaped = false;
    }
    if (permitRead) {
      permitRead = false;
    }
    return this;
  }

  /**
   * Whether the application may hold the permit: it read the attribute, or may still reach this
   * wrapper. Read after the chain returned, before {@link #recycle}.
   */
  boolean permitMayBeHeld() {
    return permitRead || escaped;
  }

  /**
   * Called once its request's chain has returned: forgets the request and returns true if nothing
   * can still reach this wrapper, else returns false and leaves it to its request. A wrapper that
   * wraps nothing returns true.
   */
  boolean recycle() {
    if (permit == null) {
      return true;
    }
    if (escaped || ((HttpServletRequest) getRequest()).isAsyncStarted()) {
      return false;
    }
    forget();
    return true;
  }

  /**
   * {@link #recycle()} for a caller that has already seen, after the chain returned, that the
   * request did not start async and that nothing can still reach this wrapper ({@link
   * #permitMayBeHeld()} false).
   */
  void forget() {
    setRequest(NONE);
    permit = null;
  }

  @Override
  public Object getAttribute(String name) {
    if (WeirFilter.PERMIT_ATTRIBUTE.equals(name)) {
      permitRead = true;
      return permit;
    }
    if (WeirFilter.PRIORITY_ATTRIBUTE.equals(name)) {
      return BOXED[priority];
    }
    if (WeirFilter.ON_JETTY) {
      Object channel = JettyServletChannel.lookup(name, getRequest());
      if (channel != null) {
        return channel;
      }
    }
    return super.getAttribute(name);
  }

  @Override
  public Enumeration<String> getAttributeNames() {
    List<String> names = Collections.list(super.getAttributeNames());
    for (String ours : new String[] {WeirFilter.PERMIT_ATTRIBUTE, WeirFilter.PRIORITY_ATTRIBUTE}) {
      if (!names.contains(ours)) {
        names.add(ours);
      }
    }
    return Collections.enumeration(names);
  }

  @Override
  public AsyncContext startAsync() {
    publish();
    return super.startAsync();
  }

  @Override
  public AsyncContext startAsync(ServletRequest request, ServletResponse response) {
    publish();
    return super.startAsync(request, response);
  }

  /** The request will outlive the chain: store the attributes where its async thread looks. */
  private void publish() {
    escaped = true;
    ServletRequest r = getRequest();
    r.setAttribute(WeirFilter.PERMIT_ATTRIBUTE, permit);
    r.setAttribute(WeirFilter.PRIORITY_ATTRIBUTE, BOXED[priority]);
  }
}
