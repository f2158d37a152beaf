/**
 * The deterministic simulator: the production {@link dev.weir.LoadShedder} and controllers in
 * {@link dev.weir.VirtualTime}, driven by open-loop clients against a simulated multi-server
 * service, with the scenarios S1 to S10 and their bars ({@code bin/simulate}).
 */
package dev.weir.sim;
