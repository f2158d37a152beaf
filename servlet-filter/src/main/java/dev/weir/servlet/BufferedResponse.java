package dev.weir.servlet;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A response that keeps everything the application does to it (status, headers, cookies, body)
 * until {@link #commit()}, and so never lets the application touch the container's response while
 * the deadline answer may be writing it.
 *
 * <p>{@link #finish()} and {@link #expire()} race by CAS; exactly one wins. After {@code expire()}
 * every later change is dropped: the application may go on writing, into nothing. All state is
 * guarded by {@code this}, because the deadline may expire the response while the application
 * writes to it.
 *
 * <p>The body is kept up to a cap ({@link CappedBuffer}). A write that would pass it claims the
 * response for the application as {@code finish()} does (unless the deadline won), sends the head
 * and the buffered bytes, and streams everything after: memory stays bounded and the client gets
 * the whole answer, which the deadline can then no longer replace.
 *
 * <p>Text from {@link #getWriter()} is encoded as the container would encode it: in the charset
 * the application named, or else in the one the container gives the content type, asked of the
 * real response. That question, which gives the real response the content type, is the only
 * change made to it before {@code commit()}: it is asked under the lock and never once expired,
 * and {@code expire()} takes the lock before the deadline answer is written. The committed
 * response then names that charset as the container's own {@code getWriter()} would.
 */
final class BufferedResponse extends HttpServletResponseWrapper {
  private static final int OPEN = 0;
  private static final int FINISHED = 1;
  private static final int EXPIRED = 2;
  private static final int STREAMING = 3;

  private final AtomicInteger state = new AtomicInteger(OPEN);
  private final HttpServletResponse real;
  private final Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
  private final List<Cookie> cookies = new ArrayList<>();
  private final CappedBuffer body;
  private final Out out = new Out();
  private boolean discard;
  private boolean through;
  private int status = SC_OK;
  private boolean error;
  private String errorMessage;
  private String redirect;
  private String contentType;
  private String charset;
  private Locale locale;
  private PrintWriter writer;
  /** The container's charset the writer took, none being named; to be named as it would. */
  private String impliedCharset;
  private long contentLength = -1;

  BufferedResponse(HttpServletResponse real, int maxBufferedBytes) {
    super(real);
    this.real = real;
    this.body = new CappedBuffer(maxBufferedBytes);
  }

  /**
   * Claims the response for the application's answer (true if it streams already). The writer is
   * flushed first, so that text past the cap still streams.
   */
  boolean finish() {
    synchronized (this) {
      if (writer != null && !discard) {
        writer.flush();
      }
    }
    return state.compareAndSet(OPEN, FINISHED) || state.get() == STREAMING;
  }

  /** The memory the buffered body takes now (at least its size): for tests. */
  synchronized int bufferedMemory() {
    return body.capacity();
  }

  /** Past the cap: the application's answer streams from here, unless the deadline won. */
  private boolean stream() throws IOException {
    if (!state.compareAndSet(OPEN, STREAMING)) {
      return state.get() == STREAMING && through;
    }
    if (contentLength >= 0) {
      real.setContentLengthLong(contentLength);
    }
    // Not flushing the writer: this write is its flush, and its bytes follow the buffered ones.
    copyHead(false);
    body.writeTo(real.getOutputStream());
    body.reset();
    through = true;
    return true;
  }

  /** Claims the response for the deadline answer; the application's output is dropped. */
  boolean expire() {
    if (!state.compareAndSet(OPEN, EXPIRED)) {
      return false;
    }
    synchronized (this) {
      discard = true;
    }
    return true;
  }

  /** Copies what the application did onto the container's response. Call after finish(). */
  synchronized void commit() throws IOException {
    if (through) {
      if (writer != null) {
        writer.flush(); // streaming since the cap: the container completes the rest
      }
      return;
    }
    copyHead(true);
    if (redirect != null) {
      real.sendRedirect(redirect);
    } else if (error) {
      real.sendError(status, errorMessage);
    } else {
      real.setContentLength(body.size());
      if (body.size() > 0) {
        body.writeTo(real.getOutputStream());
      }
    }
  }

  /** Copies what was done so far, then lets everything through. Call after finish(). */
  synchronized void passThrough() throws IOException {
    if (through) {
      return;
    }
    copyHead(true);
    if (body.size() > 0) {
      body.writeTo(real.getOutputStream());
    }
    through = true;
  }

  private void copyHead(boolean flushWriter) {
    if (flushWriter && writer != null) {
      writer.flush();
    }
    if (locale != null) {
      real.setLocale(locale);
    }
    if (contentType != null) {
      real.setContentType(contentType);
    }
    if (charset != null) {
      real.setCharacterEncoding(charset);
    } else if (impliedCharset != null) {
      nameImpliedCharset();
    }
    if (!error && redirect == null) {
      real.setStatus(status);
    }
    headers.forEach((name, values) -> {
      for (int i = 0; i < values.size(); i++) {
        if (i == 0) {
          real.setHeader(name, values.get(i));
        } else {
          real.addHeader(name, values.get(i));
        }
      }
    });
    cookies.forEach(real::addCookie);
  }

  // --------------------------------------------------------------------------------- status

  @Override
  public synchronized void setStatus(int sc) {
    if (through) {
      real.setStatus(sc);
    } else if (!discard) {
      status = sc;
    }
  }

  @Override
  public synchronized int getStatus() {
    return through ? real.getStatus() : status;
  }

  @Override
  public synchronized void sendError(int sc, String msg) throws IOException {
    if (through) {
      real.sendError(sc, msg);
    } else if (!discard) {
      resetBuffer();
      status = sc;
      error = true;
      errorMessage = msg;
    }
  }

  @Override
  public void sendError(int sc) throws IOException {
    sendError(sc, null);
  }

  @Override
  public synchronized void sendRedirect(String location) throws IOException {
    if (through) {
      real.sendRedirect(location);
    } else if (!discard) {
      resetBuffer();
      status = SC_FOUND;
      redirect = location;
    }
  }

  // -------------------------------------------------------------------------------- headers

  @Override
  public synchronized void setHeader(String name, String value) {
    if (through) {
      real.setHeader(name, value);
    } else if (!discard && name != null) {
      if (value == null) {
        headers.remove(name);
      } else {
        List<String> values = new ArrayList<>(1);
        values.add(value);
        headers.put(name, values);
      }
    }
  }

  @Override
  public synchronized void addHeader(String name, String value) {
    if (through) {
      real.addHeader(name, value);
    } else if (!discard && name != null && value != null) {
      headers.computeIfAbsent(name, k -> new ArrayList<>(1)).add(value);
    }
  }

  @Override
  public void setIntHeader(String name, int value) {
    setHeader(name, Integer.toString(value));
  }

  @Override
  public void addIntHeader(String name, int value) {
    addHeader(name, Integer.toString(value));
  }

  @Override
  public void setDateHeader(String name, long date) {
    setHeader(name, ResponseText.httpDate(date));
  }

  @Override
  public void addDateHeader(String name, long date) {
    addHeader(name, ResponseText.httpDate(date));
  }

  @Override
  public synchronized boolean containsHeader(String name) {
    return through ? real.containsHeader(name) : headers.containsKey(name);
  }

  @Override
  public synchronized String getHeader(String name) {
    if (through) {
      return real.getHeader(name);
    }
    List<String> values = headers.get(name);
    return values == null || values.isEmpty() ? null : values.get(0);
  }

  @Override
  public synchronized Collection<String> getHeaders(String name) {
    if (through) {
      return real.getHeaders(name);
    }
    List<String> values = headers.get(name);
    return values == null ? List.of() : List.copyOf(values);
  }

  @Override
  public synchronized Collection<String> getHeaderNames() {
    return through ? real.getHeaderNames() : List.copyOf(headers.keySet());
  }

  @Override
  public synchronized void addCookie(Cookie cookie) {
    if (through) {
      real.addCookie(cookie);
    } else if (!discard) {
      cookies.add(cookie);
    }
  }

  // -------------------------------------------------------------------------- content type

  @Override
  public synchronized void setContentType(String type) {
    if (through) {
      real.setContentType(type);
    } else if (!discard && writer == null) {
      contentType = type;
    }
  }

  @Override
  public synchronized String getContentType() {
    return through ? real.getContentType() : contentType;
  }

  @Override
  public synchronized void setCharacterEncoding(String enc) {
    if (through) {
      real.setCharacterEncoding(enc);
    } else if (!discard && writer == null) {
      charset = enc;
    }
  }

  @Override
  public synchronized String getCharacterEncoding() {
    if (through) {
      return real.getCharacterEncoding();
    }
    if (charset != null) {
      return charset;
    }
    String fromType = ResponseText.charsetOf(contentType);
    return fromType != null ? fromType : containerCharset();
  }

  /** The charset the container gives text of this content type; see the class comment. */
  private String containerCharset() {
    if (discard) {
      return StandardCharsets.ISO_8859_1.name(); // expired: the text goes nowhere
    }
    if (contentType != null) {
      real.setContentType(contentType);
    }
    String cs = real.getCharacterEncoding();
    return cs == null || cs.isEmpty() ? StandardCharsets.ISO_8859_1.name() : cs;
  }

  /** Names the implied charset in the real response's header as its own getWriter() would. */
  private void nameImpliedCharset() {
    // Jetty leaves out a charset the type implies (application/json is UTF-8); Tomcat, say,
    // names whatever it chose.
    if (!(WeirFilter.ON_JETTY && JettyWriterCharset.settle(real))) {
      real.setCharacterEncoding(impliedCharset);
    }
  }

  @Override
  public synchronized void setLocale(Locale loc) {
    if (through) {
      real.setLocale(loc);
    } else if (!discard) {
      locale = loc;
    }
  }

  @Override
  public synchronized Locale getLocale() {
    return through || locale == null ? real.getLocale() : locale;
  }

  @Override
  public void setContentLength(int len) {
    setContentLengthLong(len);
  }

  @Override
  public synchronized void setContentLengthLong(long len) {
    if (through) {
      real.setContentLengthLong(len);
    } else if (!discard) {
      contentLength = len; // used if the body streams; a buffered body's length is its size
    }
  }

  // ---------------------------------------------------------------------------------- body

  @Override
  public ServletOutputStream getOutputStream() {
    return out;
  }

  @Override
  public synchronized PrintWriter getWriter() {
    if (writer == null) {
      String name = getCharacterEncoding();
      if (!through && charset == null && ResponseText.charsetOf(contentType) == null) {
        impliedCharset = name;
      }
      Charset cs;
      try {
        cs = Charset.forName(name);
      } catch (RuntimeException e) {
        cs = StandardCharsets.ISO_8859_1;
      }
      writer = new PrintWriter(new OutputStreamWriter(out, cs), false);
    }
    return writer;
  }

  @Override
  public void setBufferSize(int size) {
    // everything is buffered
  }

  @Override
  public int getBufferSize() {
    return body.cap();
  }

  @Override
  public synchronized void flushBuffer() throws IOException {
    if (through) {
      real.flushBuffer();
    }
  }

  @Override
  public synchronized void resetBuffer() {
    if (through) {
      real.resetBuffer();
    } else {
      body.reset();
    }
  }

  @Override
  public synchronized void reset() {
    if (through) {
      real.reset();
    } else if (!discard) {
      body.reset();
      contentLength = -1;
      headers.clear();
      cookies.clear();
      status = SC_OK;
      error = false;
      errorMessage = null;
      redirect = null;
      contentType = null;
      charset = null;
    }
  }

  @Override
  public synchronized boolean isCommitted() {
    // Once expired the application's answer can never be sent: say so.
    return through ? real.isCommitted() : discard;
  }

  /** The body stream: into the buffer, to the container after passThrough, or nowhere. */
  private final class Out extends ServletOutputStream {
    @Override
    public void write(int b) throws IOException {
      synchronized (BufferedResponse.this) {
        if (through) {
          real.getOutputStream().write(b);
        } else if (!discard) {
          if (body.fits(1)) {
            body.write(b);
          } else if (stream()) {
            real.getOutputStream().write(b);
          }
        }
      }
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      synchronized (BufferedResponse.this) {
        if (through) {
          real.getOutputStream().write(b, off, len);
        } else if (!discard) {
          if (body.fits(len)) {
            body.write(b, off, len);
          } else if (stream()) {
            real.getOutputStream().write(b, off, len);
          } // else the deadline answered, or the application wrote after its return: dropped
        }
      }
    }

    @Override
    public void flush() throws IOException {
      synchronized (BufferedResponse.this) {
        if (through) {
          real.getOutputStream().flush();
        }
      }
    }

    @Override
    public boolean isReady() {
      return true;
    }

    @Override
    public void setWriteListener(WriteListener listener) {
      throw new IllegalStateException(
          "non-blocking output is not supported in Weir's bounded-response-time mode");
    }
  }
}
