package dev.weir.servlet;

import java.util.Locale;

/** Header values {@link BufferedResponse} derives: HTTP dates and a content type's charset. */
final class ResponseText {
  private ResponseText() {}

  static String httpDate(long millis) {
    return java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME.format(
        java.time.Instant.ofEpochMilli(millis).atZone(java.time.ZoneOffset.UTC));
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
