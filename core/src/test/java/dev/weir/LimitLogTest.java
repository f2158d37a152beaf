package dev.weir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * At {@code FINE} the shedder logs each change of its limit with the limit controller's state, so
 * that a limit on a real service can be traced; at the default level it logs nothing of them.
 */
class LimitLogTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  /** Records every log record it is given. */
  private static final class Capture extends Handler {
    final List<LogRecord> records = new ArrayList<>();

    @Override
    public void publish(LogRecord r) {
      records.add(r);
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  }

  /**
   * Two seconds of virtual time on a service of 5 ms: four requests a millisecond, each answered 5
   * ms after its admission. Slow start raises the limit from 4 within the first 100 ms.
   */
  private static LoadShedder overloadForTwoSeconds(VirtualTime t) {
    LoadShedder s = LoadShedder.builder().name("orders").timer(t).build();
    AdmissionCallback answerIn5Ms = new AdmissionCallback() {
      @Override
      public void onAdmitted(Permit p) {
        t.schedule(p::success, t.nanoTime() + 5 * MS);
      }

      @Override
      public void onRejected(RejectReason reason) {}
    };
    for (int ms = 0; ms < 2_000; ms++) {
      for (int i = 0; i < 4; i++) {
        s.submit(Priority.of(1, i), answerIn5Ms);
      }
      t.advance(MS);
    }
    return s;
  }

  private static List<LogRecord> limitRecords(Level level) {
    Logger log = Logger.getLogger(LoadShedder.class.getName());
    Level old = log.getLevel();
    Capture capture = new Capture();
    log.setLevel(level);
    log.addHandler(capture);
    try {
      LoadShedder s = overloadForTwoSeconds(new VirtualTime());
      assertNotEquals(4, s.limit(), "the limit never moved from its initial 4");
      List<LogRecord> limitChanges = new ArrayList<>();
      for (LogRecord r : capture.records) {
        if (r.getMessage().startsWith("load shedder 'orders': limit ")) {
          limitChanges.add(r);
        }
      }
      return limitChanges;
    } finally {
      log.removeHandler(capture);
      log.setLevel(old);
    }
  }

  @Test
  void atFineEachChangeOfTheLimitIsLoggedWithTheControllersState() {
    List<LogRecord> records = limitRecords(Level.FINE);
    assertFalse(records.isEmpty(), "no record of the limit's changes");
    LogRecord first = records.get(0);
    assertEquals(Level.FINE, first.getLevel());
    assertTrue(first.getMessage().startsWith("load shedder 'orders': limit 4 -> "),
        first.getMessage());
    for (LogRecord r : records) {
      String m = r.getMessage();
      assertTrue(m.contains("VegasLimit{limit=") && m.contains("baseline=")
          && m.contains("rebases="), m);
      // A record says the limit changed: its two numbers differ.
      String[] change = m.substring(m.indexOf("limit ") + 6, m.indexOf(',')).split(" -> ");
      assertNotEquals(change[0], change[1], m);
    }
  }

  @Test
  void atTheDefaultLevelNothingOfTheLimitIsLogged() {
    assertEquals(0, limitRecords(Level.INFO).size());
  }
}
