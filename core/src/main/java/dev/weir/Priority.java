package dev.weir;

/**
 * A request's priority, packed in an {@code int} so that no object is allocated per request.
 *
 * <p>A priority is a <em>tier</em> (0 most important, 5 least) and a <em>cohort</em> within the tier
 * (0 most important, 127 least): 768 levels in all. The packed value is the level itself,
 * {@code tier * 128 + cohort}, so a smaller int is always the more important request and priorities
 * compare with {@code <}.
 *
 * <p>The text form is {@code "tier"} or {@code "tier:cohort"}, for example {@code "1"} or
 * {@code "3:17"}; {@link #toString(int)} writes the latter.
 */
public final class Priority {
  /** The number of tiers, 6: tiers are 0 to 5. */
  public static final int TIERS = 6;
  /** The number of cohorts in a tier, 128: cohorts are 0 to 127. */
  public static final int COHORTS = 128;
  /** The number of priority levels, 768. */
  public static final int LEVELS = TIERS * COHORTS;
  /** The most important priority, tier 0 cohort 0. */
  public static final int HIGHEST = 0;
  /** The least important priority, tier 5 cohort 127. */
  public static final int LOWEST = LEVELS - 1;

  private static final int COHORT_BITS = 7;

  private Priority() {}

  /**
   * Packs a tier and a cohort.
   *
   * @throws IllegalArgumentException if the tier is not in 0..5 or the cohort not in 0..127
   */
  public static int of(int tier, int cohort) {
    if (tier < 0 || tier >= TIERS) {
      throw new IllegalArgumentException("tier must be in 0.." + (TIERS - 1) + ", was " + tier);
    }
    if (cohort < 0 || cohort >= COHORTS) {
      throw new IllegalArgumentException("cohort must be in 0.." + (COHORTS - 1) + ", was " + cohort);
    }
    return (tier << COHORT_BITS) | cohort;
  }

  /** The tier of a packed priority. */
  public static int tier(int priority) {
    return priority >>> COHORT_BITS;
  }

  /** The cohort of a packed priority. */
  public static int cohort(int priority) {
    return priority & (COHORTS - 1);
  }

  /** Whether {@code priority} is a valid packed priority, in 0..767. */
  public static boolean isValid(int priority) {
    return priority >= 0 && priority < LEVELS;
  }

  /**
   * Checks a packed priority.
   *
   * @return {@code priority}
   * @throws IllegalArgumentException if it is not in 0..767
   */
  public static int check(int priority) {
    if (!isValid(priority)) {
      throw new IllegalArgumentException("priority must be in 0.." + LOWEST + ", was " + priority);
    }
    return priority;
  }

  /**
   * Parses {@code "tier"} or {@code "tier:cohort"}. A bare tier gets {@code defaultCohort}.
   * Surrounding white space is ignored; nothing else is.
   *
   * @throws IllegalArgumentException naming what is wrong, for null, empty, non-numeric or
   *     out-of-range text
   */
  public static int parse(CharSequence text, int defaultCohort) {
    if (text == null) {
      throw new IllegalArgumentException("priority text is null");
    }
    int start = skipWhitespace(text);
    int end = trimWhitespace(text, start);
    if (start == end) {
      throw new IllegalArgumentException("priority text is empty");
    }
    int colon = -1;
    for (int i = start; i < end; i++) {
      if (text.charAt(i) == ':') {
        colon = i;
        break;
      }
    }
    if (colon < 0) {
      return of(parseBounded(text, start, end, TIERS, "tier"), defaultCohort);
    }
    int tier = parseBounded(text, start, colon, TIERS, "tier");
    int cohort = parseBounded(text, colon + 1, end, COHORTS, "cohort");
    return of(tier, cohort);
  }

  /** Parses {@code "tier"} or {@code "tier:cohort"}; a bare tier gets cohort 0. */
  public static int parse(CharSequence text) {
    return parse(text, 0);
  }

  /**
   * Parses a tier alone, {@code "0"} to {@code "5"}; surrounding white space is ignored.
   *
   * @throws IllegalArgumentException naming what is wrong
   */
  public static int parseTier(CharSequence text) {
    if (text == null) {
      throw new IllegalArgumentException("tier text is null");
    }
    int start = skipWhitespace(text);
    return parseBounded(text, start, trimWhitespace(text, start), TIERS, "tier");
  }

  /** Writes the text form, {@code "tier:cohort"}. */
  public static String toString(int priority) {
    check(priority);
    return tier(priority) + ":" + cohort(priority);
  }

  /** The index of the first character that is not white space. */
  private static int skipWhitespace(CharSequence text) {
    int start = 0;
    while (start < text.length() && Character.isWhitespace(text.charAt(start))) {
      start++;
    }
    return start;
  }

  /** The end of {@code text} without trailing white space, no earlier than {@code start}. */
  private static int trimWhitespace(CharSequence text, int start) {
    int end = text.length();
    while (end > start && Character.isWhitespace(text.charAt(end - 1))) {
      end--;
    }
    return end;
  }

  /**
   * Parses a small non-negative decimal without allocating and without overflow, however long the
   * text (a hostile header may be megabytes of digits).
   */
  private static int parseBounded(CharSequence text, int start, int end, int bound, String what) {
    if (start >= end) {
      throw new IllegalArgumentException(what + " is missing in priority '" + clip(text) + "'");
    }
    int value = 0;
    for (int i = start; i < end; i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        throw new IllegalArgumentException(
            what + " must be a decimal number in 0.." + (bound - 1) + ", was '" + clip(text) + "'");
      }
      value = value * 10 + (c - '0');
      if (value >= bound) {
        throw new IllegalArgumentException(
            what + " must be in 0.." + (bound - 1) + ", was '" + clip(text) + "'");
      }
    }
    return value;
  }

  private static String clip(CharSequence text) {
    return text.length() <= 32 ? text.toString() : text.subSequence(0, 32) + "...";
  }
}
