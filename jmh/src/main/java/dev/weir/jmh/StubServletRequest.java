package dev.weir.jmh;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletMapping;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.MappingMatch;
import java.lang.reflect.Proxy;
import java.util.Collections;
import java.util.Enumeration;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.util.Attributes;

/**
 * A servlet request as the filter's fast path sees one in Jetty 12, without a server: the headers
 * are Jetty's own {@link HttpFields} and the attributes Jetty's own {@link Attributes.Lazy}, whose
 * map is created by the first {@code setAttribute}, as on a real request. A new one per request,
 * like Jetty's. Any method the fast path is not expected to call throws.
 */
final class StubServletRequest extends HttpServletRequestWrapper {
  private static final HttpServletRequest UNEXPECTED = (HttpServletRequest) Proxy.newProxyInstance(
      StubServletRequest.class.getClassLoader(), new Class<?>[] {HttpServletRequest.class},
      (proxy, method, args) -> {
        throw new UnsupportedOperationException("not on the fast path: " + method.getName());
      });

  private final HttpFields headers;
  private final HttpServletMapping mapping;
  private final Attributes attributes = new Attributes.Lazy();

  StubServletRequest(HttpFields headers, HttpServletMapping mapping) {
    super(UNEXPECTED);
    this.headers = headers;
    this.mapping = mapping;
  }

  /** The mapping of a servlet at {@code pattern}, as the matching servlet's mapping reports it. */
  static HttpServletMapping mapping(String pattern) {
    return new HttpServletMapping() {
      @Override
      public String getMatchValue() {
        return pattern.substring(1);
      }

      @Override
      public String getPattern() {
        return pattern;
      }

      @Override
      public String getServletName() {
        return "hello";
      }

      @Override
      public MappingMatch getMappingMatch() {
        return MappingMatch.EXACT;
      }
    };
  }

  @Override
  public DispatcherType getDispatcherType() {
    return DispatcherType.REQUEST;
  }

  @Override
  public Object getAttribute(String name) {
    return attributes.getAttribute(name);
  }

  @Override
  public void setAttribute(String name, Object o) {
    attributes.setAttribute(name, o);
  }

  @Override
  public void removeAttribute(String name) {
    attributes.removeAttribute(name);
  }

  @Override
  public Enumeration<String> getAttributeNames() {
    return Collections.enumeration(attributes.getAttributeNameSet());
  }

  @Override
  public String getHeader(String name) {
    return headers.get(name);
  }

  @Override
  public Enumeration<String> getHeaders(String name) {
    return headers.getValues(name);
  }

  @Override
  public HttpServletMapping getHttpServletMapping() {
    return mapping;
  }

  @Override
  public String getMethod() {
    return "GET";
  }

  @Override
  public boolean isAsyncSupported() {
    return true;
  }

  @Override
  public boolean isAsyncStarted() {
    return false;
  }
}
