package dev.weir.jmh;

import org.openjdk.jmh.annotations.Threads;

/** {@link FilterPathBenchmark} on two threads, one per core of the development machine: with contention. */
@Threads(2)
public class FilterPath2Threads extends FilterPathBenchmark {}
