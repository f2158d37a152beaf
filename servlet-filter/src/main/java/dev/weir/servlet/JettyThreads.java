package dev.weir.servlet;

import jakarta.servlet.ServletRequest;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ThreadPool;

/**
 * On Jetty 12 (ee10), how many of the server's threads can run requests: what a request that runs
 * synchronously may hold. Loaded only when those classes are visible to the filter (see {@link
 * WeirFilter}).
 */
final class JettyThreads {
  private JettyThreads() {}

  /**
   * The threads of the server that serves {@code request} that can run requests: a {@link
   * QueuedThreadPool}'s maximum less what its connectors leased (acceptors and selectors), another
   * sized pool's maximum; 0 if that is unknown, or if virtual threads run the requests, which then
   * hold no pool thread. A request without a connector, or another container's, may throw, which
   * the filter reads as not Jetty's.
   */
  static int of(ServletRequest request) {
    ServletContextRequest r = ServletContextRequest.getServletContextRequest(request);
    if (r == null) {
      return 0; // not a request of Jetty's servlet context
    }
    ThreadPool pool = r.getConnectionMetaData().getConnector().getServer().getThreadPool();
    if (pool instanceof QueuedThreadPool) {
      QueuedThreadPool q = (QueuedThreadPool) pool;
      return q.getVirtualThreadsExecutor() != null ? 0 : q.getMaxAvailableThreads();
    }
    return pool instanceof ThreadPool.SizedThreadPool
        ? ((ThreadPool.SizedThreadPool) pool).getMaxThreads() : 0;
  }
}
