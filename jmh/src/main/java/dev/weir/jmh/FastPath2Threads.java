package dev.weir.jmh;

import org.openjdk.jmh.annotations.Threads;

/** {@link FastPathBenchmark} on two threads sharing each contender: the contended cost. */
@Threads(2)
public class FastPath2Threads extends FastPathBenchmark {}
