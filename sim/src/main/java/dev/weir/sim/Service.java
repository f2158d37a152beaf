package dev.weir.sim;

/**
 * The simulated service, as the {@link Simulation} drives it: each arriving request gets a
 * {@link Job} (its work, drawn at arrival), admitted jobs are started, and rejections may cost the
 * service something (a CPU-bound server spends CPU writing a 429).
 *
 * <p>A job's {@code done} runs when the service has finished it, after the service has handed any
 * freed capacity to work already waiting inside it.
 */
interface Service {
  /** The job of the request arriving now; called once per arrival, in arrival order. */
  Job job(Runnable done);

  /** Starts (or queues inside the service) an admitted job. */
  void start(Job job);

  /** A request was rejected: charges whatever a rejection costs the service. */
  void rejected();

  /**
   * Requests inside the service: running or waiting in it; on a CPU stage, also the rejections
   * still being written.
   */
  int inService();

  /** A request's work: up to two stages, in seconds at full speed, and what runs when it ends. */
  final class Job {
    final double first;
    final double second;
    final Runnable done;

    Job(double first, double second, Runnable done) {
      this.first = first;
      this.second = second;
      this.done = done;
    }
  }
}
