package dev.weir.servlet;

import jakarta.servlet.http.Cookie;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Header values {@link BufferedResponse} derives: HTTP dates, a content type's charset, and the
 * {@code Set-Cookie} value its header view shows for a cookie.
 */
final class ResponseText {
  private static final long FIRST_PRINTABLE = Instant.parse("0001-01-01T00:00:00Z").toEpochMilli();
  private static final long LAST_PRINTABLE = Instant.parse("9999-12-31T23:59:59Z").toEpochMilli();
  /** HTTP's IMF-fixdate (RFC 9110, 5.6.7): a two-digit day, always in English. */
  private static final DateTimeFormatter IMF_FIXDATE =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US);

  /** The attributes the container names itself, in its spelling and order; others follow. */
  private static final List<String> COOKIE_ORDER =
      List.of("Path", "Domain", "Max-Age", "Secure", "HttpOnly", "SameSite");

  private ResponseText() {}

  /** The date as HTTP's IMF-fixdate prints it, clamped into years 1 to 9999; never throws. */
  static String httpDate(long millis) {
    // The format has four-digit years and the formatter throws past them; setDateHeader never does.
    long printable = Math.max(FIRST_PRINTABLE, Math.min(LAST_PRINTABLE, millis));
    return IMF_FIXDATE.format(Instant.ofEpochMilli(printable).atZone(ZoneOffset.UTC));
  }

  static String charsetOf(String type) {
    if (type == null) {
      return null;
    }
    int i = type.toLowerCase(Locale.ROOT).indexOf("charset=");
    if (i < 0) {
      return null;
    }
    String cs = type.substring(i + 8).trim();
    int semi = cs.indexOf(';');
    cs = semi < 0 ? cs : cs.substring(0, semi).trim();
    return cs.replace("\"", "");
  }

  /** The content type without its charset parameter (other parameters kept). */
  static String withoutCharset(String type) {
    if (type == null || charsetOf(type) == null) {
      return type;
    }
    StringBuilder kept = new StringBuilder();
    for (String part : type.split(";")) {
      if (!part.trim().toLowerCase(Locale.ROOT).startsWith("charset=")) {
        kept.append(kept.length() == 0 ? "" : ";").append(part.trim());
      }
    }
    return kept.toString();
  }

  /** The Set-Cookie value of a cookie, as its attributes name it (for the header view only). */
  static String setCookie(Cookie c) {
    StringBuilder b = new StringBuilder(c.getName()).append('=')
        .append(c.getValue() == null ? "" : c.getValue());
    Map<String, String> attributes = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    attributes.putAll(c.getAttributes());
    List<String> names = new ArrayList<>();
    for (String known : COOKIE_ORDER) {
      if (attributes.containsKey(known)) {
        names.add(known);
      }
    }
    attributes.keySet().stream()
        .filter(n -> COOKIE_ORDER.stream().noneMatch(n::equalsIgnoreCase))
        .forEach(names::add);
    for (String name : names) {
      String value = attributes.get(name);
      if (name.equals("Max-Age") && value != null) {
        long age = Long.parseLong(value.trim());
        if (age >= 0) {
          b.append("; Expires=").append(httpDate(System.currentTimeMillis() + age * 1000));
        }
      }
      b.append("; ").append(name);
      if (value != null && !value.isEmpty()) {
        b.append('=').append(value);
      }
    }
    return b.toString();
  }
}
