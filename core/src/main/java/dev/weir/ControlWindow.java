package dev.weir;

import dev.weir.internal.LatencyHistogram;

/**
 * What a shedder observed during one control interval, handed to its {@link Limit} and
 * {@link Rejector} at each tick. Counts are for the interval only; gauges are read at the tick.
 *
 * <p>The shedder reuses one instance: it is valid only during the {@code update} call.
 */
public final class ControlWindow {
  long nowNanos;
  long intervalNanos;
  long arrivals;
  long shed;
  long queueFull;
  long enqueued;
  long dequeued;
  long cancelled;
  long queueTimeouts;
  long admitted;
  long successes;
  long errors;
  long drops;
  int queueLength;
  int inflight;
  int peakInflight;
  int limit;
  int concurrencyCap = Integer.MAX_VALUE;
  boolean queueEmptied;
  long requestTimeoutNanos;
  long queueTimeoutNanos;
  final long[] levelArrivals = new long[Priority.LEVELS];
  final LatencyHistogram latencies = new LatencyHistogram();

  ControlWindow() {}

  /** The time of this tick, on the shedder's clock. */
  public long nowNanos() { return nowNanos; }

  /** The time since the previous tick. */
  public long intervalNanos() { return intervalNanos; }

  /** Requests submitted: the inflow, before any rejection. */
  public long arrivals() { return arrivals; }

  /** Requests shed at the door by the cutoff. */
  public long shed() { return shed; }

  /** Requests rejected because the queue was full (including ones evicted to make room). */
  public long queueFull() { return queueFull; }

  /** Requests that entered the queue. */
  public long enqueued() { return enqueued; }

  /** Requests that left the queue admitted: the queue's outflow. */
  public long dequeued() { return dequeued; }

  /**
   * Requests withdrawn from the queue by their caller ({@link Ticket#cancel()}): a client that
   * left, or an adapter that needed the request's thread back.
   */
  public long cancelled() { return cancelled; }

  /** Requests that left the queue on their queue timeout. */
  public long queueTimeouts() { return queueTimeouts; }

  /** Requests admitted, at once or from the queue. */
  public long admitted() { return admitted; }

  /** Permits released as {@link Outcome#SUCCESS}. */
  public long successes() { return successes; }

  /** Permits released as {@link Outcome#ERROR}. */
  public long errors() { return errors; }

  /** Permits released as {@link Outcome#DROPPED}. */
  public long drops() { return drops; }

  /** The queue's length at the tick. */
  public int queueLength() { return queueLength; }

  /** Permits held at the tick. */
  public int inflight() { return inflight; }

  /** The most permits held at once during the interval. */
  public int peakInflight() { return peakInflight; }

  /** The inflight limit in force during the interval. */
  public int limit() { return limit; }

  /**
   * The most admitted requests the host can run at once for this shedder, as its adapter reported
   * with {@link LoadShedder#capConcurrency} (what a shared {@link ConcurrencyBudget} leaves it this
   * tick); {@link Integer#MAX_VALUE} if it did not. The shedder keeps the
   * limit at most this, whatever its {@link Limit} returns; a limit that learns from latency keeps
   * its own state under it too, since cutting a limit above it cuts nothing that runs.
   */
  public int concurrencyCap() { return concurrencyCap; }

  /** Whether the queue was empty at some moment of the interval (or is now). */
  public boolean queueEmptied() { return queueEmptied; }

  /** The shedder's default request timeout. */
  public long requestTimeoutNanos() { return requestTimeoutNanos; }

  /** The shedder's default queue timeout: the longest a request submitted without its own
   * timeout waits in the queue. */
  public long queueTimeoutNanos() { return queueTimeoutNanos; }

  /** Arrivals in the interval at each priority level, indexed by packed priority. Read only. */
  public long[] levelArrivals() { return levelArrivals; }

  /**
   * The number of latency samples in the interval: successful releases of requests whose times
   * were read. At high rates the fast path samples one admission in 2^k, keeping a few hundred
   * samples an interval; {@link #successes()} counts them all.
   */
  public long latencySamples() { return latencies.count(); }

  /** The smallest latency sample of the interval, or {@code Long.MAX_VALUE} if none. */
  public long minLatencyNanos() { return latencies.min(); }

  /**
   * The {@code q} quantile (0 to 1) of the interval's latency samples, to within about 3%, or 0 if
   * there were none.
   */
  public long latencyQuantileNanos(double q) { return latencies.quantile(q); }

  /**
   * The number of buckets of the interval's latency histogram: log-linear, eight buckets per
   * power of two from about 1 µs (below it, bucket 0) to about 275 s (above it, the last
   * bucket), so a bucket is at most 12.5% wide. For a controller that pools samples over
   * several intervals, as {@link dev.weir.control.VegasLimit} does.
   */
  public int latencyBuckets() { return LatencyHistogram.BUCKETS; }

  /**
   * The interval's latency samples in bucket {@code bucket}, 0 to {@link #latencyBuckets()} - 1;
   * buckets are in increasing order of latency.
   */
  public long latencyCount(int bucket) { return latencies.countIn(bucket); }

  /** The mean of the interval's latency samples, or 0 if there were none. */
  public long meanLatencyNanos() { return latencies.mean(); }
}
