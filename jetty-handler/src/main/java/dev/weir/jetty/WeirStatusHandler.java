package dev.weir.jetty;

import dev.weir.http.StatusPage;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * A read-only view of a {@link WeirHandler}'s shedders, one entry per route key, for Jetty 12's
 * core API: the servlet module's {@code WeirStatusServlet} for applications without a servlet
 * context. It answers every {@code GET} or {@code HEAD} it is given: JSON by default, and, with
 * {@code ?view=html}, the self-contained page that charts that JSON live (see {@link StatusPage},
 * which documents both). Any other method gets 405. Mount it where only operators can reach it,
 * for example in a {@code ContextHandler} of its own, and not behind the {@code WeirHandler} it
 * shows, whose shedders would then count its polls:
 *
 * <pre>{@code
 * WeirHandler weir = new WeirHandler(app);
 * ContextHandler status = new ContextHandler(new WeirStatusHandler(weir), "/weir/status");
 * status.setAllowNullPathInContext(true); // serve "/weir/status" itself
 * server.setHandler(new ContextHandlerCollection(status, new ContextHandler(weir, "/")));
 * }</pre>
 *
 * <p>Stateless and thread-safe; a snapshot is cheap. It writes its answer on the calling thread.
 */
public final class WeirStatusHandler extends Handler.Abstract.NonBlocking {
  private final WeirHandler weir;

  /** Shows {@code weir}'s shedders. */
  public WeirStatusHandler(WeirHandler weir) {
    this.weir = Objects.requireNonNull(weir, "weir");
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    String method = request.getMethod();
    if (!HttpMethod.GET.is(method) && !HttpMethod.HEAD.is(method)) {
      response.getHeaders().put(HttpHeader.ALLOW, "GET, HEAD");
      Response.writeError(request, response, callback, HttpStatus.METHOD_NOT_ALLOWED_405);
      return true;
    }
    byte[] body;
    String type;
    if (StatusPage.wantsHtml(request.getHttpURI().getQuery())) {
      body = StatusPage.html();
      type = StatusPage.HTML_CONTENT_TYPE;
    } else {
      body = StatusPage.json(weir.shedders()).getBytes(StandardCharsets.UTF_8);
      type = StatusPage.JSON_CONTENT_TYPE;
    }
    response.setStatus(HttpStatus.OK_200);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, type);
    response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-store");
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
    response.write(true, HttpMethod.HEAD.is(method) ? null : ByteBuffer.wrap(body), callback);
    return true;
  }
}
