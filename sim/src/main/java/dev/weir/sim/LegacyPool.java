package dev.weir.sim;

import dev.weir.VirtualTime;
import java.util.ArrayDeque;
import java.util.SplittableRandom;

/**
 * The M/G/N service of the named scenarios (S1-S10): {@code servers} servers and a FIFO queue, a
 * lognormal service time drawn when a request starts, from the simulation's one random stream, with
 * a mean that may change over time. Rejections cost nothing.
 */
final class LegacyPool implements Service {
  private final Scenario scenario;
  private final VirtualTime time;
  private final SplittableRandom random;
  private final ArrayDeque<Service.Job> queue = new ArrayDeque<>();
  private int busy;

  LegacyPool(Scenario scenario, VirtualTime time, SplittableRandom random) {
    this.scenario = scenario;
    this.time = time;
    this.random = random;
  }

  @Override
  public Service.Job job(Runnable done) {
    return new Service.Job(0, 0, done);
  }

  @Override
  public void start(Service.Job job) {
    if (busy < scenario.servers) {
      busy++;
      time.schedule(() -> finish(job), time.nanoTime() + serviceTime(time.nanoTime()));
    } else {
      queue.add(job);
    }
  }

  private void finish(Service.Job job) {
    busy--;
    // Hand the server to the oldest waiting call before releasing the permit: the release admits
    // new work, which must queue behind it, not take its server.
    Service.Job next = queue.poll();
    if (next != null) {
      start(next);
    }
    job.done.run();
  }

  @Override
  public void rejected() {}

  @Override
  public int inService() {
    return busy + queue.size();
  }

  private long serviceTime(long now) {
    double mean = scenario.meanServiceSeconds.applyAsDouble(now / 1e9);
    double sigma = scenario.serviceSigma;
    if (sigma == 0) {
      return (long) (mean * 1e9);
    }
    double mu = Math.log(mean) - sigma * sigma / 2;
    double z = gaussian();
    return Math.max(1, (long) (Math.exp(mu + sigma * z) * 1e9));
  }

  private double gaussian() {
    // Box-Muller, one value per call: simple and deterministic.
    double u1 = 1 - random.nextDouble();
    double u2 = random.nextDouble();
    return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  }
}
