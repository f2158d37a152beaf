package dev.weir.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * The one place settings are validated: every builder of every module checks its setters through
 * these, so that an invalid value fails at configuration time with a message naming the setting
 * and the value. Not part of Weir's API.
 */
public final class Check {
  /** The longest duration all of Weir's nanosecond arithmetic holds. */
  public static final Duration MAX_DURATION = Duration.ofNanos(Long.MAX_VALUE);

  private Check() {}

  /** {@code value}, or an {@link IllegalArgumentException} naming {@code setting} if it is null. */
  public static <T> T notNull(String setting, T value) {
    if (value == null) {
      throw new IllegalArgumentException(setting + " must not be null");
    }
    return value;
  }

  /** {@code value}, if neither null nor blank. */
  public static String notBlank(String setting, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(setting + " must not be blank, was '" + value + "'");
    }
    return value;
  }

  /** {@code d}, if positive and at most {@link #MAX_DURATION} (about 292 years). */
  public static Duration positive(String setting, Duration d) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(setting + " must be positive, was " + d);
    }
    return atMostMax(setting, d);
  }

  /** {@code d}, if zero or positive and at most {@link #MAX_DURATION}. */
  public static Duration notNegative(String setting, Duration d) {
    if (d == null || d.isNegative()) {
      throw new IllegalArgumentException(setting + " must be zero or positive, was " + d);
    }
    return atMostMax(setting, d);
  }

  /** {@code d}, if at least {@code min} (positive) and at most {@link #MAX_DURATION}. */
  public static Duration atLeast(String setting, Duration d, Duration min) {
    if (d == null || d.compareTo(min) < 0) {
      throw new IllegalArgumentException(
          setting + " must be at least " + describe(min) + ", was " + d);
    }
    return atMostMax(setting, d);
  }

  /** A short form for a whole number of seconds or milliseconds ("1s", "1ms"), else ISO-8601. */
  private static String describe(Duration d) {
    if (d.toNanos() % 1_000_000_000L == 0) {
      return d.getSeconds() + "s";
    }
    if (d.toNanos() % 1_000_000L == 0) {
      return d.toMillis() + "ms";
    }
    return d.toString();
  }

  private static Duration atMostMax(String setting, Duration d) {
    // All time is long nanoseconds; a longer duration would overflow later, naming no setting.
    if (d.compareTo(MAX_DURATION) > 0) {
      throw new IllegalArgumentException(setting + " must be at most " + MAX_DURATION
          + " (about 292 years), was " + d);
    }
    return d;
  }

  /** {@code d} (not null), if in {@code min..max} inclusive. */
  public static Duration inRange(String setting, Duration d, Duration min, Duration max) {
    Objects.requireNonNull(d, setting);
    if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
      throw new IllegalArgumentException(
          setting + " must be in " + min + ".." + max + ", was " + d);
    }
    return d;
  }

  /** {@code value}, if in {@code min..max} inclusive. */
  public static int inRange(String setting, int value, int min, int max) {
    if (value < min || value > max) {
      throw new IllegalArgumentException(
          setting + " must be in " + min + ".." + max + ", was " + value);
    }
    return value;
  }

  /** {@code value}, if at least {@code min}. */
  public static int atLeast(String setting, int value, int min) {
    if (value < min) {
      throw new IllegalArgumentException(setting + " must be at least " + min + ", was " + value);
    }
    return value;
  }

  /** {@code value}, if at least {@code min}. */
  public static long atLeast(String setting, long value, long min) {
    if (value < min) {
      throw new IllegalArgumentException(setting + " must be at least " + min + ", was " + value);
    }
    return value;
  }

  /**
   * {@code value}, if inside the interval from {@code min} to {@code max}, each end included or
   * not as said: {@code inRange("decay", v, 0, false, 1, false)} is the open interval (0, 1).
   */
  public static double inRange(String setting, double value, double min, boolean minIncluded,
      double max, boolean maxIncluded) {
    boolean ok = (minIncluded ? value >= min : value > min)
        && (maxIncluded ? value <= max : value < max);
    if (!ok) {
      throw new IllegalArgumentException(setting + " must be in " + (minIncluded ? "[" : "(")
          + min + ", " + max + (maxIncluded ? "]" : ")") + ", was " + value);
    }
    return value;
  }
}
