package dev.weir.http;

import dev.weir.LoadShedder;
import dev.weir.Priority;
import dev.weir.Snapshot;
import dev.weir.Timer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One shedder per route key, created on first use and bounded in number: a route key function
 * that leaks path parameters must not grow shedders (and their timer ticks) without bound, so past
 * the bound every new key shares one overflow shedder.
 *
 * <p>Slots age out while they are wanted: once half of them are taken, a route that saw no
 * request for the idle timeout, and holds and queues nothing, leaves the map, and its shedder is
 * closed one sweep later (a request that looked it up just before it left is still served by it).
 * While more than half are free, an idle route keeps its shedder and what its limit learned: a
 * fresh shedder starts low and sheds while it learns, which a quiet route's next burst would pay.
 * The overflow shedder is built with the adapter, so that a template that cannot build fails the
 * adapter's start; a route whose shedder cannot be built at request time (a limit or rejector
 * factory that throws or returns null on a later call) is served by the overflow shedder until
 * its slot ages out, whatever the slots taken, and the failure is logged.
 *
 * <p>The mechanism behind the servlet filter's and the Jetty handler's per-route shedders, for
 * adapters. Thread-safe: {@link #forRequest} is lock-free once a route's shedder exists; creation
 * takes {@code ConcurrentHashMap}'s per-key lock, and the sweep runs on the shared timer.
 *
 * @param <R> the adapter's request type
 */
public final class RouteShedders<R> {
  /** The overflow shedder's name, and its key in {@link #view()}. */
  public static final String OVERFLOW_KEY = "<overflow>";
  private static final Logger LOG = Logger.getLogger(RouteShedders.class.getName());

  /** Validated: every copy builds (see {@link LoadShedder.Builder#validate()}). */
  private final LoadShedder.Builder template;
  private final Function<? super R, String> routeKey;
  private final int maxShedders;
  private final long idleNanos;
  private final Consumer<LoadShedder> onCreate;
  private final Consumer<String> onRetire;
  private final ConcurrentHashMap<String, Route> byKey = new ConcurrentHashMap<>();
  // Counts keys, not shedders: a reservation is taken before computeIfAbsent creates one.
  private final AtomicInteger created = new AtomicInteger();
  private final LoadShedder overflow;
  private volatile boolean overflowUsed;
  private volatile boolean closed;
  private final Timer timer = Timer.system();
  private final List<LoadShedder> retiring = new ArrayList<>(); // guarded by this
  private Timer.Timeout sweep; // guarded by this

  /**
   * Builds the overflow shedder at once, and starts the sweep.
   *
   * @param template validated (see {@link LoadShedder.Builder#validate()}); copied per route
   * @param routeKey a request's route key; null, blank, {@link #OVERFLOW_KEY} or a throw means
   *     the overflow shedder
   * @param maxShedders route shedders at most, besides the overflow shedder
   * @param idleNanos how long a route sees no request before its slot ages out, once half the
   *     slots are taken
   * @param onCreate called with each shedder built (meters, say); may be null. What it throws is
   *     logged: the shedder serves without whatever it failed to set up
   * @param onRetire called with the name of each route shedder retired, and of every shedder at
   *     {@link #close()}, under the route key's lock: a request that creates the route anew
   *     waits for it. May be null; what it throws is logged
   * @throws RuntimeException if the template cannot build the overflow shedder
   */
  public RouteShedders(LoadShedder.Builder template, Function<? super R, String> routeKey,
      int maxShedders, long idleNanos, Consumer<LoadShedder> onCreate, Consumer<String> onRetire) {
    this.template = template;
    this.routeKey = routeKey;
    this.maxShedders = maxShedders;
    this.idleNanos = idleNanos;
    this.onCreate = onCreate;
    this.onRetire = onRetire;
    this.overflow = newShedder(OVERFLOW_KEY); // throws here, at start, if it cannot
    try {
      register(overflow);
    } catch (RuntimeException e) {
      // As for a route: a registry that refuses meters must not stop the traffic.
      LOG.log(Level.WARNING, "could not publish the meters of the overflow shedder", e);
    }
    scheduleSweep();
  }

  /** A route's shedder, or the overflow shedder standing in for one that could not be built. */
  private static final class Route {
    final LoadShedder shedder;
    final boolean fallback;
    long activity = -1; // only the sweep reads and writes these
    long quietSince;

    Route(LoadShedder shedder, boolean fallback) {
      this.shedder = shedder;
      this.fallback = fallback;
    }
  }

  /** The shedder of {@code request}'s route: never null, possibly closed (the adapter stopped). */
  public LoadShedder forRequest(R request) {
    String key;
    try {
      key = routeKey.apply(request);
    } catch (RuntimeException e) {
      LOG.log(Level.FINE, "route key function threw; using the overflow shedder", e);
      key = null;
    }
    if (key == null) {
      return overflow();
    }
    Route r = byKey.get(key);
    if (r != null) {
      return r.shedder; // only a key that is not blank gets a slot: no need to look again
    }
    if (key.isBlank() || key.equals(OVERFLOW_KEY)) {
      // A blank key could not name a shedder; the overflow shedder's name names it, not a second
      // shedder of that name, whose meters and status entry would be taken for its.
      return overflow();
    }
    if (created.get() >= maxShedders) {
      return overflow();
    }
    r = byKey.computeIfAbsent(key, this::newRoute);
    if (r == null) {
      return overflow();
    }
    if (closed && !r.shedder.isClosed()) {
      r.shedder.close(); // created while close() ran: answer like the others
      if (!r.fallback) {
        retired(key);
      }
    }
    return r.shedder;
  }

  private Route newRoute(String key) {
    if (created.incrementAndGet() > maxShedders) {
      created.decrementAndGet();
      return null;
    }
    LoadShedder s;
    try {
      s = newShedder(key);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "could not build the shedder of route '" + key
          + "'; the overflow shedder serves it until its slot ages out", e);
      overflowUsed = true;
      return new Route(overflow, true);
    }
    try {
      register(s);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "could not publish the meters of route '" + key + "'", e);
    }
    return new Route(s, false);
  }

  private LoadShedder overflow() {
    if (!overflowUsed) {
      overflowUsed = true;
      LOG.warning("requests without a route key, or past " + maxShedders
          + " route keys, share one overflow shedder");
    }
    return overflow;
  }

  /** A new shedder named {@code name}, with a fresh limit and rejector from the template. */
  private LoadShedder newShedder(String name) {
    LoadShedder s = template.copy().name(name).build();
    if (s == null) {
      throw new IllegalStateException("the shedder template built null");
    }
    return s;
  }

  private LoadShedder register(LoadShedder s) {
    if (onCreate != null) {
      onCreate.accept(s);
    }
    return s;
  }

  // -------------------------------------------------------------------------------- ageing

  private synchronized void scheduleSweep() {
    if (!closed) {
      long every = Math.max(TimeUnit.MILLISECONDS.toNanos(50), idleNanos / 2);
      sweep = timer.schedule(this::sweepSafely, timer.clock().nanoTime() + every);
    }
  }

  private void sweepSafely() {
    try {
      sweep(timer.clock().nanoTime());
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "route sweep failed; the next one still runs", e);
    } finally {
      scheduleSweep();
    }
  }

  /**
   * On the timer: closes what retired last time, then retires routes idle for long enough.
   * Package-private for tests, which call it with chosen times.
   */
  void sweep(long now) {
    synchronized (this) {
      retiring.removeIf(s -> {
        if (s.inflight() == 0 && s.queued() == 0) {
          s.close();
          return true;
        }
        return false;
      });
    }
    // Retiring frees slots for new keys; while more than half are free it would only throw away
    // what an idle route's limit learned. A route that could not build its shedder always goes, so
    // that a later request tries again.
    boolean wanted = 2L * created.get() >= maxShedders;
    byKey.forEach((key, r) -> {
      long activity = r.fallback ? 0 : activity(r.shedder);
      if (activity != r.activity) {
        r.activity = activity;
        r.quietSince = now;
        return;
      }
      boolean idle = now - r.quietSince >= idleNanos;
      if (!idle || (!r.fallback
          && (!wanted || r.shedder.inflight() != 0 || r.shedder.queued() != 0))) {
        return;
      }
      boolean[] removed = new boolean[1];
      // Under the key's lock, so that a request creating the route anew waits until the retired
      // shedder's meters are gone, and then publishes its own.
      byKey.computeIfPresent(key, (k, current) -> {
        if (current != r) {
          return current;
        }
        removed[0] = true;
        if (!r.fallback) {
          retired(k);
        }
        return null;
      });
      if (removed[0]) {
        created.decrementAndGet();
        if (!r.fallback) {
          synchronized (this) {
            if (closed) {
              r.shedder.close(); // close() has already closed what it could see
            } else {
              retiring.add(r.shedder);
            }
          }
        }
      }
    });
  }

  /** Tells {@code onRetire}; what it throws is logged, and costs no shedder its closing. */
  private void retired(String name) {
    if (onRetire == null) {
      return;
    }
    try {
      onRetire.accept(name);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "the retirement of route shedder '" + name + "' failed", e);
    }
  }

  /** Grows with every request the shedder sees; unchanged between sweeps means idle. */
  private static long activity(LoadShedder s) {
    long sum = 0;
    for (Snapshot.Counter c : Snapshot.Counter.values()) {
      for (int t = 0; t < Priority.TIERS; t++) {
        sum += s.count(c, t);
      }
    }
    return sum;
  }

  // ------------------------------------------------------------------------------- views

  /** The route shedders by key, and the overflow shedder once used: an unmodifiable copy. */
  public Map<String, LoadShedder> view() {
    Map<String, LoadShedder> all = new LinkedHashMap<>();
    byKey.forEach((k, r) -> {
      if (!r.fallback) {
        all.put(k, r.shedder);
      }
    });
    if (overflowUsed) {
      all.put(OVERFLOW_KEY, overflow);
    }
    return Collections.unmodifiableMap(all);
  }

  /** A snapshot of each shedder in {@link #view()}. */
  public Map<String, Snapshot> snapshots() {
    Map<String, Snapshot> out = new LinkedHashMap<>();
    view().forEach((k, s) -> out.put(k, s.snapshot()));
    return Collections.unmodifiableMap(out);
  }

  /**
   * Stops the sweep and closes every shedder; requests looked up later get a closed one. Every
   * shedder is retired too ({@code onRetire}), so that its meters go with it.
   */
  public void close() {
    closed = true;
    synchronized (this) {
      if (sweep != null) {
        sweep.cancel();
      }
      retiring.forEach(LoadShedder::close);
      retiring.clear();
    }
    byKey.forEach((key, r) -> {
      r.shedder.close();
      if (!r.fallback) {
        retired(key);
      }
    });
    overflow.close();
    retired(OVERFLOW_KEY);
  }
}
