package dev.weir.sim;

import java.util.Arrays;
import java.util.function.DoubleUnaryOperator;

/**
 * A simulated workload: a service of {@code servers} parallel servers with a lognormal service
 * time, offered open-loop Poisson load with a tier mix, for a fixed virtual duration. Rates and
 * service times may change over time, given as functions of seconds since the start.
 *
 * <p>Capacity is {@code servers / meanServiceTime}; loads are given as multiples of the capacity
 * at the start.
 */
public final class Scenario {
  final String name;
  final String description;
  final int servers;
  final DoubleUnaryOperator meanServiceSeconds;
  final double serviceSigma;
  final DoubleUnaryOperator arrivalsPerSecond;
  final double[] tierMix;
  final double durationSeconds;
  final double requestTimeoutSeconds;
  final long seed;
  final double closeAtSeconds;
  final boolean watchDeadlines;
  final ServiceModel model;
  final int fixedPriority;

  private Scenario(Builder b) {
    this.name = b.name;
    this.description = b.description;
    this.servers = b.servers;
    this.meanServiceSeconds = b.meanServiceSeconds;
    this.serviceSigma = b.serviceSigma;
    this.arrivalsPerSecond = b.arrivalsPerSecond;
    this.tierMix = b.tierMix.clone();
    this.durationSeconds = b.durationSeconds;
    this.requestTimeoutSeconds = b.requestTimeoutSeconds;
    this.seed = b.seed;
    this.closeAtSeconds = b.closeAtSeconds;
    this.watchDeadlines = b.watchDeadlines;
    this.model = b.model;
    this.fixedPriority = b.fixedPriority;
  }

  public static Builder builder(String name) {
    return new Builder(name);
  }

  public String name() {
    return name;
  }

  public String description() {
    return description;
  }

  public double durationSeconds() {
    return durationSeconds;
  }

  /** Capacity in requests per second at time {@code t} seconds. */
  public double capacityAt(double t) {
    if (model != null) {
      return model.capacity() * model.speed().at(t);
    }
    return servers / meanServiceSeconds.applyAsDouble(t);
  }

  /** The service model, or null for the M/G/N service of {@code servers} and a lognormal. */
  public ServiceModel model() {
    return model;
  }

  /** Offered load in requests per second at time {@code t} seconds. */
  public double arrivalsAt(double t) {
    return arrivalsPerSecond.applyAsDouble(t);
  }

  /** The share of tier {@code t} in the offered load. */
  public double tierShare(int t) {
    if (fixedPriority >= 0) {
      return dev.weir.Priority.tier(fixedPriority) == t ? 1 : 0;
    }
    return tierMix[t];
  }

  /** The one priority of every request, or -1 if requests carry tiers and cohorts. */
  public int fixedPriority() {
    return fixedPriority;
  }

  /** The client's request timeout, in seconds. */
  public double requestTimeoutSeconds() {
    return requestTimeoutSeconds;
  }

  /** A copy with another name. */
  public Scenario renamed(String name) {
    return copyInto(new Builder(name)).build();
  }

  /** A copy with another seed. */
  public Scenario withSeed(long seed) {
    return toBuilder().seed(seed).build();
  }

  /** A copy with another duration. */
  public Scenario withDuration(double seconds) {
    return toBuilder().duration(seconds).build();
  }

  public Builder toBuilder() {
    return copyInto(new Builder(name));
  }

  private Builder copyInto(Builder b) {
    b.description = description;
    b.servers = servers;
    b.meanServiceSeconds = meanServiceSeconds;
    b.serviceSigma = serviceSigma;
    b.arrivalsPerSecond = arrivalsPerSecond;
    b.tierMix = tierMix.clone();
    b.durationSeconds = durationSeconds;
    b.requestTimeoutSeconds = requestTimeoutSeconds;
    b.seed = seed;
    b.closeAtSeconds = closeAtSeconds;
    b.watchDeadlines = watchDeadlines;
    b.model = model;
    b.fixedPriority = fixedPriority;
    return b;
  }

  @Override
  public String toString() {
    return name + ": " + description;
  }

  /** Settings of a scenario. */
  public static final class Builder {
    private final String name;
    private String description = "";
    private int servers = 20;
    private DoubleUnaryOperator meanServiceSeconds = t -> 0.020;
    private double serviceSigma = 0.5;
    private DoubleUnaryOperator arrivalsPerSecond = t -> 500;
    private double[] tierMix = {0, 0.5, 0, 0, 0, 0.5};
    private double durationSeconds = 60;
    private double requestTimeoutSeconds = 1;
    private long seed = 1;
    private double closeAtSeconds = Double.NaN;
    private boolean watchDeadlines = true;
    private ServiceModel model;
    private int fixedPriority = -1;

    private Builder(String name) {
      this.name = name;
    }

    public Builder description(String v) {
      this.description = v;
      return this;
    }

    /** Parallel servers in the simulated service. Default 20. */
    public Builder servers(int v) {
      if (v < 1) {
        throw new IllegalArgumentException("servers must be at least 1, was " + v);
      }
      this.servers = v;
      return this;
    }

    /** Mean service time in seconds, as a function of time in seconds. Default 20 ms. */
    public Builder meanServiceSeconds(DoubleUnaryOperator v) {
      this.meanServiceSeconds = v;
      return this;
    }

    /** The lognormal's sigma: 0 is a constant service time. Default 0.5. */
    public Builder serviceSigma(double v) {
      if (!(v >= 0)) {
        throw new IllegalArgumentException("serviceSigma must be >= 0, was " + v);
      }
      this.serviceSigma = v;
      return this;
    }

    /** Offered load in requests per second, as a function of time in seconds. */
    public Builder arrivalsPerSecond(DoubleUnaryOperator v) {
      this.arrivalsPerSecond = v;
      return this;
    }

    /** The share of each tier 0..5 in the offered load; normalised. */
    public Builder tierMix(double... shares) {
      if (shares.length != 6 || Arrays.stream(shares).anyMatch(s -> s < 0)
          || Arrays.stream(shares).sum() <= 0) {
        throw new IllegalArgumentException("tierMix needs 6 non-negative shares, was "
            + Arrays.toString(shares));
      }
      double sum = Arrays.stream(shares).sum();
      this.tierMix = Arrays.stream(shares).map(s -> s / sum).toArray();
      return this;
    }

    public Builder duration(double seconds) {
      if (!(seconds > 0)) {
        throw new IllegalArgumentException("duration must be positive, was " + seconds);
      }
      this.durationSeconds = seconds;
      return this;
    }

    /** The client's request timeout, and the shedder's. Default 1 s. */
    public Builder requestTimeout(double seconds) {
      if (!(seconds > 0)) {
        throw new IllegalArgumentException("requestTimeout must be positive, was " + seconds);
      }
      this.requestTimeoutSeconds = seconds;
      return this;
    }

    /**
     * Whether admitted requests are answered 503 at their deadline, as an adapter in bounded
     * response time mode does (default). Without it, late answers are client timeouts, and the
     * shedder samples the fast path's latency as it does behind a plain filter.
     */
    public Builder watchDeadlines(boolean v) {
      this.watchDeadlines = v;
      return this;
    }

    /** Closes the shedder at this time (seconds), as a server shutting down does. */
    public Builder closeAt(double seconds) {
      this.closeAtSeconds = seconds;
      return this;
    }

    /**
     * The service: processor sharing, a pool, or both in turn, with its own work distributions and
     * speed over time. Without one (default) the service is {@code servers} servers with a
     * lognormal service time of {@code meanServiceSeconds} and {@code serviceSigma}.
     */
    public Builder service(ServiceModel v) {
      this.model = v;
      return this;
    }

    /**
     * Gives every request this one priority, as a service that sets none does; -1 (default) draws
     * a tier from the mix and a uniform cohort.
     */
    public Builder fixedPriority(int v) {
      if (v != -1) {
        dev.weir.Priority.check(v);
      }
      this.fixedPriority = v;
      return this;
    }

    public Builder seed(long v) {
      this.seed = v;
      return this;
    }

    public Scenario build() {
      return new Scenario(this);
    }
  }
}
