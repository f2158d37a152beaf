package dev.weir.sim;

import dev.weir.Snapshot;
import java.util.Arrays;

/**
 * What the clients of one simulation saw: one record per request (arrival, priority, answer, when)
 * and a sample of the shedder's state every 100 ms. Reports cut it by arrival time and tier.
 */
public final class SimResult {
  final Scenario scenario;
  final String guard;
  final long timeoutNanos;

  private int n;
  private long[] arrival = new long[1024];
  private long[] answeredAt = new long[1024];
  private long[] queueWait = new long[1024];
  private byte[] tier = new byte[1024];
  private byte[] cohort = new byte[1024];
  private byte[] answer = new byte[1024];

  private int samples;
  private long[] sampleAt = new long[256];
  private int[] limit = new int[256];
  private double[] ratio = new double[256];
  private int[] cutoff = new int[256];
  private int[] queued = new int[256];
  private int[] inflight = new int[256];
  private int[] inService = new int[256];

  Snapshot finalSnapshot;

  SimResult(Scenario scenario, String guard, long timeoutNanos) {
    this.scenario = scenario;
    this.guard = guard;
    this.timeoutNanos = timeoutNanos;
  }

  int arrival(long at, int t, int c) {
    if (n == arrival.length) {
      int size = n * 2;
      arrival = Arrays.copyOf(arrival, size);
      answeredAt = Arrays.copyOf(answeredAt, size);
      queueWait = Arrays.copyOf(queueWait, size);
      tier = Arrays.copyOf(tier, size);
      cohort = Arrays.copyOf(cohort, size);
      answer = Arrays.copyOf(answer, size);
    }
    arrival[n] = at;
    answeredAt[n] = -1;
    queueWait[n] = -1;
    tier[n] = (byte) t;
    cohort[n] = (byte) c;
    answer[n] = (byte) Answer.PENDING.ordinal();
    return n++;
  }

  void admitted(int id, long wait) {
    queueWait[id] = wait;
  }

  void answer(int id, long at, Answer a) {
    answeredAt[id] = at;
    answer[id] = (byte) a.ordinal();
  }

  void sample(long at, int lim, double r, int cut, int q, int in, int svc) {
    if (samples == sampleAt.length) {
      int size = samples * 2;
      sampleAt = Arrays.copyOf(sampleAt, size);
      limit = Arrays.copyOf(limit, size);
      ratio = Arrays.copyOf(ratio, size);
      cutoff = Arrays.copyOf(cutoff, size);
      queued = Arrays.copyOf(queued, size);
      inflight = Arrays.copyOf(inflight, size);
      inService = Arrays.copyOf(inService, size);
    }
    sampleAt[samples] = at;
    limit[samples] = lim;
    ratio[samples] = r;
    cutoff[samples] = cut;
    queued[samples] = q;
    inflight[samples] = in;
    inService[samples] = svc;
    samples++;
  }

  public Scenario scenario() {
    return scenario;
  }

  /** The label of what guarded the service. */
  public String guard() {
    return guard;
  }

  /** The number of requests. */
  public int requests() {
    return n;
  }

  /** The shedder's snapshot at the end, or null without a shedder. */
  public Snapshot finalSnapshot() {
    return finalSnapshot;
  }

  /** A report of the requests that arrived between {@code fromSeconds} and {@code toSeconds}. */
  public Report report(double fromSeconds, double toSeconds) {
    long from = (long) (fromSeconds * 1e9);
    long to = (long) (toSeconds * 1e9);
    Report r = new Report(scenario, guard, fromSeconds, toSeconds);
    for (int i = 0; i < n; i++) {
      if (arrival[i] >= from && arrival[i] < to) {
        Answer a = Answer.values()[answer[i]];
        long latency = answeredAt[i] < 0 ? -1 : answeredAt[i] - arrival[i];
        r.add(tier[i], a, latency);
      }
    }
    r.finish();
    return r;
  }

  /** The whole run. */
  public Report report() {
    return report(0, scenario.durationSeconds);
  }

  /** The fraction of requests of {@code tier} with cohorts in [cFrom, cTo] answered OK. */
  public double successRatio(int t, int cFrom, int cTo, double fromSeconds, double toSeconds) {
    long from = (long) (fromSeconds * 1e9);
    long to = (long) (toSeconds * 1e9);
    long all = 0;
    long ok = 0;
    for (int i = 0; i < n; i++) {
      if (tier[i] == t && cohort[i] >= cFrom && cohort[i] <= cTo && arrival[i] >= from
          && arrival[i] < to) {
        all++;
        if (answer[i] == Answer.OK.ordinal()) {
          ok++;
        }
      }
    }
    return all == 0 ? Double.NaN : (double) ok / all;
  }

  /** The mean queue wait of admitted requests of {@code tier} that arrived in the window. */
  public double meanQueueWaitNanos(int t, double fromSeconds, double toSeconds) {
    long from = (long) (fromSeconds * 1e9);
    long to = (long) (toSeconds * 1e9);
    long sum = 0;
    long count = 0;
    for (int i = 0; i < n; i++) {
      if (tier[i] == t && queueWait[i] >= 0 && arrival[i] >= from && arrival[i] < to) {
        sum += queueWait[i];
        count++;
      }
    }
    return count == 0 ? Double.NaN : (double) sum / count;
  }

  /** The longest queue wait of any admitted request, in nanoseconds (-1 if none admitted). */
  public long maxQueueWaitNanos() {
    long max = -1;
    for (int i = 0; i < n; i++) {
      max = Math.max(max, queueWait[i]);
    }
    return max;
  }

  /** The longest time any request waited for its answer; unanswered ones count to the end. */
  public long maxAnswerNanos() {
    long max = 0;
    long end = (long) (scenario.durationSeconds * 1e9);
    for (int i = 0; i < n; i++) {
      long at = answeredAt[i] < 0 ? end : answeredAt[i];
      max = Math.max(max, at - arrival[i]);
    }
    return max;
  }

  /** The longest answer time of requests that arrived in the window, in nanoseconds. */
  public long maxAnswerNanos(double fromSeconds, double toSeconds) {
    long from = (long) (fromSeconds * 1e9);
    long to = (long) (toSeconds * 1e9);
    long end = (long) (scenario.durationSeconds * 1e9);
    long max = 0;
    for (int i = 0; i < n; i++) {
      if (arrival[i] >= from && arrival[i] < to) {
        long at = answeredAt[i] < 0 ? end : answeredAt[i];
        max = Math.max(max, at - arrival[i]);
      }
    }
    return max;
  }

  /** The time (seconds) of the last request shed at the door that arrived after {@code from}, or
   * NaN if none. */
  public double lastShedSeconds(double fromSeconds) {
    long from = (long) (fromSeconds * 1e9);
    long last = -1;
    for (int i = 0; i < n; i++) {
      if (arrival[i] >= from && (answer[i] == Answer.SHED.ordinal()
          || answer[i] == Answer.QUEUE_FULL.ordinal()
          || answer[i] == Answer.QUEUE_TIMEOUT.ordinal())) {
        last = Math.max(last, arrival[i]);
      }
    }
    return last < 0 ? Double.NaN : last / 1e9;
  }

  /** Samples of the inflight limit between two times. */
  public int[] limits(double fromSeconds, double toSeconds) {
    return ints(limit, fromSeconds, toSeconds);
  }

  /** Samples of the rejection ratio between two times. */
  public double[] ratios(double fromSeconds, double toSeconds) {
    long from = (long) (fromSeconds * 1e9);
    long to = (long) (toSeconds * 1e9);
    return java.util.stream.IntStream.range(0, samples)
        .filter(i -> sampleAt[i] >= from && sampleAt[i] < to).mapToDouble(i -> ratio[i]).toArray();
  }

  /** Samples of the queue length between two times. */
  public int[] queueLengths(double fromSeconds, double toSeconds) {
    return ints(queued, fromSeconds, toSeconds);
  }

  /** Samples of requests in the service (running or waiting inside it) between two times. */
  public int[] inService(double fromSeconds, double toSeconds) {
    return ints(inService, fromSeconds, toSeconds);
  }

  private int[] ints(int[] series, double fromSeconds, double toSeconds) {
    long from = (long) (fromSeconds * 1e9);
    long to = (long) (toSeconds * 1e9);
    return java.util.stream.IntStream.range(0, samples)
        .filter(i -> sampleAt[i] >= from && sampleAt[i] < to).map(i -> series[i]).toArray();
  }
}
