package dev.weir.servlet;

import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletRequestWrapper;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

/**
 * Reads a container's own objects without compiling against it: the filter runs on containers
 * whose classes it must not need. Used once per filter, to read a pool's size (see {@link
 * JettyThreads}, {@link TomcatThreads}, {@link UndertowThreads}); every failure is the caller's
 * to read as unknown.
 */
final class ContainerReflection {
  /** What a container's read returns for a request that is not that container's. */
  static final int NOT_THIS_CONTAINER = -1;

  private ContainerReflection() {}

  /** The container's own request under any wrappers earlier filters put around it. */
  static ServletRequest unwrap(ServletRequest request) {
    ServletRequest r = request;
    while (r instanceof ServletRequestWrapper) {
      r = ((ServletRequestWrapper) r).getRequest();
    }
    return r;
  }

  /** The class named {@code name} among {@code o}'s class and its superclasses, or null. */
  static Class<?> classNamed(Object o, String name) {
    for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
      if (name.equals(c.getName())) {
        return c;
      }
    }
    return null;
  }

  /**
   * {@code target.name()}, a public method without arguments, called through a public class or
   * interface that declares it (an object of a private class may implement a public interface).
   *
   * @throws NoSuchMethodException if no public type of {@code target} declares it, or target is
   *     null
   */
  static Object call(Object target, String name) throws ReflectiveOperationException {
    if (target == null) {
      throw new NoSuchMethodException(name + " on null");
    }
    Method m = accessible(target.getClass(), name);
    if (m == null) {
      throw new NoSuchMethodException(name + " on " + target.getClass().getName());
    }
    return m.invoke(target);
  }

  private static Method accessible(Class<?> c, String name) {
    if (c == null) {
      return null;
    }
    if (Modifier.isPublic(c.getModifiers())) {
      try {
        return c.getMethod(name);
      } catch (NoSuchMethodException e) {
        return null; // a public class that does not have it: neither do its supertypes
      }
    }
    for (Class<?> i : c.getInterfaces()) {
      Method m = accessible(i, name);
      if (m != null) {
        return m;
      }
    }
    return accessible(c.getSuperclass(), name);
  }

  /**
   * The most threads an executor reports: {@code getMaximumPoolSize()} (a JDK pool, Tomcat's,
   * JBoss Threads'), else {@code getMaxThreads()} (Tomcat's shared {@code <Executor>}); 0 if it
   * reports neither (virtual threads, a plain {@code Executor}) or not a positive number.
   */
  static int executorMaximum(Object executor) throws ReflectiveOperationException {
    return count(executor, "getMaximumPoolSize", "getMaxThreads");
  }

  /**
   * The first of {@code getters} that {@code target} has, called, as a count of threads: 0 if it
   * has none of them, or if it returns anything but a positive {@code int}.
   */
  static int count(Object target, String... getters) throws ReflectiveOperationException {
    for (String getter : getters) {
      Object value;
      try {
        value = call(target, getter);
      } catch (NoSuchMethodException e) {
        continue; // not this kind of object
      }
      return positive(value);
    }
    return 0;
  }

  /** {@code value} if it is a positive {@code Integer}, else 0. */
  static int positive(Object value) {
    return value instanceof Integer && (Integer) value > 0 ? (Integer) value : 0;
  }
}
