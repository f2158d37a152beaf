package dev.weir.sim;

import dev.weir.Priority;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.Set;
import java.util.function.DoubleUnaryOperator;

/**
 * A corpus of generated scenarios across service shapes, sizes, loads, tier mixes, capacity
 * changes and cold starts, for judging adaptive control on services it was not tuned on. Every
 * scenario is drawn from a fixed seed: the corpus is the same on every run.
 *
 * <p>Each family draws {@value #PER_FAMILY} scenarios ({@code mixed-pareto} and {@code fast} 12);
 * the last {@value #HELD_OUT_PER_FAMILY} of each (their own seeds) are held out, and the whole
 * {@code mixed-pareto} family is held out: not to be tuned on, only to check that what was tuned
 * on the rest carries over.
 *
 * <p>Scenarios are measured on the requests that arrive from {@value #WARM} s to {@value #END} s;
 * each runs on for one request timeout after that, so every measured request has its answer.
 */
public final class Corpus {
  /** Scenarios per family. */
  public static final int PER_FAMILY = 22;
  /** Of which held out, the last of each family. */
  public static final int HELD_OUT_PER_FAMILY = 4;
  /** The start of the measured window, seconds. */
  public static final double WARM = 4;
  /** The end of the measured window, seconds. */
  public static final double END = 20;

  /** The held-out family. */
  public static final String HELD_OUT_FAMILY = "mixed-pareto";

  static final double[] TWO_TIERS = {0, 0.5, 0, 0, 0, 0.5};
  static final double[] SIX_TIERS = {1, 1, 1, 1, 1, 1};
  static final double[] BATCH = {0, 0.05, 0, 0, 0, 0.95};
  /** The priority of every request in a service that sets none. */
  public static final int DEFAULT_PRIORITY = Priority.of(3, 64);

  /** The most requests per second a scenario offers, to keep the corpus cheap to run. */
  private static final double MAX_RATE = 2500;
  /**
   * The most a {@code fast} scenario offers. Past 5,120 immediate admissions a second a shedder
   * reads the latency of one admission in 2^k, as a real server's does at 20,000-60,000.
   */
  private static final double MAX_FAST_RATE = 15000;
  /** The most a {@code fast} service serves, in requests per second. */
  private static final double FAST_CAPACITY = 10000;
  /** Scenarios in the {@code fast} family: the costliest to simulate, so fewer. */
  private static final int FAST_COUNT = 12;

  private static final double[] LOADS = {0.5, 0.8, 1.2, 1.5, 2, 3, 5};

  /**
   * The families, in order. A family's seeds come from its index, so a new family goes last and
   * every other keeps its scenarios.
   */
  public static final List<String> FAMILIES = List.of("pool-lognormal", "pool-pareto",
      "pool-bimodal", "cpu", "mixed", "capacity-step", "capacity-ramp", "gc-stall", "load-shape",
      "single-tier", HELD_OUT_FAMILY, "cold-start", "busy-start", "fast");

  private Corpus() {}

  /** One scenario of the corpus and what the scorecard needs to know about it. */
  public static final class Case {
    public final Scenario scenario;
    public final String family;
    public final boolean heldOut;
    /** The offered load as a multiple of full-speed capacity, as generated (peak, for shapes). */
    public final double load;

    Case(Scenario scenario, String family, boolean heldOut, double load) {
      this.scenario = scenario;
      this.family = family;
      this.heldOut = heldOut;
      this.load = load;
    }

    /** The most important tier with traffic. */
    public int topTier() {
      for (int t = 0; t < Priority.TIERS; t++) {
        if (scenario.tierShare(t) > 0) {
          return t;
        }
      }
      throw new AssertionError();
    }

    /** The capacity at {@code t}, on the speed averaged over the second around it. */
    double smoothedSpeed(double t) {
      return scenario.model().speed().mean(Math.max(0, t - 0.5), t + 0.5);
    }

    /**
     * The highest offered load from the service's start to the window's end as a share of the
     * capacity (speed averaged over a second): a scenario at most 0.8 of it is one the guard should
     * leave alone, in the window and in the start before it, which goal 5 judges too.
     */
    public double peakUtilisation() {
      double peak = 0;
      for (double t = 0; t < END; t += 0.1) {
        double cap = scenario.model().capacity() * smoothedSpeed(t);
        peak = Math.max(peak, scenario.arrivalsAt(t) / cap);
      }
      return peak;
    }

    /** Whether the load is low enough that nothing should be shed: at most 0.8 of capacity. */
    public boolean lowLoad() {
      return peakUtilisation() <= 0.8 + 1e-9;
    }

    /**
     * Whether the top tier fits: at every tenth of a second in the window it offers at most 0.9
     * of what the service can complete (speed averaged over a second; under overload, less the
     * CPU that rejecting the rest costs).
     */
    public boolean topTierFits() {
      int top = topTier();
      ServiceModel m = scenario.model();
      for (double t = WARM; t < END; t += 0.1) {
        double offered = scenario.arrivalsAt(t);
        double speed = smoothedSpeed(t);
        double full = m.capacity() * speed;
        double can = offered > full ? m.admittable(offered, speed) : full;
        if (offered * scenario.tierShare(top) > 0.9 * can) {
          return false;
        }
      }
      return true;
    }

    @Override
    public String toString() {
      return scenario.name() + (heldOut ? " [held out]" : "") + ": " + scenario.description();
    }
  }

  /** Every scenario, family by family. */
  public static List<Case> all() {
    List<Case> all = new ArrayList<>();
    for (int f = 0; f < FAMILIES.size(); f++) {
      all.addAll(family(FAMILIES.get(f), f));
    }
    return Collections.unmodifiableList(all);
  }

  /**
   * The same scenarios with another request stream: each run's seed offset by {@code stream}
   * (0: unchanged). The services, loads and mixes stay as generated; only the draws of arrivals
   * and work change, so a change can be judged on more than one stream of the same corpus.
   */
  public static List<Case> stream(List<Case> cases, long stream) {
    if (stream == 0) {
      return cases;
    }
    List<Case> out = new ArrayList<>(cases.size());
    for (Case c : cases) {
      out.add(new Case(c.scenario.withSeed(c.scenario.seed + stream), c.family, c.heldOut,
          c.load));
    }
    return out;
  }

  /** The scenarios of one family. */
  public static List<Case> family(String name) {
    int f = FAMILIES.indexOf(name);
    if (f < 0) {
      throw new IllegalArgumentException("unknown family '" + name + "'; families: " + FAMILIES);
    }
    return family(name, f);
  }

  private static List<Case> family(String name, int index) {
    boolean wholeFamilyHeldOut = name.equals(HELD_OUT_FAMILY);
    int count = wholeFamilyHeldOut ? 12 : name.equals("fast") ? FAST_COUNT : PER_FAMILY;
    List<Case> cases = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      long seed = 1000L * (index + 1) + i;
      boolean heldOut = wholeFamilyHeldOut || i >= count - HELD_OUT_PER_FAMILY;
      cases.add(generate(name, i, seed, heldOut));
    }
    return cases;
  }

  private static Case generate(String family, int i, long seed, boolean heldOut) {
    SplittableRandom r = new SplittableRandom(seed);
    ServiceModel model;
    double load = pick(r, LOADS);
    String shape = "steady";
    DoubleUnaryOperator loadAt = null;
    double[] mix = pickMix(r);
    int fixedPriority = -1;
    double maxRate = MAX_RATE;
    switch (family) {
      case "pool-lognormal":
        model = pool(r, Dist.lognormal(1, pick(r, 0.3, 0.5, 1.0)));
        break;
      case "pool-pareto":
        model = pool(r, Dist.pareto(1, pick(r, 1.5, 2.0, 3.0)));
        break;
      case "pool-bimodal":
        double hit = pick(r, 0.8, 0.9, 0.95);
        double ratio = pick(r, 5, 10, 30);
        model = pool(r, Dist.bimodal(hit, 1, ratio));
        break;
      case "cpu":
        if (i == 0) {
          // The field report: 2 cores, ~4 ms of CPU per request, 50/50 tiers 1 and 5, at 1.5x.
          model = ServiceModel.cpu(2, Dist.lognormal(0.004, 0.5));
          load = 1.5;
          mix = TWO_TIERS;
        } else {
          model = cpu(r);
        }
        break;
      case "mixed":
        model = mixed(r, pickOne(r, Dist.lognormal(1, 0.5), Dist.bimodal(0.9, 1, 20)));
        break;
      case HELD_OUT_FAMILY:
        model = mixed(r, Dist.pareto(1, pick(r, 1.5, 2.0)));
        break;
      case "capacity-step":
        model = any(r).withSpeed(Speed.step(8, 14, pick(r, 0.25, 0.5, 0.7)));
        load = pick(r, 0.4, 0.6, 0.8, 1.2);
        break;
      case "capacity-ramp":
        model = any(r).withSpeed(Speed.ramp(6, 10, 13, 17, pick(r, 0.3, 0.5, 0.7)));
        load = pick(r, 0.4, 0.6, 0.8, 1.2);
        break;
      case "gc-stall":
        model = any(r).withSpeed(Speed.stalls(pick(r, 1.0, 1.7), pick(r, 2.0, 3.0, 5.0),
            pick(r, 0.05, 0.1, 0.2, 0.4), END + 30));
        break;
      case "load-shape":
        model = any(r);
        if (r.nextBoolean()) {
          double base = pick(r, 0.3, 0.6);
          double peak = Math.min(pick(r, 2, 4, 8), 4 * MAX_RATE / model.capacity());
          double len = pick(r, 1.0, 2.0, 4.0);
          shape = String.format(Locale.ROOT, "bursts to %.0fx for %.0f s at 8 and 14 s over %.1fx",
              peak, len, base);
          double cap = model.capacity();
          loadAt = t -> cap * ((t >= 8 && t < 8 + len) || (t >= 14 && t < 14 + len) ? peak : base);
          load = peak;
        } else {
          double peak = Math.min(pick(r, 1.5, 3.0, 5.0), MAX_RATE / model.capacity());
          shape = String.format(Locale.ROOT, "ramp 0.3x to %.1fx over 20 s", peak);
          double cap = model.capacity();
          loadAt = t -> cap * (0.3 + (peak - 0.3) * Math.min(1, t / END));
          load = peak;
        }
        break;
      case "cold-start":
        // A JVM service taking traffic before its JIT has compiled the hot path: CPU-bound or a
        // CPU stage before a pool, 5-20 times slower until 0.25-1 s of one core's CPU warm it.
        model = (r.nextBoolean() ? cpu(r) : mixed(r, Dist.lognormal(1, 0.5)))
            .withColdStart(pick(r, 0.05, 0.1, 0.2), pick(r, 0.25, 0.5, 1.0));
        break;
      case "busy-start":
        // A service slow for its first seconds whatever its load (the machine still busy with
        // something else as it starts), then at full speed: what its guard measures first is not
        // the service it will serve. The window, from 4 s, sees what that reading left behind.
        double until = pick(r, 1.0, 2.0, 4.0);
        model = any(r).withSpeed(Speed.step(0.001, until, pick(r, 0.1, 0.2, 0.5)));
        break;
      case "fast":
        // Services of 2,500-10,000 requests a second, offered up to 15,000: rates at which the
        // latency is sampled rather than read on every admission.
        model = fast(r);
        maxRate = MAX_FAST_RATE;
        break;
      case "single-tier":
        model = any(r);
        mix = SIX_TIERS;
        fixedPriority = DEFAULT_PRIORITY;
        break;
      default:
        throw new IllegalArgumentException(family);
    }
    double cap = model.capacity();
    if (loadAt == null) {
      // The costliest scenarios to simulate are the fastest services at the highest loads: at
      // most 2,500 requests per second (15,000 in the fast family).
      load = Math.min(load, Math.floor(10 * maxRate / cap) / 10);
      double l = load;
      loadAt = t -> l * cap;
      shape = String.format(Locale.ROOT, "%.1fx", load);
    }
    double timeout = timeoutSeconds(model);
    String mixName = fixedPriority >= 0 ? "one priority (3:64)" : mixName(mix);
    Scenario s = Scenario.builder(String.format(Locale.ROOT, "%s-%02d", family, i))
        .description(String.format(Locale.ROOT, "%s; %s; %s; capacity %.0f/s; timeout %.1f s",
            model, shape, mixName, cap, timeout))
        .service(model).arrivalsPerSecond(loadAt).tierMix(mix).fixedPriority(fixedPriority)
        .requestTimeout(timeout).duration(END + timeout + 0.5).seed(seed).build();
    return new Case(s, family, heldOut, load);
  }

  /** Twice the unloaded P99, in half seconds, from 1 to 8 s: the longest tails time out. */
  static double timeoutSeconds(ServiceModel model) {
    return Math.min(8, Math.max(1, Math.ceil(4 * model.unloadedP99()) / 2));
  }

  private static String mixName(double[] mix) {
    if (mix == TWO_TIERS) {
      return "50% tier 1, 50% tier 5";
    }
    if (mix == BATCH) {
      return "5% tier 1, 95% tier 5 (batch)";
    }
    return "6 tiers uniform";
  }

  private static double[] pickMix(SplittableRandom r) {
    int k = r.nextInt(3);
    return k == 0 ? TWO_TIERS : k == 1 ? SIX_TIERS : BATCH;
  }

  /**
   * A pool of 1 to 1,000 workers with {@code shape} scaled so the capacity stays simulable: 50
   * requests per second per worker up to 400/s, and a mean of at most half a second (a thousand
   * workers serve 2,000/s).
   */
  private static ServiceModel pool(SplittableRandom r, Dist shape) {
    int n = pick(r, 1, 2, 4, 8, 16, 32, 100, 300, 1000);
    double mean = Math.min(0.5, n / Math.min(50.0 * n, 400));
    return ServiceModel.pool(n, shape.withMean(mean));
  }

  /** Processor sharing on 1 to 16 cores, 1 to 10 ms of CPU, capped at 600 requests/s. */
  private static ServiceModel cpu(SplittableRandom r) {
    int k = pick(r, 1, 2, 2, 4, 8, 16);
    double cpu = Math.max(pick(r, 0.001, 0.004, 0.010), k / 600.0);
    return ServiceModel.cpu(k, Dist.lognormal(cpu, pick(r, 0.3, 0.5, 1.0)));
  }

  /**
   * A CPU stage on 2 to 8 cores, then a pool of 4 to 200 workers of {@code shape}: the CPU or the
   * pool the bottleneck, at random.
   */
  private static ServiceModel mixed(SplittableRandom r, Dist shape) {
    int k = pick(r, 2, 4, 8);
    double cpu = Math.max(pick(r, 0.001, 0.002, 0.004), k / 600.0);
    int n = pick(r, 4, 16, 64, 200);
    return mixed(r, k, cpu, n, shape);
  }

  /**
   * A CPU stage of {@code cpu} seconds a request (lognormal, sigma 0.5) on {@code k} cores, then a
   * pool of {@code n} workers of {@code shape} whose capacity is 1.5x or 0.6x the CPU's, at random.
   */
  private static ServiceModel mixed(SplittableRandom r, int k, double cpu, int n, Dist shape) {
    double cpuCapacity = k / cpu;
    double poolCapacity = r.nextBoolean() ? 1.5 * cpuCapacity : 0.6 * cpuCapacity;
    return ServiceModel.mixed(k, Dist.lognormal(cpu, 0.5), n, shape.withMean(n / poolCapacity));
  }

  /**
   * A service of 2,500 to 10,000 requests per second: processor sharing on 2 to 8 cores at
   * 0.2-0.8 ms of CPU; a pool of 8 to 512 workers (lognormal or Pareto, 0.8-205 ms); or a CPU
   * stage then such a pool, either the bottleneck.
   */
  private static ServiceModel fast(SplittableRandom r) {
    int kind = r.nextInt(3);
    int k = pick(r, 2, 4, 8);
    double cpu = Math.max(pick(r, 0.0001, 0.0002, 0.0004), k / FAST_CAPACITY);
    if (kind == 0) {
      return ServiceModel.cpu(k, Dist.lognormal(cpu, pick(r, 0.3, 0.5, 1.0)));
    }
    int n = pick(r, 8, 32, 128, 512);
    Dist shape = r.nextBoolean() ? Dist.lognormal(1, 0.5) : Dist.pareto(1, 2.0);
    if (kind == 1) {
      double capacity = pick(r, 2500, 5000, FAST_CAPACITY);
      return ServiceModel.pool(n, shape.withMean(n / capacity));
    }
    return mixed(r, k, cpu, n, shape);
  }

  private static ServiceModel any(SplittableRandom r) {
    int k = r.nextInt(3);
    return k == 0 ? pool(r, Dist.lognormal(1, 0.5)) : k == 1 ? cpu(r)
        : mixed(r, Dist.lognormal(1, 0.5));
  }

  private static double pick(SplittableRandom r, double... v) {
    return v[r.nextInt(v.length)];
  }

  private static int pick(SplittableRandom r, int... v) {
    return v[r.nextInt(v.length)];
  }

  @SafeVarargs
  private static <T> T pickOne(SplittableRandom r, T... v) {
    return v[r.nextInt(v.length)];
  }

  /** The family names present in {@code cases}, in order. */
  static Set<String> families(List<Case> cases) {
    Set<String> s = new LinkedHashSet<>();
    cases.forEach(c -> s.add(c.family));
    return s;
  }
}
