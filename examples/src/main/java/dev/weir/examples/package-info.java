/**
 * Runnable examples: {@link dev.weir.examples.ExampleServer}, a Jetty 12 application whose
 * capacity is bounded by a simulated {@link dev.weir.examples.Downstream}; {@link
 * dev.weir.examples.LoadGenerator}, an open-loop load generator that reports goodput and latency
 * per tier; {@link dev.weir.examples.OverloadDemo}, which shows the server collapse under overload
 * without Weir and keep its goodput, most important tier first, with {@code new WeirFilter()}; and
 * {@link dev.weir.examples.OverheadBench}, which measures the filter's cost with no overload.
 */
package dev.weir.examples;
