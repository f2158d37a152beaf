/**
 * JMH benchmarks of Weir's per-request cost beside Netflix concurrency-limits and a {@code
 * Semaphore}: the admission fast path, the shed decision, the queued path, the bucket queue and
 * the control tick. Run them with {@code bin/bench}; see {@code jmh/README.md}.
 */
package dev.weir.jmh;
