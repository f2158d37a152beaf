package dev.weir.servlet;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/** Header values {@link BufferedResponse} derives: HTTP dates and a content type's charset. */
final class ResponseText {
  private static final long FIRST_PRINTABLE = Instant.parse("0001-01-01T00:00:00Z").toEpochMilli();
  private static final long LAST_PRINTABLE = Instant.parse("9999-12-31T23:59:59Z").toEpochMilli();

  private ResponseText() {}

  /** The date as RFC 1123 prints it, clamped into years 1 to 9999; never throws. */
  static String httpDate(long millis) {
    // RFC 1123 has four-digit years and the formatter throws past them; setDateHeader never does.
    long printable = Math.max(FIRST_PRINTABLE, Math.min(LAST_PRINTABLE, millis));
    return DateTimeFormatter.RFC_1123_DATE_TIME.format(
        Instant.ofEpochMilli(printable).atZone(ZoneOffset.UTC));
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
}
