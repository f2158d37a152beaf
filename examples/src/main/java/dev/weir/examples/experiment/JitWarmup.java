package dev.weir.examples.experiment;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;

/**
 * When a warm-up may end: once the JVM's JIT compilers have gone quiet. A server still compiling
 * spends part of the cores on its compilers and runs part of its path in slower code, and a guard
 * with a longer path takes longer to compile; a warm-up of fixed length would measure each guard
 * at a different stage of its warm-up, not what it costs a server that has been running a while.
 * The benches warm up in steps of {@value #STEP_SECONDS} s and stop after a quiet one, within a
 * bound of their own.
 */
final class JitWarmup {
  /** A step: long enough to average over a compilation or two, short next to a bound. */
  static final int STEP_SECONDS = 2;
  /** A step in which the compilers worked for less than this share of it is quiet. */
  static final int QUIET_PERCENT = 1;

  private JitWarmup() {}

  /** One step of load; returns the compilers' total milliseconds once it is done. */
  interface Step {
    long run() throws Exception;
  }

  /**
   * Runs steps until one is quiet or {@code boundSeconds} have passed; nothing if {@code
   * compiledMillis}, the compilers' total before the first step, is -1 (the JVM does not say).
   *
   * @return whether the last step was quiet
   */
  static boolean settle(long compiledMillis, int boundSeconds, Step step) throws Exception {
    if (compiledMillis < 0) {
      return false;
    }
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(boundSeconds);
    long total = compiledMillis;
    boolean quiet = false;
    while (!quiet && end - System.nanoTime() > 0) {
      long start = System.nanoTime();
      long now = step.run();
      quiet = quiet(now - total, System.nanoTime() - start);
      total = now;
    }
    return quiet;
  }

  /** Whether {@code compiledMillis} of compilation in a step of {@code stepNanos} is quiet. */
  static boolean quiet(long compiledMillis, long stepNanos) {
    return compiledMillis * 1_000_000L * 100 < QUIET_PERCENT * stepNanos;
  }

  /**
   * This JVM's compilers' total time so far, in milliseconds, or -1 if the JVM does not say
   * (no JIT, or no timing of it).
   */
  static long compilationMillis() {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    return jit != null && jit.isCompilationTimeMonitoringSupported()
        ? jit.getTotalCompilationTime() : -1;
  }
}
