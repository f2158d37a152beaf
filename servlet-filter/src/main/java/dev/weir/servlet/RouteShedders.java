package dev.weir.servlet;

import dev.weir.LoadShedder;
import dev.weir.Snapshot;
import jakarta.servlet.http.HttpServletRequest;
import java.util.function.Function;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One shedder per route key, created on first use and bounded in number: a route key function
 * that leaks path parameters must not grow shedders (and their timer ticks) without bound, so past
 * the bound every new key shares one overflow shedder.
 */
final class RouteShedders {
  static final String OVERFLOW_KEY = WeirFilter.OVERFLOW_ROUTE;
  private static final Logger LOG = Logger.getLogger(RouteShedders.class.getName());

  /** Validated: every copy builds (see {@link LoadShedder.Builder#validate()}). */
  private final LoadShedder.Builder template;
  private final Function<? super HttpServletRequest, String> routeKey;
  private final int maxShedders;
  /** A MeterRegistry, typed Object so that Micrometer stays optional; or null. */
  private final Object meterRegistry;
  private final ConcurrentHashMap<String, LoadShedder> byKey = new ConcurrentHashMap<>();
  // Counts keys, not shedders: a reservation is taken before computeIfAbsent creates one.
  private final AtomicInteger created = new AtomicInteger();
  private volatile LoadShedder overflow;
  private volatile boolean closed;

  RouteShedders(LoadShedder.Builder template, Function<? super HttpServletRequest, String> routeKey,
      int maxShedders, Object meterRegistry) {
    this.template = template;
    this.routeKey = routeKey;
    this.maxShedders = maxShedders;
    this.meterRegistry = meterRegistry;
  }

  LoadShedder forRequest(HttpServletRequest request) {
    String key;
    try {
      key = routeKey.apply(request);
    } catch (RuntimeException e) {
      LOG.log(Level.FINE, "route key function threw; using the overflow shedder", e);
      key = null;
    }
    if (key == null || key.isBlank()) {
      return overflow(); // a blank key could not name a shedder
    }
    LoadShedder s = byKey.get(key);
    if (s != null) {
      return s;
    }
    if (created.get() >= maxShedders) {
      return overflow();
    }
    s = byKey.computeIfAbsent(key, k -> {
      if (created.incrementAndGet() > maxShedders) {
        created.decrementAndGet();
        return null;
      }
      return register(newShedder(k));
    });
    if (s == null) {
      return overflow();
    }
    if (closed) {
      s.close(); // created while destroy() ran: answer like the others
    }
    return s;
  }

  private LoadShedder overflow() {
    LoadShedder o = overflow;
    if (o == null) {
      synchronized (this) {
        o = overflow;
        if (o == null) {
          LOG.warning("requests without a route key, or past " + maxShedders
              + " route keys, share one overflow shedder");
          o = register(newShedder(OVERFLOW_KEY));
          if (closed) {
            o.close();
          }
          overflow = o;
        }
      }
    }
    return o;
  }

  /** A new shedder named {@code name}, with a fresh limit and rejector from the template. */
  LoadShedder newShedder(String name) {
    return template.copy().name(name).build();
  }

  private LoadShedder register(LoadShedder s) {
    if (meterRegistry != null) {
      Metrics.bind(s, meterRegistry);
    }
    return s;
  }

  Map<String, LoadShedder> view() {
    LoadShedder o = overflow;
    if (o == null) {
      return Collections.unmodifiableMap(byKey);
    }
    Map<String, LoadShedder> all = new LinkedHashMap<>(byKey);
    all.put(OVERFLOW_KEY, o);
    return Collections.unmodifiableMap(all);
  }

  Map<String, Snapshot> snapshots() {
    Map<String, Snapshot> out = new LinkedHashMap<>();
    view().forEach((k, s) -> out.put(k, s.snapshot()));
    return Collections.unmodifiableMap(out);
  }

  void close() {
    closed = true;
    byKey.values().forEach(LoadShedder::close);
    LoadShedder o = overflow;
    if (o != null) {
      o.close();
    }
  }
}
