package dev.weir.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import jakarta.servlet.ServletContext;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.lang.reflect.Proxy;
import org.junit.jupiter.api.Test;

/**
 * The reads of a container's threads on a request of no container they know: each says so
 * ({@link ContainerReflection#NOT_THIS_CONTAINER}), and Tomcat's does not go on to JMX, whose
 * first use starts the platform MBean server on a request thread. (Each container's own read is
 * tested on that container: {@code TomcatHttpTest}, {@code UndertowHttpTest}, {@code
 * Ee11HttpTest}, {@code ContainerThreadsHttpTest}.)
 */
class ContainerReadsTest {
  /** A request of no known container; any call but getServletContext fails the test. */
  private static HttpServletRequest foreign(boolean contextThrows) {
    ServletContext context = (ServletContext) Proxy.newProxyInstance(
        ContainerReadsTest.class.getClassLoader(), new Class<?>[] {ServletContext.class},
        (proxy, method, args) -> {
          throw new AssertionError("asked the context " + method.getName());
        });
    return (HttpServletRequest) Proxy.newProxyInstance(ContainerReadsTest.class.getClassLoader(),
        new Class<?>[] {HttpServletRequest.class}, (proxy, method, args) -> {
          if (method.getName().equals("getServletContext")) {
            if (contextThrows) {
              throw new IllegalStateException("no context");
            }
            return context;
          }
          throw new AssertionError("asked the request " + method.getName()); // getLocalPort: JMX
        });
  }

  @Test
  void eachReadSaysARequestOfAnotherContainerIsNotItsOwn() {
    for (boolean contextThrows : new boolean[] {false, true}) {
      HttpServletRequest r = foreign(contextThrows);
      assertEquals(ContainerReflection.NOT_THIS_CONTAINER, JettyThreads.of(r));
      assertEquals(ContainerReflection.NOT_THIS_CONTAINER, UndertowThreads.of(r));
      assertEquals(ContainerReflection.NOT_THIS_CONTAINER, TomcatThreads.of(r));
      assertEquals(ContainerReflection.NOT_THIS_CONTAINER,
          TomcatThreads.of(new HttpServletRequestWrapper(r)));
    }
  }
}
