package dev.weir;

import dev.weir.control.Limits;
import dev.weir.control.Rejectors;
import dev.weir.internal.Check;
import dev.weir.internal.Credits;
import dev.weir.internal.WheelTimer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Admits requests by priority under an adaptive inflight limit, queues the rest, and sheds the
 * least important traffic when overloaded. One shedder guards one endpoint (or one service).
 *
 * <p><b>Life of a request.</b> {@link #submit} (or {@link #acquire}) with a packed {@link
 * Priority}. If nothing is queued and a permit is free, the request is admitted at once, whatever
 * its priority: the cutoff sheds only what would wait. Otherwise, if the {@link Rejector}'s cutoff
 * excludes it, it is rejected at once as {@link RejectReason#SHED}. Otherwise it waits in
 * a bucketed priority queue, at most its queue timeout: tiers strictly in order, arrival order
 * within a tier. A full queue evicts its least important request for a more important one; while
 * overloaded the queue is full at a limit and a half's worth (two limits' worth while the cut
 * spares the most important tier arriving; that tier, while it fits, may queue up to what the
 * permits admit in a queue timeout). The thread that releases a permit admits the next
 * waiting request; there is no dispatcher thread. The admitted request runs and {@linkplain
 * Permit#release releases} its permit with its outcome; its latency is the {@link Limit}'s sample.
 *
 * <p><b>Guarantees.</b> Every submitted request's callback hears exactly once. A permit is counted
 * exactly once however often it is released. A permit still held at its deadline plus the {@link
 * Builder#watchdogGrace watchdog's grace} is released by the shedder as {@link Outcome#DROPPED}
 * (at most one control interval later) and counted {@link Snapshot.Counter#RECLAIMED}; its
 * holder's later release returns false. So a
 * stuck application costs its own requests, never the route. All methods are thread-safe and
 * none blocks except {@link #acquire}.
 *
 * <p><b>Control.</b> Every {@code controlInterval}, on the timer, the shedder hands what it
 * observed to its {@link Limit} and {@link Rejector} and applies their answers. All time comes
 * from the {@link Timer}'s clock, so a shedder built on {@link VirtualTime} is fully
 * deterministic. {@code docs/design.md} explains the mechanism and each control rule.
 */
public final class LoadShedder implements AutoCloseable {

  private final String name;
  private final long requestTimeoutNanos;
  private final long queueTimeoutNanos;
  private final Limit limitController;
  private final Rejector rejector;
  /** Admits, queues, dispatches and rejects; see {@link Admission}. */
  private final Admission admission;
  /** The control tick, which applies the {@link OverloadPolicy}; see {@link ControlLoop}. */
  private final ControlLoop control;

  private LoadShedder(Builder b) {
    this.name = b.name;
    Timer timer = b.timer != null ? b.timer : Timer.system();
    this.requestTimeoutNanos = b.requestTimeout.toNanos();
    this.queueTimeoutNanos = Builder.queueTimeoutNanos(b);
    this.limitController = Builder.limitOf(b);
    this.rejector = Builder.rejectorOf(b);
    long grace = b.watchdogGrace != null ? b.watchdogGrace.toNanos() : requestTimeoutNanos;
    this.admission = new Admission(timer, requestTimeoutNanos, queueTimeoutNanos,
        b.queueCapacity, limitController.initialLimit(), grace);
    this.control = new ControlLoop(name, admission, limitController, rejector, b.queueCapacity,
        requestTimeoutNanos, queueTimeoutNanos, b.controlInterval.toNanos());
    control.start();
  }

  /** A builder whose every setting has a working default: {@code builder().build()} is enough. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Submits a request with the shedder's default request timeout. {@code callback} hears exactly
   * once, possibly before this method returns.
   *
   * @param priority a packed {@link Priority}
   * @throws IllegalArgumentException if {@code priority} is not a valid packed priority
   */
  public Ticket submit(int priority, AdmissionCallback callback) {
    return admission.submit(priority, requestTimeoutNanos, callback);
  }

  /**
   * Submits a request with its own request timeout: its processing deadline is {@code
   * timeoutNanos} from now, and it may wait in the queue the same fraction of that as the
   * shedder's queue timeout is of its request timeout (a third, by default).
   *
   * @throws IllegalArgumentException if {@code priority} is invalid or {@code timeoutNanos <= 0}
   */
  public Ticket submit(int priority, long timeoutNanos, AdmissionCallback callback) {
    return admission.submit(priority, timeoutNanos, callback);
  }

  /**
   * Blocks until the request is admitted or rejected, at most the queue timeout, using the
   * default request timeout.
   *
   * @throws RejectedException if the request was not admitted
   * @throws InterruptedException if interrupted while queued; the request is withdrawn
   */
  public Permit acquire(int priority) throws RejectedException, InterruptedException {
    return admission.acquire(priority, requestTimeoutNanos);
  }

  /**
   * Blocks until the request is admitted or rejected, for a request whose timeout is {@code
   * timeout}: it waits at most its queue timeout, the configured fraction of {@code timeout}.
   *
   * <p>Interruption, as with the JDK's interruptible locks, wins over whatever the wait would have
   * returned: a request interrupted while queued is withdrawn; one admitted in the same instant
   * has its permit released as {@link Outcome#DROPPED}; either way nothing is held afterwards.
   *
   * @throws RejectedException if the request was not admitted
   * @throws InterruptedException if interrupted while waiting; nothing is held
   */
  public Permit acquire(int priority, long timeout, TimeUnit unit)
      throws RejectedException, InterruptedException {
    return admission.acquire(priority, unit.toNanos(timeout));
  }

  /** The shedder's current state and counters. Cheap enough to call on every scrape. */
  public Snapshot snapshot() {
    long[][] c = admission.counters.totals();
    return new Snapshot(name, admission.credits.limit(), admission.credits.held(),
        admission.queued(), rejector.ratio(), admission.cutoff(), rejector.overloaded(), c);
  }

  /** The shedder's name, used in metrics and logs. */
  public String name() { return name; }

  /** The current inflight limit. */
  public int limit() { return admission.credits.limit(); }

  /**
   * Permits currently held: a moment's estimate, never negative. Exact while no credit moves; a
   * permit taken or given back at the moment of the call, or the shedder's tick moving credits
   * cached per thread back to the shared pool, can make it off by the credits moving (for an
   * instant, a quiet shedder can show one more than it holds). For metrics; to wait for a shedder
   * to drain, poll until it reads zero.
   */
  public int inflight() { return admission.credits.held(); }

  /** The permits' credits, for tests. */
  Credits credits() { return admission.credits; }

  /** Requests currently waiting. */
  public int queued() { return admission.queued(); }

  /** The current priority cutoff; {@link Priority#LEVELS} when nothing is shed. */
  public int cutoff() { return admission.cutoff(); }

  /** The rejector's current ratio. */
  public double rejectionRatio() { return rejector.ratio(); }

  /** Whether the rejector judges the shedder overloaded. */
  public boolean overloaded() { return rejector.overloaded(); }

  /** The largest limit the limit controller may set; sizes worker pools. */
  public int maxLimit() { return limitController.maxLimit(); }

  /**
   * Keeps the limit at most {@code cap}, the most admitted requests the host can run at once, from
   * the next control tick on: a {@link ConcurrencyBudget} of this shedder's own. An adapter calls
   * it when it learns that each admitted request holds one of a bounded pool's threads while it
   * runs, as a synchronous servlet does: above that many, admitted requests would wait for a thread
   * in the host's own queue, where the shedder neither sees them nor orders them by priority, and a
   * cut of a limit above the cap would cut nothing that runs. Thread-safe; the last call wins, and
   * {@link Integer#MAX_VALUE} lifts the cap.
   *
   * @throws IllegalArgumentException if {@code cap} is below 1
   */
  public void capConcurrency(int cap) {
    Check.atLeast("cap", cap, 1);
    control.share(cap == Integer.MAX_VALUE ? null : new ConcurrencyBudget(cap));
  }

  /**
   * Keeps the limit at most what {@code budget} leaves this shedder, from the next control tick
   * on, where several shedders' requests hold threads of one pool: see {@link ConcurrencyBudget}.
   * Thread-safe; the last call (of either form) wins, null lifts the cap, and a closed shedder
   * joins no budget.
   */
  public void capConcurrency(ConcurrencyBudget budget) {
    control.share(budget);
  }

  /** The budget this shedder's limit is capped by, or null if none. */
  public ConcurrencyBudget concurrencyBudget() { return control.budget(); }

  /**
   * What the {@linkplain #concurrencyBudget budget} leaves this shedder now (the cap the next
   * control tick applies, if nothing moves meanwhile), or {@link Integer#MAX_VALUE} if none.
   */
  public int concurrencyCap() { return control.concurrencyCap(); }

  /** The default request timeout, in nanoseconds. */
  public long requestTimeoutNanos() { return requestTimeoutNanos; }

  /** The default queue timeout, in nanoseconds. */
  public long queueTimeoutNanos() { return queueTimeoutNanos; }

  /** The clock all of this shedder's time comes from. */
  public Clock clock() { return admission.clock; }

  /**
   * A counter's total for one tier; same as {@code snapshot().count(counter, tier)}.
   *
   * @throws IllegalArgumentException if {@code tier} is not in 0..5
   */
  public long count(Snapshot.Counter counter, int tier) {
    return admission.counters.count(counter, tier);
  }

  /**
   * Total nanoseconds that admitted requests of {@code tier} spent waiting in the queue.
   *
   * @throws IllegalArgumentException if {@code tier} is not in 0..5
   */
  public long totalQueueWaitNanos(int tier) {
    return admission.counters.queueWaitNanos(tier);
  }

  /**
   * Stops admitting: every queued request, and every later submission, is answered {@link
   * RejectReason#SHUTTING_DOWN}. Permits already held stay valid and may still be released.
   * Idempotent. On the {@linkplain Timer#system() system timer}, once no shedder has anything
   * scheduled, its thread ends before this returns (waiting a second at most), so a stopped webapp
   * leaves none behind.
   */
  @Override
  public void close() {
    if (admission.isClosed()) {
      return;
    }
    admission.close();
    control.stop();
    admission.rejectQueued();
    if (admission.timer instanceof WheelTimer) {
      ((WheelTimer) admission.timer).purge(); // its cancelled ticks and timeouts, dropped now
    }
  }

  /** Whether {@link #close()} was called. */
  public boolean isClosed() {
    return admission.isClosed();
  }

  @Override
  public String toString() {
    return "LoadShedder{" + name + ", limit=" + limit() + ", inflight=" + inflight()
        + ", queued=" + queued() + ", cutoff=" + cutoff() + "}";
  }

  /**
   * Settings for a {@link LoadShedder}. Every setting has a default; an invalid value throws
   * {@link IllegalArgumentException} naming the setting, from the setter, or from {@link
   * #validate()} for settings that are checked together.
   *
   * <p>A builder is also a template: {@link #build()} may be called any number of times, and each
   * shedder gets its own limit controller and rejector from the factories. Adapters take one to
   * make a shedder per route, after {@link #copy() copying} and {@link #validate() validating}
   * it at configuration time. Not thread-safe.
   */
  public static final class Builder {
    /** Default request timeout, 3 s. */
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(3);
    /** Default queue capacity, 4096 requests. */
    public static final int DEFAULT_QUEUE_CAPACITY = 4096;
    /** Default control interval, 100 ms. */
    public static final Duration DEFAULT_CONTROL_INTERVAL = Duration.ofMillis(100);

    private String name = "default";
    private Timer timer;
    private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
    private Duration queueTimeout;
    private int queueCapacity = DEFAULT_QUEUE_CAPACITY;
    private Duration controlInterval = DEFAULT_CONTROL_INTERVAL;
    private Duration watchdogGrace;
    private Supplier<? extends Limit> limit = Limits::adaptive;
    private Supplier<? extends Rejector> rejector = Rejectors::adaptive;

    private Builder() {}

    /** An independent builder with the same settings. */
    public Builder copy() {
      Builder b = new Builder();
      b.name = name;
      b.timer = timer;
      b.requestTimeout = requestTimeout;
      b.queueTimeout = queueTimeout;
      b.queueCapacity = queueCapacity;
      b.controlInterval = controlInterval;
      b.watchdogGrace = watchdogGrace;
      b.limit = limit;
      b.rejector = rejector;
      return b;
    }

    /** The name in metrics and logs. Default {@code "default"}. */
    public Builder name(String name) {
      this.name = Check.notBlank("name", name);
      return this;
    }

    /**
     * The timer, and through it the clock, for all of the shedder's time. Default {@link
     * Timer#system()}; use {@link VirtualTime} for virtual time.
     */
    public Builder timer(Timer timer) {
      this.timer = Check.notNull("timer", timer);
      return this;
    }

    /**
     * The default request timeout: a request's processing deadline is this long after its
     * arrival. Default 3 s. Must be positive.
     */
    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = Check.positive("requestTimeout", requestTimeout);
      return this;
    }

    /**
     * How long a request may wait in the queue. Default a third of the request timeout, as in
     * Cinnamon: a request that waited longer has too little time left to be worth running. Must be
     * positive and at most the request timeout.
     */
    public Builder queueTimeout(Duration queueTimeout) {
      this.queueTimeout = Check.positive("queueTimeout", queueTimeout);
      return this;
    }

    /**
     * How many requests may wait. Default 4096; a full queue evicts a less important request for a
     * more important one. Must be at least 1.
     */
    public Builder queueCapacity(int queueCapacity) {
      this.queueCapacity = Check.atLeast("queueCapacity", queueCapacity, 1);
      return this;
    }

    /**
     * How long past its deadline (arrival plus request timeout) a permit may stay held before the
     * shedder's watchdog releases it as {@link Outcome#DROPPED} and counts it {@link
     * Snapshot.Counter#RECLAIMED}. Default: the shedder's {@link #requestTimeout}, so a permit
     * with that timeout is reclaimed at twice it: a grace on the route's own timescale, where a
     * fixed one would be too short for a slow route and needlessly long for a fast one (a request
     * submitted with a timeout of its own gets the same grace). Zero or positive. The watchdog
     * sweeps on the control tick, so a reclaim may come up to one control interval late, and
     * stops when the shedder is closed.
     */
    public Builder watchdogGrace(Duration watchdogGrace) {
      this.watchdogGrace = Check.notNegative("watchdogGrace", watchdogGrace);
      return this;
    }

    /** How often the limit and the rejector are updated. Default 100 ms. At least 1 ms. */
    public Builder controlInterval(Duration controlInterval) {
      this.controlInterval = Check.atLeast("controlInterval", controlInterval, Duration.ofMillis(1));
      return this;
    }

    /**
     * Makes the inflight limit controller, once per shedder built (a controller serves one
     * shedder), and once more in {@link #validate()}, whose controller is dropped. Default {@link
     * Limits#adaptive()}; {@code () -> Limits.fixed(n)} for a static limit.
     */
    public Builder limit(Supplier<? extends Limit> limit) {
      this.limit = Check.notNull("limit", limit);
      return this;
    }

    /**
     * Makes the rejector, once per shedder built, and once more in {@link #validate()}. Default
     * {@link Rejectors#adaptive()}; {@link Rejectors#none()} never sheds at the door.
     */
    public Builder rejector(Supplier<? extends Rejector> rejector) {
      this.rejector = Check.notNull("rejector", rejector);
      return this;
    }

    /**
     * Checks the settings together, as {@link #build()} does, without building: the queue
     * timeout is at most the request timeout, and the factories make a controller whose initial
     * limit is in {@code 1..maxLimit()}. Adapters call it at configuration time, so that no
     * setting they accepted fails on a request.
     *
     * @throws IllegalArgumentException naming the setting
     */
    public Builder validate() {
      limitOf(this);
      rejectorOf(this);
      queueTimeoutNanos(this);
      return this;
    }

    /** Builds a shedder and starts its control ticks. */
    public LoadShedder build() {
      return new LoadShedder(this);
    }

    static long queueTimeoutNanos(Builder b) {
      long request = b.requestTimeout.toNanos();
      long queue = b.queueTimeout != null ? b.queueTimeout.toNanos() : Math.max(1, request / 3);
      if (queue > request) {
        throw new IllegalArgumentException("queueTimeout (" + b.queueTimeout
            + ") must not exceed requestTimeout (" + b.requestTimeout + ")");
      }
      return queue;
    }

    static Limit limitOf(Builder b) {
      Limit l = b.limit.get();
      if (l == null) {
        throw new IllegalArgumentException("limit: the factory returned null");
      }
      int initial = l.initialLimit();
      if (initial < 1 || initial > l.maxLimit()) {
        throw new IllegalArgumentException("limit: initialLimit() must be in 1..maxLimit() ("
            + l.maxLimit() + "), was " + initial);
      }
      return l;
    }

    static Rejector rejectorOf(Builder b) {
      Rejector r = b.rejector.get();
      if (r == null) {
        throw new IllegalArgumentException("rejector: the factory returned null");
      }
      return r;
    }
  }
}
