package dev.weir.servlet;

import jakarta.servlet.ServletRequest;
import java.lang.management.ManagementFactory;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * On Tomcat, how many of the connector's threads can run requests, read from the {@code
 * ThreadPool} MBean Tomcat registers for each connector ({@code Catalina:type=ThreadPool,
 * name="http-nio-8080"} standalone, domain {@code Tomcat} embedded): the one whose {@code
 * localPort} is the request's. An embedded Tomcat whose MBean registry is off (Spring Boot's
 * default) registers none, and then nothing is read. Only JMX, so no Tomcat class is needed.
 */
final class TomcatThreads {
  private TomcatThreads() {}

  /**
   * The connector's {@code maxThreads}; 0 if no such MBean is found, if the connector runs its
   * requests on virtual threads or on a shared executor (Tomcat then reports no maximum), or if
   * JMX refuses.
   */
  static int of(ServletRequest request) {
    int port = request.getLocalPort();
    if (port <= 0) {
      return 0;
    }
    try {
      MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
      for (ObjectName n : jmx.queryNames(new ObjectName("*:type=ThreadPool,*"), null)) {
        if (!Integer.valueOf(port).equals(attribute(jmx, n, "localPort"))) {
          continue;
        }
        if (Boolean.TRUE.equals(attribute(jmx, n, "useVirtualThreads"))) {
          return 0;
        }
        Object max = attribute(jmx, n, "maxThreads");
        return max instanceof Integer && (Integer) max > 0 ? (Integer) max : 0;
      }
    } catch (JMException | RuntimeException e) {
      return 0;
    }
    return 0;
  }

  /** The attribute's value, or null if the MBean has no such attribute or will not give it. */
  private static Object attribute(MBeanServer jmx, ObjectName n, String attribute) {
    try {
      return jmx.getAttribute(n, attribute);
    } catch (JMException | RuntimeException e) {
      return null;
    }
  }
}
