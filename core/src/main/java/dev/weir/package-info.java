/**
 * Weir's API: adaptive, priority-aware load shedding for JVM servers.
 *
 * <p>Build a {@link dev.weir.LoadShedder} with {@link dev.weir.LoadShedder#builder()} (every
 * setting has a default), then {@link dev.weir.LoadShedder#submit submit} each request with a
 * packed {@link dev.weir.Priority} and an {@link dev.weir.AdmissionCallback}, or block in {@link
 * dev.weir.LoadShedder#acquire acquire}. An admitted request holds a {@link dev.weir.Permit},
 * released once with its {@link dev.weir.Outcome}; a rejected one hears its {@link
 * dev.weir.RejectReason}. {@link dev.weir.Cohorts} maps users to cohorts, {@link
 * dev.weir.WorkerPool} runs admitted work, {@link dev.weir.Snapshot} reports the state.
 *
 * <p>The control interface: a {@link dev.weir.Limit} sets the inflight limit and a {@link
 * dev.weir.Rejector} the priority cutoff, each from a {@link dev.weir.ControlWindow} of one
 * control interval; {@link dev.weir.control} has the adaptive ones. All time goes through a
 * {@link dev.weir.Timer} and its {@link dev.weir.Clock}; {@link dev.weir.VirtualTime} makes a
 * shedder deterministic, for tests and the simulator.
 *
 * <p>Package-private classes hold the mechanism: {@code Admission} (admit, queue, dispatch,
 * reject, release), {@code ControlLoop} (the control tick), {@code OverloadPolicy} (every
 * decision taken from the controllers' answers), {@code ShedderCounters} and {@code Request}. {@code docs/design.md} walks through them.
 */
package dev.weir;
