package dev.weir.jmh;

import dev.weir.Priority;
import dev.weir.internal.BucketQueue;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The priority queue alone, grouped by tier as the shedder uses it: poll the next element (the
 * earliest of the most important tier), then reserve a place and offer it again at a random level
 * of the 768, so the queue holds {@code depth} elements throughout. Levels come from a
 * precomputed array; the nodes are reused.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Threads(1)
@State(Scope.Thread)
public class BucketQueueBenchmark {
  private static final int LEVELS_MASK = (1 << 16) - 1;

  /** Elements waiting: 1 polls and re-offers the same one; 1000 spreads them over the levels. */
  @Param({"1", "1000"})
  int depth;

  BucketQueue<Node> queue;
  final int[] levels = new int[LEVELS_MASK + 1];
  int next;
  long offers;

  @Setup
  public void setup() {
    SplittableRandom random = new SplittableRandom(42);
    for (int i = 0; i < levels.length; i++) {
      levels[i] = random.nextInt(Priority.LEVELS);
    }
    queue = new BucketQueue<>(Priority.LEVELS, Priority.COHORTS);
    for (int i = 0; i < depth; i++) {
      Node n = new Node();
      n.requeue(nextLevel(), offers++);
      queue.reserve(Integer.MAX_VALUE);
      queue.offer(n);
    }
  }

  @Benchmark
  public int pollOffer() {
    Node n = queue.poll();
    n.requeue(nextLevel(), offers++);
    queue.reserve(Integer.MAX_VALUE);
    queue.offer(n);
    return n.level;
  }

  private int nextLevel() {
    return levels[next++ & LEVELS_MASK];
  }

  /** The least a queue element needs: a level and a state that one CAS takes out of the queue. */
  static final class Node implements BucketQueue.Node {
    private static final VarHandle QUEUED;

    static {
      try {
        QUEUED = MethodHandles.lookup().findVarHandle(Node.class, "queued", int.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    int level;
    long offered;
    volatile int queued;

    /** Puts a node that is out of the queue back in the queued state, at {@code level}. */
    void requeue(int level, long offered) {
      this.level = level;
      this.offered = offered;
      this.queued = 1;
    }

    @Override
    public long offeredNanos() {
      return offered;
    }

    @Override
    public int level() {
      return level;
    }

    @Override
    public boolean isQueued() {
      return queued == 1;
    }

    @Override
    public boolean tryDequeue() {
      return QUEUED.compareAndSet(this, 1, 0);
    }
  }
}
