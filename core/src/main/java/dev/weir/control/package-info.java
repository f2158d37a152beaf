/**
 * The adaptive controllers and their factories: {@link dev.weir.control.VegasLimit}, the
 * latency-tuned inflight limit, and {@link dev.weir.control.PidRejector}, the overload detector and
 * priority cutoff; {@link dev.weir.control.Limits} and {@link dev.weir.control.Rejectors} make
 * them, or a fixed limit, or a rejector that never sheds. Each builder checks every setting in its
 * setter and names it in the {@link IllegalArgumentException}.
 */
package dev.weir.control;
