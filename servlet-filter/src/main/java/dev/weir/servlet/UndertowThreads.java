package dev.weir.servlet;

import jakarta.servlet.ServletRequest;

/**
 * On Undertow, how many threads can run the deployment's requests: the deployment's own executor
 * if it has one, else the XNIO worker's task pool, which runs servlet requests by default (8 per
 * I/O thread unless configured, so often a few dozen: the pool a blocking servlet runs out of
 * first). Read reflectively from the request ({@code HttpServletRequestImpl}), so no Undertow
 * class is needed; any failure reads as unknown. Runs once per filter (see {@link
 * dev.weir.http.ServerThreads}).
 */
final class UndertowThreads {
  /** Undertow's servlet request, the request a filter sees first on Undertow. */
  private static final String REQUEST = "io.undertow.servlet.spec.HttpServletRequestImpl";

  private UndertowThreads() {}

  /**
   * The threads that can run the deployment's requests; 0 if its executor reports no maximum
   * (virtual threads) or if a read fails; {@link ContainerReflection#NOT_THIS_CONTAINER} if {@code
   * request} is not Undertow's.
   */
  static int of(ServletRequest request) {
    ServletRequest r = ContainerReflection.unwrap(request);
    if (ContainerReflection.classNamed(r, REQUEST) == null) {
      return ContainerReflection.NOT_THIS_CONTAINER;
    }
    try {
      Object context = ContainerReflection.call(r, "getServletContext");
      Object deployment = ContainerReflection.call(context, "getDeployment");
      Object executor = ContainerReflection.call(deployment, "getExecutor");
      if (executor != null) {
        return ContainerReflection.executorMaximum(executor);
      }
      Object exchange = ContainerReflection.call(r, "getExchange");
      Object worker = ContainerReflection.call(
          ContainerReflection.call(exchange, "getConnection"), "getWorker");
      return ContainerReflection.count(
          ContainerReflection.call(worker, "getMXBean"), "getMaxWorkerPoolSize");
    } catch (ReflectiveOperationException | RuntimeException e) {
      return 0; // another Undertow's layout, or a security manager's refusal
    }
  }
}
