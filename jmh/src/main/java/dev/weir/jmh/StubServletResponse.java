package dev.weir.jmh;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.lang.reflect.Proxy;

/**
 * A servlet response for {@link FilterPathBenchmark}: a status, headers that are dropped, and a
 * body that is discarded. Reused: {@link #reset()} before each request. Any method the filter is
 * not expected to call throws.
 */
final class StubServletResponse extends HttpServletResponseWrapper {
  private static final HttpServletResponse UNEXPECTED =
      (HttpServletResponse) Proxy.newProxyInstance(StubServletResponse.class.getClassLoader(),
          new Class<?>[] {HttpServletResponse.class}, (proxy, method, args) -> {
            throw new UnsupportedOperationException("not expected: " + method.getName());
          });
  private static final ServletOutputStream DISCARD = new ServletOutputStream() {
    @Override
    public boolean isReady() {
      return true;
    }

    @Override
    public void setWriteListener(WriteListener listener) {}

    @Override
    public void write(int b) {}

    @Override
    public void write(byte[] b, int off, int len) {}
  };

  private int status = 200;

  StubServletResponse() {
    super(UNEXPECTED);
  }

  @Override
  public void reset() {
    status = 200;
  }

  @Override
  public int getStatus() {
    return status;
  }

  @Override
  public void setStatus(int sc) {
    status = sc;
  }

  @Override
  public boolean isCommitted() {
    return false;
  }

  @Override
  public void resetBuffer() {}

  @Override
  public void setHeader(String name, String value) {}

  @Override
  public void setContentType(String type) {}

  @Override
  public void setContentLength(int len) {}

  @Override
  public ServletOutputStream getOutputStream() {
    return DISCARD;
  }
}
