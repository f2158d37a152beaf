package dev.weir.jmh;

import org.openjdk.jmh.annotations.Threads;

/** {@link FastPathBenchmark} on one thread: the uncontended cost. */
@Threads(1)
public class FastPath1Thread extends FastPathBenchmark {}
