package dev.weir.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

class BucketQueueTest {
  private static final int LEVELS = 768;

  /** A queue element that remembers who took it. */
  static final class Item implements BucketQueue.Node {
    static final int QUEUED = 0;
    static final int TAKEN = 1;

    final int level;
    final long seq;
    final AtomicInteger state = new AtomicInteger(QUEUED);
    /** Incremented by whoever takes the item; the test fails if it ever exceeds one. */
    final AtomicInteger takes = new AtomicInteger();

    Item(int level, long seq) {
      this.level = level;
      this.seq = seq;
    }

    @Override
    public int level() {
      return level;
    }

    @Override
    public boolean isQueued() {
      return state.get() == QUEUED;
    }

    @Override
    public boolean tryDequeue() {
      return state.compareAndSet(QUEUED, TAKEN);
    }

    @Override
    public long offeredNanos() {
      return seq;
    }

    @Override
    public String toString() {
      return level + "#" + seq;
    }
  }

  // ------------------------------------------------------------------------------ single thread

  @Test
  void groupsServeGroupsInOrderAndEarliestFirstWithinAGroup() {
    BucketQueue<Item> q = new BucketQueue<>(LEVELS, 128);
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    List<Item> items = new ArrayList<>();
    for (int i = 0; i < 5_000; i++) {
      // Any level of the six groups, so levels inside one group interleave in time.
      Item it = new Item(rnd.nextInt(LEVELS), i);
      items.add(it);
      assertTrue(q.reserve(Integer.MAX_VALUE));
      q.offer(it);
    }
    items.sort(Comparator.comparingInt((Item it) -> it.level / 128).thenComparingLong(it -> it.seq));
    for (Item expected : items) {
      assertSame(expected, q.poll());
    }
    assertNull(q.poll());
    assertEquals(0, q.size());
  }

  @Test
  void groupsStillEvictTheLeastImportantLevelAndSkipTakenHeads() {
    BucketQueue<Item> q = new BucketQueue<>(LEVELS, 128);
    Item oldLow = new Item(127, 1);
    Item important = new Item(0, 2);
    Item newLow = new Item(127, 3);
    Item middle = new Item(64, 4);
    for (Item it : List.of(oldLow, important, newLow, middle)) {
      assertTrue(q.reserve(10));
      q.offer(it);
    }
    // Eviction follows levels, not arrival: the oldest item of the least important level goes.
    assertSame(oldLow, q.evictLessImportantThan(100));
    q.unreserve();
    // A head taken by someone else (a timeout) is skipped, not served.
    assertTrue(important.tryDequeue());
    q.removed(important.level);
    assertSame(newLow, q.poll());
    assertSame(middle, q.poll());
    assertNull(q.poll());
  }

  @Test
  void groupSizeMustCoverWholeBitmapWords() {
    for (int bad : new int[] {0, 2, 32, 96}) {
      IllegalArgumentException e = assertThrows(
          IllegalArgumentException.class, () -> new BucketQueue<Item>(LEVELS, bad));
      assertTrue(e.getMessage().contains("groupSize"), e.getMessage());
    }
  }

  @Test
  void pollsMostImportantLevelFirstAndFifoWithinALevel() {
    BucketQueue<Item> q = new BucketQueue<>(LEVELS);
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    List<Item> items = new ArrayList<>();
    for (int i = 0; i < 5_000; i++) {
      // Few distinct levels, so each holds many items whose FIFO order is checked, spread over
      // all twelve bitmap words.
      Item it = new Item(rnd.nextInt(12) * 64 + rnd.nextInt(3) * 31, i);
      items.add(it);
      assertTrue(q.reserve(Integer.MAX_VALUE));
      q.offer(it);
    }
    assertEquals(items.size(), q.size());
    items.sort(Comparator.comparingInt((Item it) -> it.level).thenComparingLong(it -> it.seq));
    for (Item expected : items) {
      assertSame(expected, q.poll());
    }
    assertNull(q.poll());
    assertEquals(0, q.size());
  }

  @Test
  void theExtremeLevelsWork() {
    BucketQueue<Item> q = new BucketQueue<>(LEVELS);
    Item last = new Item(LEVELS - 1, 0);
    Item first = new Item(0, 1);
    Item word = new Item(64, 2);
    Item wordEnd = new Item(63, 3);
    for (Item it : new Item[] {last, first, word, wordEnd}) {
      q.reserve(10);
      q.offer(it);
    }
    assertSame(first, q.poll());
    assertSame(wordEnd, q.poll());
    assertSame(word, q.poll());
    assertSame(last, q.poll());
    assertNull(q.poll());
  }

  @Test
  void reserveRespectsTheCapacityAndUnreserveGivesBack() {
    BucketQueue<Item> q = new BucketQueue<>(LEVELS);
    assertTrue(q.reserve(2));
    assertTrue(q.reserve(2));
    assertFalse(q.reserve(2));
    assertEquals(2, q.size());
    q.unreserve();
    assertTrue(q.reserve(2));
    q.unreserve();
    q.unreserve();
    assertEquals(0, q.size());
    assertNull(q.poll(), "reservations are not elements");
  }

  @Test
  void anElementTakenByItsOwnerIsSkippedAndUncounted() {
    BucketQueue<Item> q = new BucketQueue<>(LEVELS);
    Item a = new Item(5, 0);
    Item b = new Item(5, 1);
    Item c = new Item(7, 2);
    for (Item it : new Item[] {a, b, c}) {
      q.reserve(10);
      q.offer(it);
    }
    // A timeout claims b, then reports it.
    assertTrue(b.tryDequeue());
    q.removed(b.level);
    assertEquals(2, q.size());
    // Then a cancel claims a, the head: removed() unlinks both dead elements.
    assertTrue(a.tryDequeue());
    q.removed(a.level);
    assertEquals(1, q.size());
    assertSame(c, q.poll());
    assertNull(q.poll());
    assertEquals(0, q.size());
  }

  @Test
  void evictsTheOldestOfTheLeastImportantLevelOnlyForMoreImportantWork() {
    BucketQueue<Item> q = new BucketQueue<>(LEVELS);
    Item high = new Item(10, 0);
    Item midOld = new Item(500, 1);
    Item midNew = new Item(500, 2);
    Item lowest = new Item(767, 3);
    for (Item it : new Item[] {high, midOld, midNew, lowest}) {
      assertTrue(q.reserve(4));
      q.offer(it);
    }
    assertFalse(q.reserve(4));
    assertNull(q.evictLessImportantThan(767), "an equal level is not evicted");
    assertSame(lowest, q.evictLessImportantThan(766));
    assertFalse(lowest.isQueued(), "the victim was claimed");
    assertEquals(4, q.size(), "the victim's place stays reserved for the caller");
    q.offer(new Item(0, 4));
    assertSame(midOld, q.evictLessImportantThan(0));
    q.offer(new Item(0, 5));
    assertNull(q.evictLessImportantThan(500));
    assertSame(midNew, q.evictLessImportantThan(499));
    q.offer(new Item(1, 6));
    assertNull(q.evictLessImportantThan(10), "only level 10 and more important remain");
    assertEquals(4, q.size());
    int[] levels = new int[4];
    for (int i = 0; i < 4; i++) {
      levels[i] = q.poll().level;
    }
    assertEquals("[0, 0, 1, 10]", java.util.Arrays.toString(levels));
    assertEquals(0, q.size());
  }

  @Test
  void evictionSkipsElementsAlreadyTakenByTheirOwners() {
    BucketQueue<Item> q = new BucketQueue<>(LEVELS);
    Item dead = new Item(700, 0);
    Item live = new Item(600, 1);
    q.reserve(2);
    q.offer(dead);
    q.reserve(2);
    q.offer(live);
    assertTrue(dead.tryDequeue()); // timed out; not yet reported
    assertSame(live, q.evictLessImportantThan(0));
    q.removed(dead.level);
    q.unreserve();
    assertEquals(0, q.size());
    assertNull(q.poll());
  }

  @Test
  void takeEmptiedRemembersAPastEmptiness() {
    BucketQueue<Item> q = new BucketQueue<>(LEVELS);
    assertTrue(q.takeEmptied(), "a new queue is empty");
    q.reserve(10);
    q.offer(new Item(3, 0));
    assertFalse(q.takeEmptied());
    q.poll();
    q.reserve(10);
    q.offer(new Item(3, 1));
    assertTrue(q.takeEmptied(), "it was empty between the poll and the offer");
    assertFalse(q.takeEmptied());
  }

  // ------------------------------------------------------------------------------- concurrency

  /**
   * Threads offer, poll, evict and claim-and-remove (as timeouts and cancels do) across all 768
   * levels at once. At the end every offered element was taken exactly once, nothing is left and
   * the size never exceeded the capacity.
   */
  @Test
  @SuppressWarnings("unchecked")
  void concurrentOffersPollsEvictionsAndRemovalsTakeEveryElementExactlyOnce() throws Exception {
    int threads = 4;
    int opsPerThread = 150_000;
    int capacity = 512;
    BucketQueue<Item> q = new BucketQueue<>(LEVELS);
    // Recently offered elements, for "timers" to claim out of the middle of buckets.
    AtomicReferenceArray<Item> recent = new AtomicReferenceArray<>(1024);
    List<Item>[] offeredBy = new List[threads];
    LongAdder taken = new LongAdder();
    AtomicReference<String> violation = new AtomicReference<>();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    AtomicInteger seq = new AtomicInteger();
    for (int t = 0; t < threads; t++) {
      List<Item> offered = offeredBy[t] = new ArrayList<>();
      Thread th = new Thread(() -> {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        try {
          start.await();
        } catch (InterruptedException e) {
          return;
        }
        for (int i = 0; i < opsPerThread; i++) {
          int op = rnd.nextInt(10);
          if (op < 5) {
            Item it = new Item(rnd.nextInt(LEVELS), seq.getAndIncrement());
            if (q.reserve(capacity)) {
              q.offer(it);
              offered.add(it);
            } else {
              Item victim = q.evictLessImportantThan(it.level);
              if (victim == null) {
                continue; // rejected: never in the queue
              }
              take(victim, taken, violation);
              q.offer(it);
              offered.add(it);
            }
            recent.set(rnd.nextInt(recent.length()), it);
          } else if (op < 8) {
            Item it = q.poll();
            if (it != null) {
              take(it, taken, violation);
            }
          } else {
            Item it = recent.get(rnd.nextInt(recent.length()));
            if (it != null && it.tryDequeue()) {
              take(it, taken, violation);
              q.removed(it.level);
            }
          }
          int size = q.size();
          if (size > capacity || size < 0) {
            violation.compareAndSet(null, "size " + size);
          }
        }
      });
      workers.add(th);
      th.start();
    }
    start.countDown();
    for (Thread th : workers) {
      th.join(TimeUnit.SECONDS.toMillis(60));
      assertFalse(th.isAlive(), "a worker is stuck");
    }
    assertNull(violation.get());
    // Drain what is left: if a bitmap bit had been lost, poll() would stop early.
    int left = q.size();
    int drained = 0;
    Item it;
    while ((it = q.poll()) != null) {
      take(it, taken, violation);
      drained++;
    }
    assertNull(violation.get());
    assertEquals(left, drained, "size() counted exactly the live elements");
    assertEquals(0, q.size());
    long offeredCount = 0;
    for (List<Item> offered : offeredBy) {
      for (Item x : offered) {
        if (x.takes.get() != 1) {
          fail(x + " taken " + x.takes.get() + " times");
        }
      }
      offeredCount += offered.size();
    }
    assertEquals(offeredCount, taken.sum());
    assertTrue(offeredCount > 100_000, "offered " + offeredCount);
  }

  /** Poll order holds under concurrency for what one producer offered before any poll began. */
  @Test
  void concurrentPollersTakeAPrefilledQueueInPriorityOrderPerPoller() throws Exception {
    BucketQueue<Item> q = new BucketQueue<>(LEVELS);
    int n = 100_000;
    for (int i = 0; i < n; i++) {
      q.reserve(Integer.MAX_VALUE);
      q.offer(new Item(ThreadLocalRandom.current().nextInt(LEVELS), i));
    }
    int threads = 4;
    AtomicReference<String> violation = new AtomicReference<>();
    LongAdder taken = new LongAdder();
    List<Thread> pollers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread th = new Thread(() -> {
        Item prev = null;
        Item it;
        while ((it = q.poll()) != null) {
          // Nothing is offered meanwhile, so each poller sees non-decreasing (level, seq).
          if (prev != null && (it.level < prev.level
              || (it.level == prev.level && it.seq < prev.seq))) {
            violation.compareAndSet(null, prev + " before " + it);
          }
          take(it, taken, violation);
          prev = it;
        }
      });
      pollers.add(th);
      th.start();
    }
    for (Thread th : pollers) {
      th.join(TimeUnit.SECONDS.toMillis(60));
      assertFalse(th.isAlive());
    }
    assertNull(violation.get());
    assertEquals(n, taken.sum());
    assertEquals(0, q.size());
  }

  private static void take(Item it, LongAdder taken, AtomicReference<String> violation) {
    if (it.takes.incrementAndGet() != 1) {
      violation.compareAndSet(null, it + " taken twice");
    }
    if (it.isQueued()) {
      violation.compareAndSet(null, it + " handed out while still queued");
    }
    taken.increment();
  }
}
