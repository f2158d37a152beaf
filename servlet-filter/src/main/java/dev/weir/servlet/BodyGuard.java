package dev.weir.servlet;

import dev.weir.Outcome;
import dev.weir.Permit;
import dev.weir.Timer;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.Part;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Enumeration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * Bounds the body-read phase of an admitted request that may carry a body, so that a slow upload
 * cannot pin the limit. When {@code bodyReadTimeout} has passed since admission and the body is
 * not read to its end:
 * <ul>
 *   <li>if the application is blocked in a read, the permit is released at once as {@code
 *       DROPPED} (the thread stays blocked until the container's own idle timeout, outside the
 *       limit);
 *   <li>any later read releases it likewise and throws an {@code IOException}.
 * </ul>
 * A body the container reads for the application (a form's parameters, multipart parts) counts
 * as a read the same way, but is never refused: past the timeout its permit is released and the
 * read goes on, outside the limit.
 * An application that never reads the body is not affected. Requests without a body (GET, HEAD,
 * {@code Content-Length: 0}) are not wrapped and cost nothing.
 */
final class BodyGuard extends HttpServletRequestWrapper {
  private static final Logger LOG = Logger.getLogger(BodyGuard.class.getName());
  private static final long MAX_NANOS = TimeUnit.DAYS.toNanos(365);

  private final Permit permit;
  private final Timer.Timeout timeout;
  private volatile int reading;
  private volatile boolean late;
  private volatile boolean ended;
  private ServletInputStream in; // guarded by this
  private BufferedReader reader; // guarded by this

  private BodyGuard(HttpServletRequest request, Permit permit, long timeoutNanos) {
    super(request);
    this.permit = permit;
    Timer timer = Timer.system();
    this.timeout = timer.schedule(this::expired,
        timer.clock().nanoTime() + Math.min(timeoutNanos, MAX_NANOS));
  }

  /** The request itself if it carries no body, else a guarded wrapper. */
  static HttpServletRequest wrap(HttpServletRequest request, Permit permit, long timeoutNanos) {
    String method = request.getMethod();
    if ("GET".equals(method) || "HEAD".equals(method)) {
      return request; // GET and HEAD: a body has no meaning (and the method is the cheaper look)
    }
    if (request.getContentLengthLong() == 0) {
      return request;
    }
    return new BodyGuard(request, permit, timeoutNanos);
  }

  /** The application is done with the request: the guard's timer is not needed any more. */
  static void end(HttpServletRequest maybeGuarded) {
    if (maybeGuarded instanceof BodyGuard && !maybeGuarded.isAsyncStarted()) {
      ((BodyGuard) maybeGuarded).timeout.cancel();
    }
  }

  /** On the timer thread. */
  private void expired() {
    if (ended) {
      return;
    }
    late = true;
    if (reading > 0) {
      drop();
    }
  }

  private void drop() {
    if (permit.release(Outcome.DROPPED)) {
      LOG.fine("request body not read within bodyReadTimeout; permit released as DROPPED");
    }
  }

  /** Counts a read starting; true if it starts past the timeout, its permit then released. */
  private boolean startRead() {
    // Counted, then late read; expired() writes late, then reads the count (all volatile): one of
    // the two sees the other's write, so a read starting as the timeout fires is not missed.
    synchronized (this) {
      reading++;
    }
    if (late && !ended) {
      drop();
      return true;
    }
    return false;
  }

  private void enter() throws IOException {
    if (startRead()) {
      exit(0); // not reading after all
      throw new IOException("request body not read within Weir's bodyReadTimeout");
    }
  }

  private void exit(int n) {
    synchronized (this) {
      reading--;
    }
    if (n < 0) {
      ended = true;
      timeout.cancel();
    }
  }

  /** A read the container makes for the application: a form's parameters, multipart parts. */
  private interface ContainerRead<T> {
    T read() throws IOException, ServletException;
  }

  /** Runs {@code read} counted as a read, never refused: past the timeout it runs unlimited. */
  private <T> T containerRead(ContainerRead<T> read) throws IOException, ServletException {
    startRead();
    try {
      return read.read();
    } finally {
      exit(0);
    }
  }

  /** {@link #containerRead} for the methods that declare no checked exception. */
  private <T> T parameters(ContainerRead<T> read) {
    try {
      return containerRead(read);
    } catch (IOException | ServletException e) {
      throw new IllegalStateException(e); // not thrown: the parameter methods declare none
    }
  }

  @Override
  public String getParameter(String name) {
    return parameters(() -> super.getParameter(name));
  }

  @Override
  public Map<String, String[]> getParameterMap() {
    return parameters(super::getParameterMap);
  }

  @Override
  public Enumeration<String> getParameterNames() {
    return parameters(super::getParameterNames);
  }

  @Override
  public String[] getParameterValues(String name) {
    return parameters(() -> super.getParameterValues(name));
  }

  @Override
  public Collection<Part> getParts() throws IOException, ServletException {
    return containerRead(super::getParts);
  }

  @Override
  public Part getPart(String name) throws IOException, ServletException {
    return containerRead(() -> super.getPart(name));
  }

  @Override
  public synchronized ServletInputStream getInputStream() throws IOException {
    if (in == null) {
      in = new Guarded(super.getInputStream());
    }
    return in;
  }

  @Override
  public synchronized BufferedReader getReader() throws IOException {
    if (reader == null) {
      Charset cs;
      try {
        String enc = getCharacterEncoding();
        cs = enc == null ? StandardCharsets.ISO_8859_1 : Charset.forName(enc);
      } catch (RuntimeException e) {
        cs = StandardCharsets.ISO_8859_1;
      }
      reader = new BufferedReader(new InputStreamReader(getInputStream(), cs));
    }
    return reader;
  }

  private final class Guarded extends ServletInputStream {
    private final ServletInputStream delegate;

    Guarded(ServletInputStream delegate) {
      this.delegate = delegate;
    }

    @Override
    public int read() throws IOException {
      enter();
      int b = -2;
      try {
        b = delegate.read();
        return b;
      } finally {
        exit(b == -1 ? -1 : 0);
      }
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      enter();
      int n = 0;
      try {
        n = delegate.read(b, off, len);
        return n;
      } finally {
        exit(n);
      }
    }

    @Override
    public boolean isFinished() {
      return delegate.isFinished();
    }

    @Override
    public boolean isReady() {
      return delegate.isReady();
    }

    @Override
    public void setReadListener(ReadListener listener) {
      delegate.setReadListener(listener);
    }

    @Override
    public int available() throws IOException {
      return delegate.available();
    }

    @Override
    public void close() throws IOException {
      delegate.close();
    }
  }
}
