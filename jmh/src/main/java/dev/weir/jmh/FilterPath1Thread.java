package dev.weir.jmh;

import org.openjdk.jmh.annotations.Threads;

/** {@link FilterPathBenchmark} on one thread: the uncontended cost. */
@Threads(1)
public class FilterPath1Thread extends FilterPathBenchmark {}
