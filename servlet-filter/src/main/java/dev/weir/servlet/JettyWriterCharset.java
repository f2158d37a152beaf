package dev.weir.servlet;

import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.ServletApiResponse;
import org.eclipse.jetty.http.MimeTypes;

/**
 * On Jetty 12 (ee10), settles a response's charset as Jetty's own {@code getWriter()} does: a
 * charset the content type implies (UTF-8 for {@code application/json}) stays out of the header;
 * an inferred or default one goes in; and spells a content type as Jetty's {@code
 * getContentType()} does. Loaded only when those classes are visible to the filter (see {@link
 * WeirFilter}).
 */
final class JettyWriterCharset {
  private JettyWriterCharset() {}

  /** False if {@code response} is not Jetty's own response object; nothing is done then. */
  static boolean settle(HttpServletResponse response) {
    if (!(response instanceof ServletApiResponse)) {
      return false; // wrapped by an earlier filter, which may handle charsets its own way
    }
    ((ServletApiResponse) response).getServletResponseInfo().getCharacterEncoding(true);
    return true;
  }

  /** {@code type} in Jetty's spelling if Jetty knows it ("text/plain;charset=utf-8"). */
  static String contentType(String type) {
    MimeTypes.Type known = MimeTypes.CACHE.get(type);
    return known == null ? type : known.asString();
  }
}
