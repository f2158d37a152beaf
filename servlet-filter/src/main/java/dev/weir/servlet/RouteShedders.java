package dev.weir.servlet;

import dev.weir.LoadShedder;
import dev.weir.Snapshot;
import jakarta.servlet.http.HttpServletRequest;
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

  private final Settings settings;
  private final ConcurrentHashMap<String, LoadShedder> byKey = new ConcurrentHashMap<>();
  // Counts keys, not shedders: a reservation is taken before computeIfAbsent creates one.
  private final AtomicInteger created = new AtomicInteger();
  private volatile LoadShedder overflow;
  private volatile boolean closed;

  RouteShedders(Settings settings) {
    this.settings = settings;
  }

  LoadShedder forRequest(HttpServletRequest request) {
    String key;
    try {
      key = settings.routeKey.apply(request);
    } catch (RuntimeException e) {
      LOG.log(Level.FINE, "route key function threw; using the overflow shedder", e);
      key = null;
    }
    if (key == null) {
      return overflow();
    }
    LoadShedder s = byKey.get(key);
    if (s != null) {
      return s;
    }
    if (created.get() >= settings.maxShedders) {
      return overflow();
    }
    s = byKey.computeIfAbsent(key, k -> {
      if (created.incrementAndGet() > settings.maxShedders) {
        created.decrementAndGet();
        return null;
      }
      return register(settings.newShedder(k));
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
          LOG.warning("more than " + settings.maxShedders
              + " route keys; further routes share one overflow shedder");
          o = register(settings.newShedder(OVERFLOW_KEY));
          if (closed) {
            o.close();
          }
          overflow = o;
        }
      }
    }
    return o;
  }

  private LoadShedder register(LoadShedder s) {
    if (settings.meterRegistry != null) {
      Metrics.bind(s, settings.meterRegistry);
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
