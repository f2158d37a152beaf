package dev.weir.jmh;

import org.openjdk.jmh.annotations.Threads;

/** {@link OperatingPointBenchmark} on two threads sharing each contender. */
@Threads(2)
public class OperatingPoint2Threads extends OperatingPointBenchmark {}
