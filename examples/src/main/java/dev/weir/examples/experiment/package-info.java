/**
 * The overload experiment: Uber's Cinnamon experiment scaled down to one machine, comparing Weir
 * with no load shedding, Jetty 12's {@code QoSHandler} ({@link
 * dev.weir.examples.experiment.TierQoSHandler}) and Netflix concurrency-limits ({@link
 * dev.weir.examples.experiment.NetflixLimitFilter}) on the example server; run by {@link
 * dev.weir.examples.experiment.OverloadExperiment}.
 */
package dev.weir.examples.experiment;
