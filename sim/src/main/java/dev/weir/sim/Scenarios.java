package dev.weir.sim;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The named scenarios that Weir's adaptive control is proven against (S1 to S10), most on a service
 * of 20 servers with a 20 ms mean lognormal service time: a capacity of 1000 requests per second.
 */
public final class Scenarios {
  /** Servers in the reference service. */
  public static final int SERVERS = 20;
  /** Mean service time of the reference service, in seconds. */
  public static final double SERVICE = 0.020;
  /** Capacity of the reference service, requests per second. */
  public static final double CAPACITY = SERVERS / SERVICE;

  private static final double[] TWO_TIERS = {0, 0.5, 0, 0, 0, 0.5};
  private static final double[] FOUR_TIERS = {0.05, 0.10, 0, 0.35, 0, 0.50};

  private Scenarios() {}

  private static Scenario.Builder base(String name, double load) {
    return Scenario.builder(name).servers(SERVERS).meanServiceSeconds(t -> SERVICE)
        .arrivalsPerSecond(t -> load * CAPACITY).tierMix(TWO_TIERS).duration(60);
  }

  /** 0.3x capacity: the unloaded reference for latency bounds. */
  public static Scenario unloaded() {
    return base("unloaded", 0.3).description("0.3x capacity, the unloaded reference").build();
  }

  public static Scenario s1() {
    return base("S1", 0.5).description("0.5x capacity, steady").build();
  }

  public static Scenario s2() {
    return base("S2", 1.5).description("1.5x capacity; 50% tier 1, 50% tier 5").build();
  }

  public static Scenario s3() {
    return base("S3", 4).tierMix(FOUR_TIERS)
        .description("4x capacity; 5% tier 0, 10% tier 1, 35% tier 3, 50% tier 5").build();
  }

  /** The service time doubles at 30 s: 0.8x capacity becomes 1.6x. */
  public static Scenario s4() {
    return base("S4", 0.8).meanServiceSeconds(t -> t < 30 ? SERVICE : 2 * SERVICE)
        .description("capacity halves at 30 s (service time 20 -> 40 ms); 0.8x becomes 1.6x")
        .build();
  }

  /** The unloaded reference for S4 after the change: 0.3x of the halved capacity. */
  public static Scenario s4Unloaded() {
    return base("S4-unloaded", 0.15).meanServiceSeconds(t -> 2 * SERVICE)
        .description("0.3x of the halved capacity").build();
  }

  /** A 10x burst from 10 s to 15 s over a 0.3x base. */
  public static Scenario s5() {
    return base("S5", 0.3)
        .arrivalsPerSecond(t -> (t >= 10 && t < 15 ? 10 : 0.3) * CAPACITY).duration(40)
        .description("0.3x, a 10x burst from 10 s to 15 s, then 0.3x").build();
  }

  public static Scenario s6() {
    return base("S6", 0).arrivalsPerSecond(t -> 5).duration(600)
        .description("5 RPS for 10 minutes").build();
  }

  /** S2 on a 50 RPS service: 5 servers of 100 ms. */
  public static Scenario s7Small() {
    return Scenario.builder("S7-50rps").servers(5).meanServiceSeconds(t -> 0.100)
        .arrivalsPerSecond(t -> 75).tierMix(TWO_TIERS).duration(60)
        .description("S2 at a capacity of 50 RPS (5 servers x 100 ms)").build();
  }

  public static Scenario s7SmallUnloaded() {
    return s7Small().toBuilder().arrivalsPerSecond(t -> 15).description("0.3x of 50 RPS").build();
  }

  /** S2 on a 20,000 RPS service: 400 servers of 20 ms, the reference service time. */
  public static Scenario s7Large() {
    return Scenario.builder("S7-20krps").servers(400).meanServiceSeconds(t -> SERVICE)
        .arrivalsPerSecond(t -> 30_000).tierMix(TWO_TIERS).duration(30)
        .description("S2 at a capacity of 20,000 RPS (400 servers x 20 ms)").build();
  }

  public static Scenario s7LargeUnloaded() {
    return s7Large().toBuilder().arrivalsPerSecond(t -> 6_000).description("0.3x of 20,000 RPS")
        .build();
  }

  /** A downstream slows from 20 ms to 200 ms between 20 s and 80 s, at 0.5x of the normal
   * capacity (5x of the degraded one). */
  public static Scenario s8() {
    return base("S8", 0.5).meanServiceSeconds(t -> t >= 20 && t < 80 ? 10 * SERVICE : SERVICE)
        .duration(110).description("service 20 ms -> 200 ms from 20 s to 80 s; timeout 1 s")
        .build();
  }

  /** S3 held for 10 minutes. */
  public static Scenario s9() {
    return s3().toBuilder().duration(600).description("S3 held for 10 minutes").build().renamed("S9");
  }

  /**
   * The overload experiment's service (8 servers of 20 ms: 400 RPS) at 3x: tier 1 alone offers
   * 1.5x capacity, so the cut falls inside tier 1 and a third of its cohorts must be shed.
   */
  public static Scenario s10() {
    return Scenario.builder("S10").servers(8).meanServiceSeconds(t -> SERVICE)
        .arrivalsPerSecond(t -> 3 * 8 / SERVICE).tierMix(TWO_TIERS).duration(60)
        .description("3x of 400 RPS (8 servers x 20 ms); tier 1 alone is 1.5x capacity").build();
  }

  public static Scenario s10Unloaded() {
    return s10().toBuilder().arrivalsPerSecond(t -> 0.3 * 8 / SERVICE)
        .description("0.3x of 400 RPS").build();
  }

  /** Every named scenario, by name. */
  public static Map<String, Scenario> all() {
    Map<String, Scenario> m = new LinkedHashMap<>();
    for (Scenario s : new Scenario[] {s1(), s2(), s3(), s4(), s5(), s6(), s7Small(), s7Large(),
        s8(), s9(), s10(), unloaded()}) {
      m.put(s.name().toLowerCase(java.util.Locale.ROOT), s);
    }
    return m;
  }
}
