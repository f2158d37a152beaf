package dev.weir.jetty;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The application's view of the response in bounded-response-time mode: whoever claims it first,
 * the application or the deadline, answers the client, and the other is silenced.
 *
 * <p>Until the application claims the response (its first write, or its completion of the
 * callback), its status and headers go to a private copy, so the deadline answer can be written on
 * another thread without racing the application's header mutations; the claim copies them to the
 * real response in one step. Nothing of the body is buffered: a write claims the response and goes
 * straight through. Once the deadline has claimed it, the response reports itself committed and
 * every write of the application fails with an {@link IOException}, so the application can stop
 * early; its status and headers are ignored.
 *
 * <p>The claim is one CAS ({@link #claimForApp}, {@link #claimForDeadline}); the private copy is
 * touched only by the application, as a response is.
 */
final class BoundedResponse extends Response.Wrapper {
  private static final int OPEN = 0;
  private static final int APP = 1;
  private static final int DEADLINE = 2;

  private final AtomicInteger owner = new AtomicInteger(OPEN);
  private HttpFields.Mutable headers; // the application's, until it claims; made on first use
  private int status;

  BoundedResponse(Request request, Response wrapped) {
    super(request, wrapped);
    this.status = wrapped.getStatus();
  }

  /** True if the application owns the response (now, or already); false if the deadline does. */
  boolean claimForApp() {
    int o = owner.get();
    if (o == OPEN && owner.compareAndSet(OPEN, APP)) {
      Response real = getWrapped();
      real.setStatus(status);
      if (headers != null) {
        HttpFields.Mutable h = real.getHeaders();
        h.clear();
        h.add(headers);
      }
      return true;
    }
    return owner.get() == APP;
  }

  /** True if the deadline may answer: the application has not claimed the response. */
  boolean claimForDeadline() {
    return owner.compareAndSet(OPEN, DEADLINE);
  }

  @Override
  public int getStatus() {
    return owner.get() == APP ? super.getStatus() : status;
  }

  @Override
  public void setStatus(int code) {
    if (owner.get() == APP) {
      super.setStatus(code);
    } else {
      status = code;
    }
  }

  @Override
  public HttpFields.Mutable getHeaders() {
    if (owner.get() == APP) {
      return super.getHeaders();
    }
    HttpFields.Mutable h = headers;
    if (h == null) {
      h = HttpFields.build(super.getHeaders()); // what outer handlers set, for the app to read
      headers = h;
    }
    return h;
  }

  @Override
  public boolean isCommitted() {
    int o = owner.get();
    return o == DEADLINE || (o == APP && super.isCommitted());
  }

  @Override
  public void reset() {
    if (owner.get() == APP) {
      super.reset();
    } else {
      headers = HttpFields.build();
      status = 200;
    }
  }

  @Override
  public CompletableFuture<Void> writeInterim(int code, HttpFields fields) {
    if (owner.get() == DEADLINE) {
      return CompletableFuture.failedFuture(gone());
    }
    return super.writeInterim(code, fields);
  }

  @Override
  public void write(boolean last, ByteBuffer content, Callback callback) {
    if (claimForApp()) {
      super.write(last, content, callback);
    } else {
      callback.failed(gone());
    }
  }

  private static IOException gone() {
    return new IOException("the request's deadline passed: Weir has answered 503 instead");
  }
}
