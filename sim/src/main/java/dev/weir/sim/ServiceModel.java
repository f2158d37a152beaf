package dev.weir.sim;

import dev.weir.Timer;
import dev.weir.VirtualTime;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

/**
 * A service beyond the named scenarios' M/G/N: processor sharing on K cores, a pool of N workers,
 * or a CPU stage followed by a pool stage; any work distribution; a speed that changes over time.
 *
 * <ul>
 *   <li><b>Processor sharing</b> ({@link #cpu}): each request needs an amount of CPU; with n
 *       requests (and rejections, below) in service each progresses at {@code speed * min(1, K/n)}.
 *       A request alone takes its CPU time. A rejection costs {@code rejectCpu} seconds of CPU,
 *       shared like any other work, as writing a 429 costs a real server.
 *   <li><b>Pool</b> ({@link #pool}): N workers and a FIFO queue in front of them; a running request
 *       progresses at {@code speed}, so a stall freezes every running request. Rejections cost
 *       nothing (the workers wait on something other than the CPU that answers the 429).
 *   <li><b>Mixed</b> ({@link #mixed}): the CPU stage, then the pool stage (a request parses and
 *       computes on shared cores, then calls a downstream through a bounded pool).
 *   <li><b>Cold start</b> ({@link #withColdStart}): the CPU stage runs slow until a fixed amount of
 *       warm-up work is done, as a JVM's code runs interpreted until its JIT compiler has compiled
 *       it. The warm-up is one more job on the shared cores, so every request or rejection in
 *       service slows it: a service that admits too much while cold stays cold.
 * </ul>
 *
 * <p>The work of each request is drawn at its arrival from a stream of its own, so every guard
 * sees the same requests with the same work.
 */
public final class ServiceModel {
  /** The default CPU cost of a rejection: 50 microseconds. */
  public static final double DEFAULT_REJECT_CPU = 50e-6;

  private final int cores;
  private final Dist cpu;
  private final int workers;
  private final Dist pool;
  private final double rejectCpu;
  private final Speed speed;
  /** The CPU stage's speed until warm: 1 for a service that starts warm. */
  private final double coldSpeed;
  /** The CPU seconds, at full speed on one core, that warming the service takes. */
  private final double warmUpCpu;

  private ServiceModel(int cores, Dist cpu, int workers, Dist pool, double rejectCpu,
      Speed speed, double coldSpeed, double warmUpCpu) {
    this.cores = cores;
    this.cpu = cpu;
    this.workers = workers;
    this.pool = pool;
    this.rejectCpu = rejectCpu;
    this.speed = speed;
    this.coldSpeed = coldSpeed;
    this.warmUpCpu = warmUpCpu;
  }

  /** Processor sharing on {@code cores} cores, {@code cpu} seconds of CPU per request. */
  public static ServiceModel cpu(int cores, Dist cpu) {
    return new ServiceModel(check(cores, "cores"), cpu, 0, null, DEFAULT_REJECT_CPU,
        Speed.constant(), 1, 0);
  }

  /** A pool of {@code workers} workers, {@code work} seconds per request. */
  public static ServiceModel pool(int workers, Dist work) {
    return new ServiceModel(0, null, check(workers, "workers"), work, 0, Speed.constant(), 1, 0);
  }

  /** A CPU stage on {@code cores} cores, then a pool stage of {@code workers} workers. */
  public static ServiceModel mixed(int cores, Dist cpu, int workers, Dist pool) {
    return new ServiceModel(check(cores, "cores"), cpu, check(workers, "workers"), pool,
        DEFAULT_REJECT_CPU, Speed.constant(), 1, 0);
  }

  /** The same service with another speed over time. */
  public ServiceModel withSpeed(Speed s) {
    if (coldSpeed < 1 && !s.isConstant()) {
      throw new IllegalArgumentException("a cold start needs a constant speed");
    }
    return new ServiceModel(cores, cpu, workers, pool, rejectCpu, s, coldSpeed, warmUpCpu);
  }

  /** The same service with another CPU cost per rejection (seconds; only with a CPU stage). */
  public ServiceModel withRejectCpu(double seconds) {
    return new ServiceModel(cores, cpu, workers, pool, seconds, speed, coldSpeed, warmUpCpu);
  }

  /**
   * The same service starting cold: its CPU stage runs at {@code factor} of full speed (in (0, 1))
   * until warm, then at full speed. Warming takes {@code cpuSeconds} of one core's CPU, as one more
   * job on the shared cores: alone on an idle service it takes {@code cpuSeconds}; beside n
   * requests or rejections on K cores (n + 1 > K), about {@code cpuSeconds * (n + 1) / K}. Needs a
   * CPU stage and a constant speed.
   */
  public ServiceModel withColdStart(double factor, double cpuSeconds) {
    if (!hasCpu() || !speed.isConstant()) {
      throw new IllegalArgumentException("a cold start needs a CPU stage and a constant speed");
    }
    if (!(factor > 0 && factor < 1) || !(cpuSeconds > 0)) {
      throw new IllegalArgumentException("cold speed must be in (0, 1) and warm-up CPU positive, "
          + "were " + factor + " and " + cpuSeconds);
    }
    return new ServiceModel(cores, cpu, workers, pool, rejectCpu, speed, factor, cpuSeconds);
  }

  /** The same service already warm: this one if it does not start cold. */
  public ServiceModel warm() {
    return startsCold()
        ? new ServiceModel(cores, cpu, workers, pool, rejectCpu, speed, 1, 0) : this;
  }

  /** Whether the service starts cold ({@link #withColdStart}). */
  public boolean startsCold() {
    return coldSpeed < 1;
  }

  private static int check(int n, String what) {
    if (n < 1) {
      throw new IllegalArgumentException(what + " must be at least 1, was " + n);
    }
    return n;
  }

  public Speed speed() {
    return speed;
  }

  public boolean hasCpu() {
    return cores > 0;
  }

  public boolean hasPool() {
    return workers > 0;
  }

  public int cores() {
    return cores;
  }

  public int workers() {
    return workers;
  }

  /** The CPU cost of a rejection, seconds (0 without a CPU stage). */
  public double rejectCpu() {
    return hasCpu() ? rejectCpu : 0;
  }

  /** Requests per second the service completes at full speed, with nothing rejected. */
  public double capacity() {
    double c = Double.POSITIVE_INFINITY;
    if (hasCpu()) {
      c = cores / cpu.mean();
    }
    if (hasPool()) {
      c = Math.min(c, workers / pool.mean());
    }
    return c;
  }

  /**
   * The most requests per second the service can complete at {@code speedFactor} while {@code
   * offered} per second arrive and the rest are rejected: on a CPU stage the rejections' CPU comes
   * out of the cores, {@code a * cpu + (offered - a) * rejectCpu <= cores * speed}.
   */
  public double admittable(double offered, double speedFactor) {
    double c = Double.POSITIVE_INFINITY;
    if (hasCpu()) {
      double r = rejectCpu();
      double a = (cores * speedFactor - offered * r) / (cpu.mean() - r);
      c = Math.max(0, Math.min(offered, a));
      if (offered * cpu.mean() <= cores * speedFactor) {
        c = offered;
      }
    }
    if (hasPool()) {
      c = Math.min(c, workers * speedFactor / pool.mean());
    }
    return Math.min(c, offered);
  }

  /** The mean time a request takes alone in the service, seconds. */
  public double unloadedMean() {
    return (hasCpu() ? cpu.mean() : 0) + (hasPool() ? pool.mean() : 0);
  }

  /** About the 99th percentile of a request's time alone in the service, seconds. */
  public double unloadedP99() {
    return (hasCpu() ? cpu.p99() : 0) + (hasPool() ? pool.p99() : 0);
  }

  /**
   * Requests inside the service at full use and no waiting: Little's law, capacity times the
   * unloaded mean time.
   */
  public double concurrency() {
    return capacity() * unloadedMean();
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    if (hasCpu()) {
      sb.append(String.format(Locale.ROOT, "PS %d cores, cpu %s", cores, cpu));
    }
    if (hasPool()) {
      sb.append(sb.length() > 0 ? " then " : "")
          .append(String.format(Locale.ROOT, "pool %d, %s", workers, pool));
    }
    if (!speed.isConstant()) {
      sb.append("; speed ").append(speed);
    }
    if (startsCold()) {
      sb.append(String.format(Locale.ROOT, "; cold at %.2fx until %.1f s of CPU warm it",
          coldSpeed, warmUpCpu));
    }
    return sb.toString();
  }

  /** A running instance on {@code time}, drawing work from {@code random}. */
  Service create(VirtualTime time, SplittableRandom random) {
    Stage cpuStage = hasCpu() ? new Stage(time, cores, Integer.MAX_VALUE) : null;
    Stage poolStage = hasPool() ? new Stage(time, 0, workers) : null;
    // The warm-up job, while it runs: it is in the CPU stage but is no request.
    boolean[] warming = {startsCold()};
    if (warming[0]) {
      cpuStage.setSpeed(coldSpeed);
      // Its work is at the stage's speed: at the cold speed, warmUpCpu alone.
      cpuStage.add(warmUpCpu * coldSpeed, () -> {
        warming[0] = false;
        cpuStage.setSpeed(speed.at(0));
      });
    }
    for (double t : speed.changes()) {
      if (t > 0) {
        double v = speed.at(t);
        time.schedule(() -> {
          if (cpuStage != null) {
            cpuStage.setSpeed(v);
          }
          if (poolStage != null) {
            poolStage.setSpeed(v);
          }
        }, (long) (t * 1e9));
      }
    }
    return new Service() {
      @Override
      public Job job(Runnable done) {
        double a = cpuStage != null ? cpu.sample(random) : 0;
        double b = poolStage != null ? pool.sample(random) : 0;
        return new Job(a, b, done);
      }

      @Override
      public void start(Job job) {
        if (cpuStage == null) {
          poolStage.add(job.second, job.done);
        } else if (poolStage == null) {
          cpuStage.add(job.first, job.done);
        } else {
          cpuStage.add(job.first, () -> poolStage.add(job.second, job.done));
        }
      }

      @Override
      public void rejected() {
        if (cpuStage != null && rejectCpu > 0) {
          cpuStage.add(rejectCpu, null);
        }
      }

      @Override
      public int inService() {
        return (cpuStage == null ? 0 : cpuStage.size()) + (poolStage == null ? 0 : poolStage.size())
            - (warming[0] ? 1 : 0);
      }
    };
  }

  /**
   * Work in service all progresses at one rate, so one clock of work done per request ({@code v})
   * serves every job: a job started at {@code v0} with work {@code w} ends when {@code v} reaches
   * {@code v0 + w}. With {@code cores > 0} the rate is {@code speed * min(1, cores / n)}
   * (processor sharing); otherwise {@code speed}, for at most {@code slots} jobs, the rest waiting
   * in FIFO order.
   */
  static final class Stage {
    private static final double EPSILON = 1e-12;

    private final VirtualTime time;
    private final int cores;
    private final int slots;
    private final PriorityQueue<Entry> running = new PriorityQueue<>();
    private final ArrayDeque<Entry> waiting = new ArrayDeque<>();
    private double v;
    private long last;
    private double speed = 1;
    private long seq;
    private Timer.Timeout next;

    Stage(VirtualTime time, int cores, int slots) {
      this.time = time;
      this.cores = cores;
      this.slots = slots;
    }

    int size() {
      return running.size() + waiting.size();
    }

    void add(double work, Runnable done) {
      advance();
      Entry e = new Entry(work, done, seq++);
      if (running.size() < slots) {
        e.end = v + work;
        running.add(e);
      } else {
        waiting.add(e);
      }
      reschedule();
    }

    void setSpeed(double s) {
      advance();
      speed = s;
      reschedule();
    }

    private double rate() {
      int n = running.size();
      if (n == 0) {
        return 0;
      }
      return cores > 0 ? speed * Math.min(1, (double) cores / n) : speed;
    }

    private void advance() {
      long now = time.nanoTime();
      v += rate() * (now - last) / 1e9;
      last = now;
    }

    private void reschedule() {
      if (next != null) {
        next.cancel();
        next = null;
      }
      double r = rate();
      if (running.isEmpty() || r <= 0) {
        return;
      }
      double seconds = Math.max(0, running.peek().end - v) / r;
      next = time.schedule(this::fire, time.nanoTime() + Math.max(1, (long) Math.ceil(seconds * 1e9)));
    }

    private void fire() {
      next = null;
      advance();
      List<Runnable> done = new ArrayList<>(2);
      while (!running.isEmpty() && running.peek().end <= v + EPSILON) {
        Entry e = running.poll();
        if (e.done != null) {
          done.add(e.done);
        }
        Entry w = waiting.poll();
        if (w != null) {
          w.end = v + w.work;
          running.add(w);
        }
      }
      reschedule();
      for (Runnable d : done) {
        d.run();
      }
    }

    private static final class Entry implements Comparable<Entry> {
      final double work;
      final Runnable done;
      final long seq;
      double end;

      Entry(double work, Runnable done, long seq) {
        this.work = work;
        this.done = done;
        this.seq = seq;
      }

      @Override
      public int compareTo(Entry o) {
        int c = Double.compare(end, o.end);
        return c != 0 ? c : Long.compare(seq, o.seq);
      }
    }
  }
}
