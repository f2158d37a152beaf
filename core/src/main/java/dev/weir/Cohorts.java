package dev.weir;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Maps a stable key, such as a user id, to a cohort, and rotates the mapping over time.
 *
 * <p>Within a tier, shedding cuts the least important cohorts first. Hashing users into cohorts
 * makes every service that uses the same scheme shed the <em>same</em> users, so a user either gets
 * a whole answer or is shed at the first hop, instead of failing at a random depth of the call
 * graph (WeChat's DAGOR; Uber's Cinnamon). Rotating the hash once per period keeps the same users
 * from being the ones shed for ever.
 *
 * <p>The mapping depends only on the key, the period and the wall-clock epoch, never on the
 * process: two services with the same period agree. {@link String#hashCode()} is specified by the
 * Java language, so the hash is stable across JVMs.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class Cohorts {
  /** The default rotation period, one hour: long enough for sessions to be stable, short enough
   * that a shed user is not shed all day. */
  public static final Duration DEFAULT_ROTATION = Duration.ofHours(1);

  private final long periodMillis;

  private Cohorts(long periodMillis) {
    this.periodMillis = periodMillis;
  }

  /** Cohorts rotating every {@link #DEFAULT_ROTATION}. */
  public static Cohorts rotating() {
    return new Cohorts(DEFAULT_ROTATION.toMillis());
  }

  /**
   * Cohorts rotating every {@code period}. A period too long for a {@code long} of milliseconds
   * (some 292 million years) means "never rotate".
   *
   * @throws IllegalArgumentException if {@code period} is null or shorter than one second
   */
  public static Cohorts rotating(Duration period) {
    if (period == null || period.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new IllegalArgumentException("cohortRotation must be at least 1s, was " + period);
    }
    // toMillis() throws ArithmeticException past Long.MAX_VALUE ms.
    long millis = period.compareTo(Duration.ofMillis(Long.MAX_VALUE)) >= 0
        ? Long.MAX_VALUE
        : period.toMillis();
    return new Cohorts(millis);
  }

  /**
   * The cohort of {@code key} now, by the wall clock. A null or empty key gets a random cohort
   * without reading the clock, which costs more than the rest of this method on some machines.
   */
  public int cohort(CharSequence key) {
    boolean keyless = key == null || key.length() == 0; // random whatever the time
    return cohort(key, keyless ? 0 : System.currentTimeMillis());
  }

  /**
   * The cohort of {@code key} at wall-clock time {@code epochMillis}, in 0..127. A null or empty
   * key gets a random cohort: such a request cannot be recognised as the same user elsewhere, but
   * random cohorts still spread a tier over all 128 levels, so a tier can be shed in part. (A
   * fixed cohort would put all keyless traffic of a tier on one level, to be shed all or none.)
   */
  public int cohort(CharSequence key, long epochMillis) {
    if (key == null || key.length() == 0) {
      return ThreadLocalRandom.current().nextInt(Priority.COHORTS);
    }
    long epoch = Math.floorDiv(epochMillis, periodMillis);
    int h = 0;
    for (int i = 0, n = key.length(); i < n; i++) {
      h = 31 * h + key.charAt(i);
    }
    return (int) (mix(((long) h << 32) ^ epoch) >>> (64 - 7));
  }

  /** The rotation period in milliseconds. */
  public long periodMillis() {
    return periodMillis;
  }

  // MurmurHash3's 64-bit finaliser: every input bit affects every output bit.
  private static long mix(long z) {
    z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
    z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
    return z ^ (z >>> 33);
  }
}
