package dev.weir.examples;

import dev.weir.Cohorts;
import dev.weir.Priority;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.locks.LockSupport;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * An open-loop HTTP load generator: request start times follow a Poisson (or fixed-rate) schedule
 * that does not depend on the responses, so a slow server gets the same offered load as a fast
 * one, as it would from a large population of independent users. (A closed-loop client, which
 * waits for an answer before sending again, slows down with the server and hides its collapse.)
 *
 * <p>Each request is from a user drawn from a population of users and has a tier drawn from a
 * {@link TierMix}. Like an edge service, the generator derives the user's cohort with {@link
 * Cohorts} and sends both in the tier header, {@code X-Weir-Tier: tier:cohort}, which Weir's
 * servlet filter reads with no configuration; it can also send the raw user key in a header of
 * choice, for servers configured to hash it themselves. The client gives up after a timeout.
 *
 * <p>One thread keeps the schedule and a few others send, over Jetty's asynchronous client with
 * no cap on connections, so no response, and no slow connection set-up, delays a later request.
 * Latency and the timeout are measured from the <em>scheduled</em> start, as the user would: a
 * late send (a stalled machine) is charged to the latency rather than hidden, and a 2xx later than
 * the timeout counts as a timeout. {@link LoadReport#maxSendLagMillis()} tells how late sends were.
 *
 * <p>A run sends for a warm-up, whose requests are not counted, then for a measured window, then
 * waits for the measured requests to end (at most the timeout, plus a margin) and returns a
 * {@link LoadReport}. Runs are bounded in time and clean up their client. Instances are immutable;
 * each run has its own HTTP client and threads.
 *
 * <p>For a run that changes partway, the rate can step at given moments of the measured window
 * ({@link Builder#rateFrom}), an action can run at a given moment ({@link Builder#at}), such as
 * slowing a dependency down, and the report can be cut into slices of the window by scheduled
 * send time ({@link Builder#slices}), to show how the server met the change and how it recovered.
 */
public final class LoadGenerator {
  private static final int SENDERS = 4;

  private final URI target;
  private final URI other; // null: every request goes to target
  private final double rate;
  private final long warmupNanos;
  private final long durationNanos;
  private final long timeoutNanos;
  private final TierMix mix;
  private final boolean poisson;
  private final long seed;
  private final int users;
  private final String tierHeader;
  private final String userHeader; // null: not sent
  /** The rate from each moment of the measured window on, in nanoseconds after it opens. */
  private final TreeMap<Long, Double> rateChanges;
  /** Actions to run at moments of the measured window, in nanoseconds after it opens. */
  private final TreeMap<Long, List<Runnable>> actions;
  private final long sliceNanos; // 0: no slices
  private final Cohorts cohorts = Cohorts.rotating();

  private LoadGenerator(Builder b) {
    this.target = b.target;
    this.other = b.other;
    this.rate = b.rate;
    this.warmupNanos = b.warmup.toNanos();
    this.durationNanos = b.duration.toNanos();
    this.timeoutNanos = b.timeout.toNanos();
    this.mix = b.mix;
    this.poisson = b.poisson;
    this.seed = b.seed;
    this.users = b.users;
    this.tierHeader = b.tierHeader;
    this.userHeader = b.userHeader;
    this.rateChanges = new TreeMap<>(b.rateChanges);
    this.actions = new TreeMap<>();
    b.actions.forEach((at, list) -> actions.put(at, List.copyOf(list)));
    this.sliceNanos = b.slice == null ? 0 : b.slice.toNanos();
  }

  /** A builder for a generator that sends {@code GET target}. */
  public static Builder builder(URI target) {
    return new Builder(target);
  }

  /**
   * Runs the warm-up and the measured window; takes about warm-up + duration + timeout.
   *
   * @throws Exception if the HTTP client cannot start or stop
   */
  public LoadReport run() throws Exception {
    QueuedThreadPool threads = new QueuedThreadPool(32, 4);
    threads.setName("load-generator");
    threads.setDaemon(true);
    HttpClient client = new HttpClient();
    client.setExecutor(threads);
    // Effectively unbounded: a bound would queue requests inside the client, closing the loop.
    client.setMaxConnectionsPerDestination(100_000);
    client.setMaxRequestsQueuedPerDestination(1_000_000);
    client.setConnectTimeout(TimeUnit.NANOSECONDS.toMillis(timeoutNanos));
    client.setFollowRedirects(false);
    client.start();
    try {
      return drive(client);
    } finally {
      client.stop();
    }
  }

  /**
   * {@link #run()} in the background, on the common pool, for callers that watch the server while
   * the load runs. A failure to start or stop the client completes the future exceptionally.
   */
  public CompletableFuture<LoadReport> runInBackground() {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return run();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
  }

  private LoadReport drive(HttpClient client) throws InterruptedException {
    Random random = new Random(seed);
    List<Recorder> recorders = new ArrayList<>();
    Recorder[] byTier = new Recorder[Priority.TIERS];
    for (int tier : mix.tiers()) {
      byTier[tier] = new Recorder(tier);
      recorders.add(byTier[tier]);
    }
    int sliceCount = sliceNanos == 0 ? 0 : (int) ((durationNanos + sliceNanos - 1) / sliceNanos);
    Recorder[][] slices = new Recorder[sliceCount][Priority.TIERS];
    for (Recorder[] slice : slices) {
      for (int tier : mix.tiers()) {
        slice[tier] = new Recorder(tier);
      }
    }
    var pending = new ArrayList<>(actions.entrySet());
    int nextAction = 0;
    // Counts measured requests not yet ended, plus one for the scheduler until it finishes.
    AtomicLong outstanding = new AtomicLong(1);
    CompletableFuture<Void> drained = new CompletableFuture<>();
    LongAccumulator maxLag = new LongAccumulator(Math::max, 0);
    long timeoutMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeoutNanos));
    // The scheduler only keeps time; sending (which opens a connection when none is idle, as
    // after every client timeout) happens on these threads, so one slow send delays no other.
    ExecutorService senders = Executors.newFixedThreadPool(SENDERS, r -> {
      Thread t = new Thread(r, "load-generator-sender");
      t.setDaemon(true);
      return t;
    });
    try {
      long origin = System.nanoTime();
      long measureFrom = origin + warmupNanos;
      long end = measureFrom + durationNanos;
      double offset = 0; // a double, so that a fixed rate of 3 per ms does not drift
      long sequence = 0;
      while (true) {
        // A gap is drawn at the rate in force where it starts.
        double gapNanos = 1e9 / rateAt((long) offset - warmupNanos);
        offset += poisson ? -Math.log(1 - random.nextDouble()) * gapNanos : gapNanos;
        long due = origin + (long) offset;
        for (; nextAction < pending.size()
            && measureFrom + pending.get(nextAction).getKey() - Math.min(due, end) <= 0;
            nextAction++) {
          long at = measureFrom + pending.get(nextAction).getKey();
          parkUntil(at);
          pending.get(nextAction).getValue().forEach(senders::execute);
        }
        if (due - end >= 0) {
          break;
        }
        int tier = mix.sample(random);
        String user = "user-" + random.nextInt(users);
        URI to = other != null && (++sequence & 1) == 0 ? other : target;
        boolean measured = due - measureFrom >= 0;
        Recorder recorder = byTier[tier];
        Recorder sliceRecorder = measured && sliceCount > 0
            ? slices[(int) Math.min(sliceCount - 1, (due - measureFrom) / sliceNanos)][tier]
            : null;
        if (measured) {
          recorder.sent.incrementAndGet();
          outstanding.incrementAndGet();
          if (sliceRecorder != null) {
            sliceRecorder.sent.incrementAndGet();
          }
        }
        parkUntil(due);
        senders.execute(() -> {
          maxLag.accumulate(System.nanoTime() - due);
          var request = client.newRequest(to)
              .headers(h -> {
                h.put(tierHeader, tier + ":" + cohorts.cohort(user));
                if (userHeader != null) {
                  h.put(userHeader, user);
                }
              })
              .timeout(timeoutMillis, TimeUnit.MILLISECONDS);
          if (!measured) {
            // Warm-up: not counted, except as work done in the window if it ends there.
            request.send(result -> {
              long ended = System.nanoTime();
              Status status = Recorder.statusOf(result, ended - due, timeoutNanos);
              recorder.countIfEndedIn(status, ended, measureFrom, end);
              countInSlice(slices, tier, status, ended, measureFrom);
            });
            return;
          }
          request.send(result -> {
            long ended = System.nanoTime();
            Status status = Recorder.statusOf(result, ended - due, timeoutNanos);
            recorder.record(status, ended - due);
            recorder.countIfEndedIn(status, ended, measureFrom, end);
            if (sliceRecorder != null) {
              sliceRecorder.record(status, ended - due);
            }
            countInSlice(slices, tier, status, ended, measureFrom);
            if (outstanding.decrementAndGet() == 0) {
              drained.complete(null);
            }
          });
        });
      }
    } finally {
      senders.shutdown();
    }
    if (outstanding.decrementAndGet() == 0) {
      drained.complete(null);
    }
    try {
      // The client's timeout ends every request; the margin covers a loaded machine.
      drained.get(timeoutNanos + TimeUnit.SECONDS.toNanos(5), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      // Only on a badly stalled machine; unended requests are reported as timeouts below.
    } catch (ExecutionException e) {
      throw new AssertionError("drained is only ever completed normally", e);
    }
    double seconds = durationNanos / 1e9;
    List<TierStats> stats = new ArrayList<>();
    for (Recorder r : recorders) {
      stats.add(r.stats(seconds));
    }
    List<LoadReport> sliceReports = new ArrayList<>();
    for (int i = 0; i < sliceCount; i++) {
      // The last slice may be shorter than the others.
      double length = Math.min(sliceNanos, durationNanos - (long) i * sliceNanos) / 1e9;
      List<TierStats> sliceStats = new ArrayList<>();
      for (int tier : mix.tiers()) {
        sliceStats.add(slices[i][tier].stats(length));
      }
      sliceReports.add(new LoadReport(length, sliceStats, maxLag.get()));
    }
    return new LoadReport(seconds, stats, maxLag.get(), sliceReports);
  }

  /** The rate at {@code sinceMeasured} nanoseconds after the measured window opens. */
  private double rateAt(long sinceMeasured) {
    Map.Entry<Long, Double> change = rateChanges.floorEntry(sinceMeasured);
    return change == null ? rate : change.getValue();
  }

  private static void parkUntil(long due) throws InterruptedException {
    long now;
    while ((now = System.nanoTime()) - due < 0) {
      LockSupport.parkNanos(due - now);
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
    }
  }

  /** Counts a success in the slice it ended in, whenever it was sent; none without slices. */
  private void countInSlice(Recorder[][] slices, int tier, Status status, long ended,
      long measureFrom) {
    if (slices.length == 0 || status != Status.OK || ended - measureFrom < 0) {
      return;
    }
    long index = (ended - measureFrom) / sliceNanos;
    if (index < slices.length) {
      slices[(int) index][tier].endedOk.incrementAndGet();
    }
  }

  /** The outcomes of one tier's measured requests. Thread-safe. */
  private static final class Recorder {
    final int tier;
    final AtomicLong sent = new AtomicLong();
    final AtomicLongArray counts = new AtomicLongArray(Status.values().length);
    final AtomicLong endedOk = new AtomicLong();
    private long[] latencies = new long[1024];
    private int size;

    Recorder(int tier) {
      this.tier = tier;
    }

    /** Counts a measured request's outcome ({@link #statusOf}), a success with its latency. */
    void record(Status status, long latencyNanos) {
      counts.incrementAndGet(status.ordinal());
      if (status == Status.OK) {
        addLatency(latencyNanos);
      }
    }

    /** Counts a success that ended inside the measured window, whenever it was sent. */
    void countIfEndedIn(Status status, long endedNanos, long fromNanos, long toNanos) {
      if (status == Status.OK && endedNanos - fromNanos >= 0 && endedNanos - toNanos < 0) {
        endedOk.incrementAndGet();
      }
    }

    static Status statusOf(Result result, long latencyNanos, long timeoutNanos) {
      Status status;
      if (result.isFailed()) {
        status = isTimeout(result.getFailure()) ? Status.TIMEOUT : Status.OTHER;
      } else if (latencyNanos > timeoutNanos) {
        // The client's timer runs from the actual send; the user's deadline runs from when they
        // meant to send, so an answer that beat the former but not the latter came too late.
        status = Status.TIMEOUT;
      } else {
        status = Status.ofCode(result.getResponse().getStatus());
      }
      return status;
    }

    private static boolean isTimeout(Throwable failure) {
      for (Throwable t = failure; t != null; t = t.getCause()) {
        if (t instanceof TimeoutException || t instanceof SocketTimeoutException) {
          return true;
        }
      }
      return false;
    }

    private synchronized void addLatency(long nanos) {
      if (size == latencies.length) {
        latencies = Arrays.copyOf(latencies, size * 2);
      }
      latencies[size++] = nanos;
    }

    synchronized TierStats stats(double seconds) {
      long[] c = new long[counts.length()];
      long ended = 0;
      for (int i = 0; i < c.length; i++) {
        c[i] = counts.get(i);
        ended += c[i];
      }
      // A request the client never ended (only on a badly stalled machine) counts as a timeout.
      c[Status.TIMEOUT.ordinal()] += Math.max(0, sent.get() - ended);
      return new TierStats(tier, seconds, c, Arrays.copyOf(latencies, size), endedOk.get());
    }
  }

  /** Settings of a {@link LoadGenerator}; each has a default but the target. */
  public static final class Builder {
    private final URI target;
    private URI other;
    private double rate = 100;
    private Duration warmup = Duration.ofSeconds(3);
    private Duration duration = Duration.ofSeconds(10);
    private Duration timeout = Duration.ofSeconds(1);
    private TierMix mix = TierMix.parse("1:50,5:50");
    private boolean poisson = true;
    private long seed = 1;
    private int users = 1000;
    private String tierHeader = "X-Weir-Tier";
    private String userHeader;
    private final TreeMap<Long, Double> rateChanges = new TreeMap<>();
    private final TreeMap<Long, List<Runnable>> actions = new TreeMap<>();
    private Duration slice;

    private Builder(URI target) {
      this.target = Objects.requireNonNull(target, "target");
      if (!"http".equals(target.getScheme())) {
        throw new IllegalArgumentException("target must be an http URI, was " + target);
      }
    }

    /**
     * Sends every other request to {@code other} instead of the target, so that the load is
     * split evenly between two URIs; default none.
     */
    public Builder alternateWith(URI other) {
      if (!"http".equals(Objects.requireNonNull(other, "other").getScheme())) {
        throw new IllegalArgumentException("other must be an http URI, was " + other);
      }
      this.other = other;
      return this;
    }

    /** Requests per second, on average; default 100. */
    public Builder rate(double perSecond) {
      if (!(perSecond > 0 && perSecond <= 1_000_000)) {
        throw new IllegalArgumentException("rate must be in (0, 1000000] per second, was "
            + perSecond);
      }
      this.rate = perSecond;
      return this;
    }

    /**
     * From {@code at} after the measured window opens, {@code perSecond} requests a second
     * instead of the rate in force before; default: no change. A Poisson gap is drawn at the rate
     * where it starts, so a step takes effect within one gap. {@code at} must fall inside the
     * measured window, which {@link #build()} checks.
     */
    public Builder rateFrom(Duration at, double perSecond) {
      if (at.isNegative()) {
        throw new IllegalArgumentException("rateFrom's at must not be negative, was " + at);
      }
      if (!(perSecond > 0 && perSecond <= 1_000_000)) {
        throw new IllegalArgumentException("rateFrom's rate must be in (0, 1000000] per second,"
            + " was " + perSecond);
      }
      rateChanges.put(at.toNanos(), perSecond);
      return this;
    }

    /**
     * Runs {@code action} once, at {@code at} after the measured window opens, on one of the
     * threads that send: to change the service under load at a known moment. The action must be
     * quick. {@code at} must fall inside the measured window, which {@link #build()} checks.
     */
    public Builder at(Duration at, Runnable action) {
      if (at.isNegative()) {
        throw new IllegalArgumentException("at must not be negative, was " + at);
      }
      Objects.requireNonNull(action, "action");
      actions.computeIfAbsent(at.toNanos(), k -> new ArrayList<>()).add(action);
      return this;
    }

    /**
     * Also reports the measured window cut into slices of this length, by the time each request
     * was scheduled ({@link LoadReport#slices()}); default none.
     */
    public Builder slices(Duration slice) {
      this.slice = positive("slices", slice);
      return this;
    }

    /** Sending before the measured window, not counted; default 3 s, may be zero. */
    public Builder warmup(Duration warmup) {
      if (warmup.isNegative()) {
        throw new IllegalArgumentException("warmup must not be negative, was " + warmup);
      }
      this.warmup = warmup;
      return this;
    }

    /** The measured window; default 10 s. */
    public Builder duration(Duration duration) {
      this.duration = positive("duration", duration);
      return this;
    }

    /** How long a client waits for an answer; default 1 s. */
    public Builder timeout(Duration timeout) {
      this.timeout = positive("timeout", timeout);
      if (timeout.toMillis() < 1) {
        throw new IllegalArgumentException("timeout must be at least 1 ms, was " + timeout);
      }
      return this;
    }

    /** The tiers of requests; default {@code 1:50,5:50}. */
    public Builder mix(TierMix mix) {
      this.mix = Objects.requireNonNull(mix, "mix");
      return this;
    }

    /**
     * Poisson arrivals (exponential gaps, as from many independent users; the default) or, if
     * false, a fixed rate (equal gaps).
     */
    public Builder poisson(boolean poisson) {
      this.poisson = poisson;
      return this;
    }

    /** The seed of arrivals, tiers and users; default 1. */
    public Builder seed(long seed) {
      this.seed = seed;
      return this;
    }

    /** The number of distinct user keys; default 1000. */
    public Builder users(int users) {
      if (users < 1) {
        throw new IllegalArgumentException("users must be at least 1, was " + users);
      }
      this.users = users;
      return this;
    }

    /** The header that carries {@code tier:cohort}; default {@code X-Weir-Tier}. */
    public Builder tierHeader(String name) {
      this.tierHeader = header("tierHeader", name);
      return this;
    }

    /** A header to carry the raw user key too, such as {@code X-User}; default none. */
    public Builder userHeader(String name) {
      this.userHeader = header("userHeader", name);
      return this;
    }

    /**
     * Builds the generator.
     *
     * @throws IllegalArgumentException if a rate change or an action falls outside the measured
     *     window
     */
    public LoadGenerator build() {
      long last = Math.max(rateChanges.isEmpty() ? -1 : rateChanges.lastKey(),
          actions.isEmpty() ? -1 : actions.lastKey());
      if (last >= duration.toNanos()) {
        throw new IllegalArgumentException("a rate change or an action at "
            + Duration.ofNanos(last) + " falls outside the measured window of " + duration);
      }
      return new LoadGenerator(this);
    }

    private static Duration positive(String name, Duration d) {
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(name + " must be positive, was " + d);
      }
      return d;
    }

    private static String header(String setting, String name) {
      if (name == null || name.isBlank() || !name.chars().allMatch(c -> c > 32 && c < 127
          && c != ':')) {
        throw new IllegalArgumentException(setting + " must be a header name, was '" + name + "'");
      }
      return name;
    }
  }
}
