package dev.weir.sim;

import dev.weir.VirtualTime;
import dev.weir.AdmissionCallback;
import dev.weir.LoadShedder;
import dev.weir.Permit;
import dev.weir.Priority;
import dev.weir.RejectReason;
import java.util.SplittableRandom;
import java.util.function.BiFunction;
import dev.weir.Timer;

/**
 * A discrete-event simulation, in {@link VirtualTime}, of open-loop clients, a guard and a
 * service, after Kingsbury's Timelike: the scenario's {@link ServiceModel} (processor sharing, a
 * pool, or both), or without one the M/G/N pool of the named scenarios ({@link LegacyPool}). It drives the real engine: the shedder under
 * test is the production {@link LoadShedder} on a virtual timer, with the production controllers.
 *
 * <p>Admitted requests run as an adapter in bounded-response-time mode runs them: the client gets
 * a 503 at the request's deadline if the service has not finished, and the service finishes the
 * work anyway (its permit is released then, as dropped). Without a guard, a client whose answer
 * comes after its timeout has given up.
 *
 * <p>Deterministic: one seed gives one result.
 */
public final class Simulation {
  private static final long SAMPLE_NANOS = 100_000_000L;
  /** How often a gap between arrivals looks for a change of the offered rate. */
  private static final long RATE_CHECK_NANOS = 1_000_000L;
  /** How often a zero rate is looked at again. */
  private static final long ZERO_RATE_POLL_NANOS = 10_000_000L;
  /** Mixed into the seed for the stream of work that a {@link ServiceModel} draws per arrival. */
  private static final long WORK_STREAM = 0x5DEECE66DL;

  private final Scenario scenario;
  private final VirtualTime time = new VirtualTime();
  private final SplittableRandom random;
  private final LoadShedder shedder;
  private final SimResult result;
  private final long timeoutNanos;
  private final long endNanos;
  private final double[] tierCdf = new double[6];

  private final Service service;

  private Simulation(Scenario scenario, String label,
      BiFunction<Timer, Scenario, LoadShedder> shedderFactory) {
    this.scenario = scenario;
    this.random = new SplittableRandom(scenario.seed);
    this.shedder = shedderFactory.apply(time, scenario);
    this.timeoutNanos = (long) (scenario.requestTimeoutSeconds * 1e9);
    this.endNanos = (long) (scenario.durationSeconds * 1e9);
    this.result = new SimResult(scenario, label, timeoutNanos);
    this.service = scenario.model == null ? new LegacyPool(scenario, time, random)
        : scenario.model.create(time, new SplittableRandom(scenario.seed ^ WORK_STREAM));
    double c = 0;
    for (int t = 0; t < 6; t++) {
      c += scenario.tierMix[t];
      tierCdf[t] = c;
    }
  }

  /** Runs {@code scenario} behind {@code guard} and returns what the clients saw. */
  public static SimResult run(Scenario scenario, Guard guard) {
    return new Simulation(scenario, guard.label(), guard::shedder).run();
  }

  /**
   * {@code tier}'s success ratio from {@code fromSeconds} to the end, averaged over {@code
   * scenario} on seeds 1 to {@code seeds}: for comparisons that one seed's noise would decide.
   */
  public static double meanSuccess(Scenario scenario, Guard guard, int tier, double fromSeconds,
      int seeds) {
    double sum = 0;
    for (int seed = 1; seed <= seeds; seed++) {
      Scenario seeded = scenario.withSeed(seed);
      sum += run(seeded, guard).report(fromSeconds, seeded.durationSeconds()).successRatio(tier);
    }
    return sum / seeds;
  }

  /**
   * Runs {@code scenario} behind the shedder that {@code factory} builds on the simulation's
   * virtual timer (null for no shedder). The factory must pass that timer to the builder.
   */
  public static SimResult run(Scenario scenario, String label,
      BiFunction<Timer, Scenario, LoadShedder> factory) {
    return new Simulation(scenario, label, factory).run();
  }

  private SimResult run() {
    time.schedule(this::arrive, nextArrival(0));
    time.schedule(this::sample, 0);
    if (shedder != null && !Double.isNaN(scenario.closeAtSeconds)) {
      time.schedule(shedder::close, (long) (scenario.closeAtSeconds * 1e9));
    }
    time.advanceTo(endNanos);
    if (shedder != null) {
      result.finalSnapshot = shedder.snapshot();
    }
    return result;
  }

  private double seconds(long nanos) {
    return nanos / 1e9;
  }

  /**
   * The next arrival after {@code now}, of a Poisson process whose rate may change over time. A
   * gap is drawn at the rate of its start; if the rate changes before the gap ends (looked at
   * every {@link #RATE_CHECK_NANOS}), nothing arrived at the old rate up to the change, and the
   * process, memoryless, draws afresh there at the new rate. So a burst starts when the rate
   * rises, not one gap at the old rate later. A constant rate draws exactly as before.
   */
  private long nextArrival(long now) {
    long t = now;
    while (t < endNanos) {
      double rate = scenario.arrivalsPerSecond.applyAsDouble(seconds(t));
      if (rate <= 0) {
        t += ZERO_RATE_POLL_NANOS;
        continue;
      }
      double gap = -Math.log(1 - random.nextDouble()) / rate;
      long next = t + Math.max(1, (long) (gap * 1e9));
      long change = -1;
      for (long c = t + RATE_CHECK_NANOS; c < next && c < endNanos; c += RATE_CHECK_NANOS) {
        if (scenario.arrivalsPerSecond.applyAsDouble(seconds(c)) != rate) {
          change = c;
          break;
        }
      }
      if (change < 0) {
        return next;
      }
      t = change;
    }
    return t;
  }

  private void arrive() {
    long now = time.nanoTime();
    if (scenario.arrivalsPerSecond.applyAsDouble(seconds(now)) > 0) {
      int tier;
      int cohort;
      if (scenario.fixedPriority >= 0) {
        tier = Priority.tier(scenario.fixedPriority);
        cohort = Priority.cohort(scenario.fixedPriority);
      } else {
        tier = pickTier();
        cohort = random.nextInt(Priority.COHORTS);
      }
      int id = result.arrival(now, tier, cohort);
      Call call = new Call(id, now);
      call.job = service.job(call);
      if (shedder == null) {
        call.admittedAt = now;
        service.start(call.job);
      } else {
        shedder.submit(Priority.of(tier, cohort), timeoutNanos, call);
      }
    }
    long next = nextArrival(now);
    if (next < endNanos) {
      time.schedule(this::arrive, next);
    }
  }

  private int pickTier() {
    double u = random.nextDouble();
    for (int t = 0; t < 5; t++) {
      if (u < tierCdf[t]) {
        return t;
      }
    }
    return 5;
  }

  private void finishService(Call call) {
    long now = time.nanoTime();
    boolean inTime = now - call.arrival <= timeoutNanos;
    if (!call.answered) {
      call.answered = true;
      result.answer(call.id, now, inTime ? Answer.OK : Answer.CLIENT_TIMEOUT);
    }
    if (call.permit != null) {
      if (inTime) {
        call.permit.success();
      } else {
        call.permit.dropped();
      }
    }
  }

  private void sample() {
    long now = time.nanoTime();
    if (shedder != null) {
      result.sample(now, shedder.limit(), shedder.rejectionRatio(), shedder.cutoff(),
          shedder.queued(), shedder.inflight(), service.inService());
    } else {
      result.sample(now, 0, 0, Priority.LEVELS, 0, service.inService(), service.inService());
    }
    if (now + SAMPLE_NANOS < endNanos) {
      time.schedule(this::sample, now + SAMPLE_NANOS);
    }
  }

  /** One request: the shedder's callback, the service's completion task, the deadline hook. */
  private final class Call implements AdmissionCallback, Runnable {
    final int id;
    final long arrival;
    long admittedAt = -1;
    Service.Job job;
    Permit permit;
    boolean answered;

    Call(int id, long arrival) {
      this.id = id;
      this.arrival = arrival;
    }

    @Override
    public void onAdmitted(Permit p) {
      permit = p;
      admittedAt = time.nanoTime();
      result.admitted(id, admittedAt - arrival);
      if (scenario.watchDeadlines) {
        p.onDeadline(this::deadline);
      }
      service.start(job);
    }

    @Override
    public void onRejected(RejectReason reason) {
      answered = true;
      result.answer(id, time.nanoTime(), answerOf(reason));
      service.rejected();
    }

    private void deadline() {
      if (!answered) {
        answered = true;
        result.answer(id, time.nanoTime(), Answer.DEADLINE);
      }
    }

    /** The service finished this request. */
    @Override
    public void run() {
      finishService(this);
    }
  }

  private static Answer answerOf(RejectReason reason) {
    switch (reason) {
      case SHED: return Answer.SHED;
      case QUEUE_FULL: return Answer.QUEUE_FULL;
      case QUEUE_TIMEOUT: return Answer.QUEUE_TIMEOUT;
      case SHUTTING_DOWN: return Answer.SHUTDOWN;
      default: throw new AssertionError(reason);
    }
  }
}
