package dev.weir;

import dev.weir.internal.Check;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The most admitted requests a host can run at once, shared by the shedders in front of it: a
 * server's pool of threads where each admitted request holds one while it runs, whatever the
 * route. Each member's limit is capped ({@link LoadShedder#capConcurrency(ConcurrencyBudget)}) at
 * what the budget leaves it at each of its control ticks: the budget less the permits the other
 * members hold, and never less than an equal share of the budget. So one busy route alone may
 * take the whole budget, two busy routes end up sharing it, and no route's limit can stand above
 * what the host runs: the members' limits bind, and what waits waits in their queues, by
 * priority, not in the host's own queue.
 *
 * <p>A member's cap follows the others' with a tick's delay, and permits a member already holds
 * are never revoked: while the load shifts from one route to another, the members together may
 * hold more than the budget for the time the older requests take to finish.
 *
 * <p>Thread-safe. Joining and leaving take a lock and copy the members; reading a member's cap
 * reads every other member's permits, once a control tick.
 */
public final class ConcurrencyBudget {
  private final int threads;
  private final CopyOnWriteArrayList<ControlLoop> members = new CopyOnWriteArrayList<>();

  /**
   * A budget of {@code threads} admitted requests at once.
   *
   * @throws IllegalArgumentException naming {@code threads} if it is below 1
   */
  public ConcurrencyBudget(int threads) {
    this.threads = Check.atLeast("threads", threads, 1);
  }

  /** The admitted requests the host runs at once, across every member. */
  public int threads() { return threads; }

  /** The shedders sharing this budget now. */
  public int members() { return members.size(); }

  void join(ControlLoop member) {
    members.addIfAbsent(member);
  }

  void leave(ControlLoop member) {
    members.remove(member);
  }

  /**
   * What the budget leaves {@code member}: the budget less the permits every other member holds,
   * and at least the budget split evenly between the members (at least 1).
   */
  int capFor(ControlLoop member) {
    long others = 0;
    int n = 0;
    for (ControlLoop m : members) {
      n++;
      if (m != member) {
        others += m.inflight();
      }
    }
    int share = Math.max(1, threads / Math.max(1, n));
    return (int) Math.max(share, threads - others);
  }

  @Override
  public String toString() {
    return "ConcurrencyBudget{threads=" + threads + ", members=" + members.size() + "}";
  }
}
