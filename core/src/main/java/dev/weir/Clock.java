package dev.weir;

/**
 * A source of monotonic nanosecond time. All of Weir's time goes through a clock, so the whole
 * engine can run in virtual time ({@link dev.weir.VirtualTime}).
 *
 * <p>Values are only meaningful as differences, like {@link System#nanoTime()}.
 */
@FunctionalInterface
public interface Clock {
  /** The current time in nanoseconds. Must never go backwards. */
  long nanoTime();

  /** The JVM's monotonic clock, {@link System#nanoTime()}. */
  static Clock system() {
    return System::nanoTime;
  }
}
