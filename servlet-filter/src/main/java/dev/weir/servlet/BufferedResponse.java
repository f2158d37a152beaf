package dev.weir.servlet;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A response that keeps everything the application does to it (status, headers, cookies,
 * trailers, body) until {@link #commit()}, and so never lets the application touch the container's
 * response while the deadline answer may be writing it.
 *
 * <p>{@link #finish()} and {@link #expire()} race by CAS; exactly one wins. After {@code expire()}
 * every later change is dropped and {@link #isCommitted()} is true: the application may go on
 * writing, into nothing. All state is guarded by {@code this}, because the deadline may expire the
 * response while the application writes to it.
 *
 * <p>Whatever commits a container's response commits this one too, for the application, unless
 * the deadline won: a write past the body's cap ({@link CappedBuffer}), {@code flushBuffer()},
 * {@code flush()} or {@code close()} of the stream or writer, {@code sendError} and {@code
 * sendRedirect}. The head and the buffered bytes go to the container's response, which from then
 * on is the application's: every later call passes straight through (a stream or writer first
 * asked for then is the container's own), so the container treats it as its own (later head
 * changes ignored, writes after close refused, the error page written), memory stays bounded, and
 * the deadline can no longer replace the answer.
 *
 * <p>Text from {@link #getWriter()} is encoded as the container would encode it, and at once, so
 * the writer never holds text the buffer cannot see: in the charset the application named, or
 * else in the one the container gives the content type, asked of the real response. That
 * question, which gives the real response the content type, is the only change made to it before
 * it is committed: it is asked under the lock and never once expired, and {@code expire()} takes
 * the lock before the deadline answer is written. The committed response then names that charset
 * as the container's own {@code getWriter()} would. The stream and the writer exclude each other
 * until {@link #reset()}, as in a container.
 */
final class BufferedResponse extends HttpServletResponseWrapper {
  private static final int OPEN = 0;
  private static final int FINISHED = 1;
  private static final int EXPIRED = 2;
  private static final int STREAMING = 3;
  private static final int NO_BODY = 0;
  private static final int STREAM_BODY = 1;
  private static final int WRITER_BODY = 2;
  /** Chars encoded at a time: bounds the encoder's own buffer. */
  private static final int TEXT_CHUNK = 2048;

  private final AtomicInteger state = new AtomicInteger(OPEN);
  private final HttpServletResponse real;
  private final boolean trailersAllowed;
  private final Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
  private final List<Cookie> cookies = new ArrayList<>();
  private final CappedBuffer body;
  private final Out out = new Out();
  private boolean discard;
  /** The real response is the application's: every call passes through to it. */
  private boolean through;
  /** commit() copied the answer: later changes go nowhere. */
  private boolean done;
  private int status = SC_OK;
  private String contentType;
  private String charset;
  private Locale locale;
  private Supplier<Map<String, String>> trailers;
  private int bodyUse = NO_BODY;
  private PrintWriter writer;
  /** The charset the writer encodes in; fixed once it exists. */
  private String writerCharset;
  /** The container's charset the writer took, none being named; to be named as it would. */
  private String impliedCharset;
  /** The content type when the writer took its charset. */
  private String writerType;
  private long contentLength = -1;
  private int requestedBufferSize;

  /**
   * @param trailersAllowed whether the request's protocol carries trailers (HTTP/1.1 or later);
   *     {@code setTrailerFields} refuses them otherwise, as the container would
   */
  BufferedResponse(HttpServletResponse real, int maxBufferedBytes, boolean trailersAllowed) {
    super(real);
    this.real = real;
    this.trailersAllowed = trailersAllowed;
    this.body = new CappedBuffer(maxBufferedBytes);
  }

  /** Claims the response for the application's answer (true if it is the application's already). */
  boolean finish() {
    return state.compareAndSet(OPEN, FINISHED) || state.get() == STREAMING;
  }

  /** The memory the buffered body takes now (at least its size): for tests. */
  synchronized int bufferedMemory() {
    return body.capacity();
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

  /**
   * Gives the real response to the application: copies the head and the buffered bytes onto it
   * and lets everything through from here. False if the deadline has it or commit() answered.
   */
  private boolean claim() throws IOException {
    if (through) {
      return true;
    }
    if (discard || done) {
      return false;
    }
    // After finish() only the application (an async thread, say) can still claim it.
    if (!state.compareAndSet(OPEN, STREAMING) && state.get() != FINISHED) {
      return false;
    }
    if (contentLength >= 0) {
      real.setContentLengthLong(contentLength);
    }
    copyHead();
    if (body.size() > 0) {
      body.writeTo(real.getOutputStream());
      body.reset();
    }
    through = true;
    return true;
  }

  /** Copies what the application did onto the container's response. Call after finish(). */
  synchronized void commit() throws IOException {
    if (through || done) {
      return; // the application's already, and the container completes it
    }
    done = true;
    copyHead();
    // An empty body keeps the length the application set (a 304's, say).
    real.setContentLengthLong(body.size() == 0 && contentLength >= 0 ? contentLength : body.size());
    if (body.size() > 0) {
      body.writeTo(real.getOutputStream());
    }
  }

  /** Copies what was done so far, then lets everything through. Call after finish(). */
  synchronized void passThrough() throws IOException {
    claim();
  }

  private void copyHead() {
    if (locale != null) {
      real.setLocale(locale);
    }
    if (contentType != null) {
      real.setContentType(contentType);
    }
    if (charset != null) {
      real.setCharacterEncoding(charset);
    } else if (writerCharset != null && ResponseText.charsetOf(contentType) == null) {
      if (impliedCharset != null && Objects.equals(contentType, writerType)) {
        nameImpliedCharset();
      } else {
        real.setCharacterEncoding(writerCharset); // the type changed since, or named it then
      }
    }
    real.setStatus(status);
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
    if (trailers != null) {
      real.setTrailerFields(trailers);
    }
  }

  /** Whether changes to the head are still kept. */
  private boolean open() {
    return !discard && !done;
  }

  // --------------------------------------------------------------------------------- status

  @Override
  public synchronized void setStatus(int sc) {
    if (through) {
      real.setStatus(sc);
    } else if (open()) {
      status = sc;
    }
  }

  @Override
  public synchronized int getStatus() {
    return through ? real.getStatus() : status;
  }

  @Override
  public synchronized void sendError(int sc, String msg) throws IOException {
    if (!through && open()) {
      body.reset(); // the container discards it too
    }
    if (claim()) {
      real.sendError(sc, msg); // commits: the container writes the error page
    }
  }

  @Override
  public void sendError(int sc) throws IOException {
    sendError(sc, null);
  }

  @Override
  public synchronized void sendRedirect(String location) throws IOException {
    if (!through && open()) {
      body.reset();
    }
    if (claim()) {
      real.sendRedirect(location);
    }
  }

  // -------------------------------------------------------------------------------- headers

  private static boolean isContentType(String name) {
    return "Content-Type".equalsIgnoreCase(name);
  }

  private static boolean isContentLength(String name) {
    return "Content-Length".equalsIgnoreCase(name);
  }

  @Override
  public synchronized void setHeader(String name, String value) {
    if (through) {
      real.setHeader(name, value);
    } else if (isContentType(name)) {
      setContentType(value); // the writer's charset and getContentType() see it
    } else if (isContentLength(name)) {
      setContentLengthLong(value == null ? -1 : Long.parseLong(value.trim()));
    } else if (open() && name != null) {
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
    } else if (value != null && (isContentType(name) || isContentLength(name))) {
      setHeader(name, value); // single-valued
    } else if (open() && name != null && value != null) {
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
    return through ? real.containsHeader(name) : !headerView(name).isEmpty();
  }

  @Override
  public synchronized String getHeader(String name) {
    if (through) {
      return real.getHeader(name);
    }
    List<String> values = headerView(name);
    return values.isEmpty() ? null : values.get(0);
  }

  @Override
  public synchronized Collection<String> getHeaders(String name) {
    return through ? real.getHeaders(name) : headerView(name);
  }

  @Override
  public synchronized Collection<String> getHeaderNames() {
    if (through) {
      return real.getHeaderNames();
    }
    Set<String> names = new LinkedHashSet<>();
    if (contentType != null) {
      names.add("Content-Type");
    }
    if (contentLength >= 0) {
      names.add("Content-Length");
    }
    if (!cookies.isEmpty()) {
      names.add("Set-Cookie");
    }
    names.addAll(headers.keySet());
    return List.copyOf(names);
  }

  /** The values of a header as the container would show them, Content-Type and cookies too. */
  private List<String> headerView(String name) {
    if (name == null) {
      return List.of();
    }
    if (isContentType(name)) {
      String type = getContentType();
      return type == null ? List.of() : List.of(type);
    }
    if (isContentLength(name)) {
      return contentLength < 0 ? List.of() : List.of(Long.toString(contentLength));
    }
    List<String> values = new ArrayList<>(headers.getOrDefault(name, List.of()));
    if ("Set-Cookie".equalsIgnoreCase(name)) {
      cookies.forEach(c -> values.add(ResponseText.setCookie(c)));
    }
    return List.copyOf(values);
  }

  @Override
  public synchronized void addCookie(Cookie cookie) {
    if (through) {
      real.addCookie(cookie);
    } else if (open()) {
      cookies.add((Cookie) cookie.clone()); // as sent now: later changes to it are not
    }
  }

  @Override
  public synchronized void setTrailerFields(Supplier<Map<String, String>> supplier) {
    if (through) {
      real.setTrailerFields(supplier);
      return;
    }
    if (!trailersAllowed) {
      throw new IllegalStateException("trailers need HTTP/1.1 or later");
    }
    if (open()) {
      trailers = supplier; // set on the real response only with the application's answer
    }
  }

  @Override
  public synchronized Supplier<Map<String, String>> getTrailerFields() {
    return through ? real.getTrailerFields() : trailers;
  }

  // -------------------------------------------------------------------------- content type

  @Override
  public synchronized void setContentType(String type) {
    if (through) {
      real.setContentType(type);
    } else if (open()) {
      // Once the writer exists its charset stays, as in the container.
      contentType = writer == null ? type : ResponseText.withoutCharset(type);
    }
  }

  @Override
  public synchronized String getContentType() {
    if (through) {
      return real.getContentType();
    }
    if (contentType == null) {
      return null;
    }
    String type = contentType;
    if (ResponseText.charsetOf(type) == null) {
      String cs = charset != null ? charset : writerCharset;
      if (cs != null) {
        type = type + ";charset=" + cs;
      }
    }
    return WeirFilter.ON_JETTY ? JettyWriterCharset.contentType(type) : type;
  }

  @Override
  public synchronized void setCharacterEncoding(String enc) {
    if (through) {
      real.setCharacterEncoding(enc);
    } else if (open() && writer == null) {
      charset = enc;
    }
  }

  @Override
  public synchronized String getCharacterEncoding() {
    if (through) {
      return real.getCharacterEncoding();
    }
    if (writerCharset != null) {
      return writerCharset;
    }
    if (charset != null) {
      return charset;
    }
    String fromType = ResponseText.charsetOf(contentType);
    return fromType != null ? fromType : containerCharset();
  }

  /** The charset the container gives text of this content type; see the class comment. */
  private String containerCharset() {
    if (!open()) {
      return StandardCharsets.ISO_8859_1.name(); // the text goes nowhere
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
    } else if (open()) {
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
    } else if (open()) {
      contentLength = len; // sent if the body streams or is empty; else the body's size is
    }
  }

  // ---------------------------------------------------------------------------------- body

  @Override
  public synchronized ServletOutputStream getOutputStream() throws IOException {
    if (through && bodyUse == NO_BODY) {
      return real.getOutputStream(); // nothing of ours in it: the container's own, as it is
    }
    if (bodyUse == WRITER_BODY) {
      throw new IllegalStateException("getWriter() was called on this response");
    }
    bodyUse = STREAM_BODY;
    return out;
  }

  @Override
  public synchronized PrintWriter getWriter() throws IOException {
    if (through && bodyUse == NO_BODY) {
      return real.getWriter();
    }
    if (bodyUse == STREAM_BODY) {
      throw new IllegalStateException("getOutputStream() was called on this response");
    }
    bodyUse = WRITER_BODY;
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
      writerCharset = name;
      writerType = contentType;
      writer = new PrintWriter(new Text(cs), false);
    }
    return writer;
  }

  @Override
  public synchronized void setBufferSize(int size) {
    if (through) {
      real.setBufferSize(size);
    } else if (body.size() > 0) {
      throw new IllegalStateException("content has been written");
    } else {
      requestedBufferSize = size; // everything up to the cap is buffered anyway
    }
  }

  @Override
  public synchronized int getBufferSize() {
    if (through) {
      return real.getBufferSize();
    }
    return requestedBufferSize > 0 ? requestedBufferSize : body.cap();
  }

  @Override
  public synchronized void flushBuffer() throws IOException {
    if (claim()) {
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
    } else if (open()) {
      body.reset();
      contentLength = -1;
      headers.clear();
      cookies.clear();
      trailers = null;
      status = SC_OK;
      contentType = null;
      charset = null;
      locale = null;
      bodyUse = NO_BODY;
      writer = null; // the next getWriter() takes the charset named then
      writerCharset = null;
      writerType = null;
      impliedCharset = null;
    }
  }

  @Override
  public synchronized boolean isCommitted() {
    // Once expired the application's answer can never be sent: say so.
    return through ? real.isCommitted() : discard;
  }

  /** The body stream: into the buffer, to the container once claimed, or nowhere. */
  private final class Out extends ServletOutputStream {
    @Override
    public void write(int b) throws IOException {
      synchronized (BufferedResponse.this) {
        if (through) {
          real.getOutputStream().write(b);
        } else if (open()) {
          if (body.fits(1)) {
            body.write(b);
          } else if (claim()) {
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
        } else if (open()) {
          if (body.fits(len)) {
            body.write(b, off, len);
          } else if (claim()) {
            real.getOutputStream().write(b, off, len);
          } // else the deadline answered: dropped
        } // else the deadline answered, or the application wrote after its return: dropped
      }
    }

    @Override
    public void flush() throws IOException {
      synchronized (BufferedResponse.this) {
        if (claim()) {
          real.getOutputStream().flush();
        }
      }
    }

    @Override
    public void close() throws IOException {
      synchronized (BufferedResponse.this) {
        if (claim()) {
          real.getOutputStream().close(); // completes the answer, as in the container
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

  /**
   * The writer's encoder: each write is encoded into the body stream at once, so reset and
   * resetBuffer see all of it; only half of a surrogate pair can wait for the next write.
   */
  private final class Text extends Writer {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
    private final OutputStreamWriter encoder;

    Text(Charset cs) {
      this.encoder = new OutputStreamWriter(bytes, cs);
    }

    @Override
    public void write(char[] c, int off, int len) throws IOException {
      synchronized (BufferedResponse.this) {
        for (int at = 0; at < len; at += TEXT_CHUNK) {
          encoder.write(c, off + at, Math.min(TEXT_CHUNK, len - at));
          drain();
        }
      }
    }

    @Override
    public void write(String s, int off, int len) throws IOException {
      synchronized (BufferedResponse.this) {
        for (int at = 0; at < len; at += TEXT_CHUNK) {
          encoder.write(s, off + at, Math.min(TEXT_CHUNK, len - at));
          drain();
        }
      }
    }

    private void drain() throws IOException {
      encoder.flush(); // into bytes only
      if (bytes.size() > 0) {
        bytes.writeTo(out);
        bytes.reset();
      }
    }

    @Override
    public void flush() throws IOException {
      out.flush();
    }

    @Override
    public void close() throws IOException {
      out.close();
    }
  }
}
