package dev.weir.servlet;

import jakarta.servlet.ServletRequest;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * On Tomcat, how many threads can run the connector's requests. Two reads, the first that finds
 * a number wins:
 *
 * <ol>
 *   <li><b>The connector.</b> Tomcat's request facade holds the connector's request, which names
 *       its connector, whose protocol handler runs requests on an executor: Tomcat's own pool,
 *       a shared {@code <Executor>} or a {@link java.util.concurrent.ThreadPoolExecutor}, each of
 *       which reports its maximum. Needs no MBean, so it works where the registry is off (Spring
 *       Boot's default). The facade's field is not public API: it is read reflectively, and any
 *       failure reads as unknown.
 *   <li><b>The MBean.</b> The {@code ThreadPool} MBean Tomcat registers for each connector
 *       ({@code Catalina:type=ThreadPool,name="http-nio-8080"} standalone, domain {@code Tomcat}
 *       embedded): the one whose {@code localPort} is the request's.
 * </ol>
 *
 * <p>Both are reflective or JMX only, so no Tomcat class is needed to load this one. Each runs
 * once per filter (see {@link dev.weir.http.ServerThreads}).
 */
final class TomcatThreads {
  /** Tomcat's request facade, the request a filter sees first on Tomcat. */
  private static final String FACADE = "org.apache.catalina.connector.RequestFacade";

  private TomcatThreads() {}

  /**
   * The threads that can run the connector's requests; 0 if neither read finds them, if virtual
   * threads run the requests (an executor that reports no maximum), or if a read is refused;
   * {@link ContainerReflection#NOT_THIS_CONTAINER} if {@code request} is not Tomcat's (then JMX is
   * not asked, nor started).
   */
  static int of(ServletRequest request) {
    int threads = fromConnector(request);
    return threads != 0 ? threads : fromMBean(request);
  }

  /**
   * The maximum of the executor of the connector that received {@code request}, 0 if unknown, or
   * {@link ContainerReflection#NOT_THIS_CONTAINER}.
   */
  static int fromConnector(ServletRequest request) {
    ServletRequest r = ContainerReflection.unwrap(request);
    Class<?> facade = ContainerReflection.classNamed(r, FACADE);
    if (facade == null) {
      return ContainerReflection.NOT_THIS_CONTAINER;
    }
    try {
      Field inner = facade.getDeclaredField("request");
      inner.setAccessible(true);
      Object connector = ContainerReflection.call(inner.get(r), "getConnector");
      Object protocol = ContainerReflection.call(connector, "getProtocolHandler");
      return ContainerReflection.executorMaximum(
          ContainerReflection.call(protocol, "getExecutor"));
    } catch (ReflectiveOperationException | RuntimeException e) {
      return 0; // another Tomcat's layout, or a security manager's refusal
    }
  }

  /** The {@code maxThreads} of the ThreadPool MBean whose {@code localPort} is the request's. */
  static int fromMBean(ServletRequest request) {
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
        return ContainerReflection.positive(attribute(jmx, n, "maxThreads"));
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
