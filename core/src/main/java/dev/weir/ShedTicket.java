package dev.weir;

/**
 * The ticket of a request shed at the door: already answered, so there is nothing to withdraw.
 * One shared, immutable instance per priority level, so that shedding under overload, the most
 * frequent path then, allocates nothing.
 */
final class ShedTicket implements Ticket {
  private static final ShedTicket[] BY_LEVEL = new ShedTicket[Priority.LEVELS];

  static {
    for (int level = 0; level < Priority.LEVELS; level++) {
      BY_LEVEL[level] = new ShedTicket(level);
    }
  }

  private final int priority;

  private ShedTicket(int priority) {
    this.priority = priority;
  }

  /** The ticket for a valid packed priority. */
  static Ticket of(int priority) {
    return BY_LEVEL[priority];
  }

  /** Always false: the request was rejected before this ticket was returned. */
  @Override
  public boolean cancel() {
    return false;
  }

  @Override
  public int priority() {
    return priority;
  }

  @Override
  public String toString() {
    return "Ticket{" + Priority.toString(priority) + ", shed}";
  }
}
