/**
 * Not part of Weir's API: the lock-free building blocks of the core (the bucketed priority queue,
 * the credits that hold the inflight limit, striped counters, the latency histogram, the timing
 * wheel) and the validation helper the builders share. Public only because other packages of
 * Weir use them; anything here may change or go without notice. Do not use it from applications.
 */
package dev.weir.internal;
