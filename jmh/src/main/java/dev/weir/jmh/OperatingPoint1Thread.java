package dev.weir.jmh;

import org.openjdk.jmh.annotations.Threads;

/** {@link OperatingPointBenchmark} on one thread. */
@Threads(1)
public class OperatingPoint1Thread extends OperatingPointBenchmark {}
