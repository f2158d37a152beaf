/**
 * Micrometer metrics for Weir: {@link dev.weir.micrometer.WeirMetrics} binds a shedder's gauges
 * and per-tier counters to a {@code MeterRegistry}, read when scraped.
 */
package dev.weir.micrometer;
