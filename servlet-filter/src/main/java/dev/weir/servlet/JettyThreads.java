package dev.weir.servlet;

import jakarta.servlet.ServletRequest;

/**
 * On Jetty 12, how many of the server's threads can run requests: what a request that runs
 * synchronously may hold. Read from the request's servlet context, whose context handler names its
 * server and so its pool: the same path in every Jetty 12 environment (ee10, ee11), and read
 * reflectively, so that no environment's classes are needed; any failure reads as unknown. Runs
 * once per filter (see {@link dev.weir.http.ServerThreads}).
 */
final class JettyThreads {
  /** Every Jetty class lies under this package. */
  private static final String JETTY = "org.eclipse.jetty.";

  private JettyThreads() {}

  /**
   * The threads of the server that serves {@code request} that can run requests: a {@code
   * QueuedThreadPool}'s maximum less what its connectors leased (acceptors and selectors), another
   * sized pool's maximum; 0 if that is unknown, or if virtual threads run the requests, which then
   * hold no pool thread; {@link ContainerReflection#NOT_THIS_CONTAINER} if {@code request} is not
   * Jetty's.
   */
  static int of(ServletRequest request) {
    Object context;
    try {
      context = request.getServletContext();
    } catch (RuntimeException e) {
      context = null; // no context to read: not a container's request as it serves it
    }
    if (context == null || !context.getClass().getName().startsWith(JETTY)) {
      return ContainerReflection.NOT_THIS_CONTAINER;
    }
    try {
      Object handler = ContainerReflection.call(context, "getContextHandler");
      Object pool = ContainerReflection.call(
          ContainerReflection.call(handler, "getServer"), "getThreadPool");
      try {
        if (ContainerReflection.call(pool, "getVirtualThreadsExecutor") != null) {
          return 0;
        }
      } catch (NoSuchMethodException e) {
        // a pool that cannot run virtual threads
      }
      // A QueuedThreadPool's, else another sized pool's.
      return ContainerReflection.count(pool, "getMaxAvailableThreads", "getMaxThreads");
    } catch (ReflectiveOperationException | RuntimeException e) {
      return 0; // another Jetty's layout, or a pool of no size
    }
  }
}
