package dev.weir.jmh;

import dev.weir.jetty.WeirHandler;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The Jetty 12 core handler's own cost, as {@link FilterPathOnJetty} measures the filter's: a real
 * server ({@link HeldRequests}, no network) takes one {@code GET /hello} per header set and holds
 * it open in its handler; each operation then runs a guard's {@code handle} on that live core
 * request and response, with a trivial application that sets 200 and completes its callback at
 * once, so the request is admitted and released in place. The guard is given a callback of its
 * own that does nothing, so the held request stays open, and the request is wrapped so that it
 * drops failure listeners ({@link OneListener}): the listener's own cost is left out, for every
 * guard alike. {@code none} calls the application directly. Jetty's {@code QoSHandler} is left
 * out: in this harness it took its suspend-and-resume path (about a million exceptions thrown in
 * a 3-s run), which a fresh request below its limit does not take. {@code -p evictKb=N} evicts the
 * caches before each operation, as in {@link FilterPathOnJetty} ("Cold caches").
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Threads(1)
public class HandlerPathOnJetty {
  /** The application: 200, completed at once. */
  static final Handler OK = new Handler.Abstract(Handler.Abstract.InvocationType.NON_BLOCKING) {
    @Override
    public boolean handle(Request request, Response response, Callback callback) {
      response.setStatus(200);
      callback.succeeded();
      return true;
    }
  };

  /** A live request and response, held open by the server's handler until tear-down. */
  public static final class Held {
    final Request request;
    final Response response;

    Held(Request request, Response response) {
      this.request = request;
      this.response = response;
    }
  }

  /**
   * The held request, which keeps no failure listener: a guard adds one per request, and on one
   * request handled millions of times Jetty would chain them all, so each operation would grow
   * the chain and the heap. A fresh request sets its first listener in a field.
   */
  static final class OneListener extends Request.Wrapper {
    OneListener(Request request) {
      super(request);
    }

    @Override
    public void addFailureListener(Consumer<Throwable> onFailure) {}
  }

  /** The server and the two requests it holds: one plain, one with a tier and cohort. */
  @State(Scope.Benchmark)
  public static class Live {
    private final HeldRequests<Held> held = new HeldRequests<>();
    Held plain;
    Held tiered;

    @Setup(Level.Trial)
    public void setup() throws Exception {
      held.start(new Handler.Abstract() {
        @Override
        public boolean handle(Request request, Response response, Callback callback)
            throws InterruptedException {
          held.handOver(new Held(new OneListener(request), response));
          callback.succeeded();
          return true;
        }
      });
      plain = held.hold(HeldRequests.PLAIN);
      tiered = held.hold(HeldRequests.TIERED);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
      held.stop();
    }
  }

  /** {@code new WeirHandler(application)}, zero configuration, started on its own. */
  @State(Scope.Benchmark)
  public static class WeirState {
    WeirHandler handler;

    @Setup
    public void setup(Live live) throws Exception {
      handler = new WeirHandler(OK);
      handler.setServer(live.held.server());
      handler.start();
    }

    @TearDown
    public void tearDown() throws Exception {
      handler.stop();
    }
  }

  @Benchmark
  public int none(FilterPathOnJetty.Evict e, Live live) throws Exception {
    e.evict();
    return handle(OK, live.plain);
  }

  @Benchmark
  public int weir(FilterPathOnJetty.Evict e, WeirState s, Live live) throws Exception {
    e.evict();
    return handle(s.handler, live.plain);
  }

  /** The same, for a request that carries its tier and cohort. */
  @Benchmark
  public int weirTierHeader(FilterPathOnJetty.Evict e, WeirState s, Live live) throws Exception {
    e.evict();
    return handle(s.handler, live.tiered);
  }

  private static int handle(Handler handler, Held held) throws Exception {
    handler.handle(held.request, held.response, Callback.NOOP);
    return held.response.getStatus();
  }
}
