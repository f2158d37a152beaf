package dev.weir.jetty;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The application's view of the response in bounded-response-time mode: whoever claims it first,
 * the application or the deadline, answers the client, and the other is silenced.
 *
 * <p>Until the application claims the response (its first write, or its completion of the
 * callback), its status, headers and trailers go to a private copy, so the deadline answer can be
 * written on another thread without racing the application's mutations, and carries none of
 * them; the claim copies them to the real response in one step. Nothing of the body is buffered:
 * a write claims the response and goes straight through. Once the deadline has claimed it, the
 * response reports itself committed and every write of the application fails with an {@link
 * IOException}, so the application can stop early; its status, headers and trailers are ignored.
 *
 * <p>The claim is one CAS ({@link #claimForApp}, {@link #claimForDeadline}); the private copy is
 * touched only by the application, as a response is. The copy of the headers is taken in the
 * constructor, on the handling thread, before the deadline can fire: taken later, it would read
 * the real headers while the deadline answer may be writing them.
 */
final class BoundedResponse extends Response.Wrapper {
  private static final int OPEN = 0;
  private static final int APP = 1;
  private static final int DEADLINE = 2;

  private final AtomicInteger owner = new AtomicInteger(OPEN);
  /** The application's headers until it claims: what outer handlers set, for it to read. */
  private final HttpFields.Mutable headers;
  /** Whether the application asked for {@link #headers}, and so may have changed them. */
  private boolean headersTouched;
  private int status;
  private Supplier<HttpFields> trailers;

  BoundedResponse(Request request, Response wrapped) {
    super(request, wrapped);
    this.headers = HttpFields.build(wrapped.getHeaders());
    this.status = wrapped.getStatus();
    this.trailers = wrapped.getTrailersSupplier();
  }

  /** True if the application owns the response (now, or already); false if the deadline does. */
  boolean claimForApp() {
    int o = owner.get();
    if (o == OPEN && owner.compareAndSet(OPEN, APP)) {
      Response real = getWrapped();
      if (status != real.getStatus()) {
        if (status == 0) {
          real.reset(); // the application reset the response; 0 is no status to set
        } else {
          real.setStatus(status);
        }
      }
      if (headersTouched) {
        copyHeaders(headers, real.getHeaders());
      }
      if (trailers != real.getTrailersSupplier()) {
        real.setTrailersSupplier(trailers);
      }
      return true;
    }
    return owner.get() == APP;
  }

  /**
   * Makes {@code to} hold {@code from}. Clearing {@code to} keeps the server's own persistent
   * fields (Server, Date), which {@code from} copied: each is skipped if unchanged, replaced in
   * place if the application replaced it, so none is sent twice.
   */
  private static void copyHeaders(HttpFields from, HttpFields.Mutable to) {
    to.clear();
    List<HttpField> kept = new ArrayList<>(to.size());
    to.forEach(kept::add);
    for (HttpField f : from) {
      HttpField same = null;
      for (HttpField k : kept) {
        if (k.isSameName(f)) {
          same = k;
          break;
        }
      }
      if (same == null) {
        to.add(f);
      } else {
        kept.remove(same);
        if (same != f) {
          to.put(f);
        }
      }
    }
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
    headersTouched = true;
    return headers;
  }

  @Override
  public Supplier<HttpFields> getTrailersSupplier() {
    return owner.get() == APP ? super.getTrailersSupplier() : trailers;
  }

  @Override
  public void setTrailersSupplier(Supplier<HttpFields> supplier) {
    if (owner.get() == APP) {
      super.setTrailersSupplier(supplier);
    } else {
      trailers = supplier; // not on the deadline's answer
    }
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
      headers.clear();
      headersTouched = true;
      status = 0;
      trailers = null;
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
