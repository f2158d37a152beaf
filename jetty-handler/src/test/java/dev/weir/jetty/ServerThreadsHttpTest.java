package dev.weir.jetty;

import static dev.weir.jetty.Support.app;
import static dev.weir.jetty.Support.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weir.LoadShedder;
import dev.weir.http.ServerThreads;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.Test;

/**
 * An application that completes its callback before its {@code handle} returns holds the server's
 * thread while it runs: its route's limit is capped at what the server's threads can run, leaving
 * a sixteenth of the pool (at least 2) to the server. One that completes later, on another thread,
 * holds none, and its route stays uncapped, as does, from then on, a route that does both. Routes
 * share the one budget of the server's threads.
 */
class ServerThreadsHttpTest {

  @Test
  void aBlockingApplicationIsCappedAtWhatTheServersThreadsRun() throws Exception {
    WeirHandler weir = new WeirHandler(app((req, res, cb) -> {
      res.setStatus(200);
      cb.succeeded();
      return true;
    }));
    try (TestServer s = TestServer.start(weir, 40)) {
      assertEquals(200, status(s));
      int expected = ServerThreads.admittable(s.threads.getMaxAvailableThreads());
      assertTrue(expected <= s.threads.getMaxAvailableThreads() - 2, "cap " + expected);
      LoadShedder route = weir.shedders().get(WeirHandler.SINGLE_ROUTE);
      // The completed callback may answer the client before handle returns, where the cap is set.
      Support.await(() -> route.concurrencyCap() == expected, Support.WAIT,
          () -> "cap " + route.concurrencyCap() + ", expected " + expected);
    }
  }

  @Test
  void anApplicationThatCompletesAfterHandleReturnedIsNotCapped() throws Exception {
    // The application completes only once handle has returned through the handler under test:
    // the outer wrapper opens the latch.
    CountDownLatch handleReturned = new CountDownLatch(1);
    WeirHandler weir = new WeirHandler(app((req, res, cb) -> {
      req.getContext().execute(() -> {
        try {
          if (handleReturned.await(10, TimeUnit.SECONDS)) {
            res.setStatus(200);
            cb.succeeded();
          } else {
            cb.failed(new AssertionError("handle did not return"));
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          cb.failed(e);
        }
      });
      return true;
    }));
    Handler outer = afterHandle(weir, handleReturned::countDown);
    try (TestServer s = TestServer.start(outer, 40)) {
      assertEquals(200, status(s));
      LoadShedder route = weir.shedders().get(WeirHandler.SINGLE_ROUTE);
      assertEquals(Integer.MAX_VALUE, route.concurrencyCap());
    }
  }

  @Test
  void blockingRoutesShareOneBudgetOfTheServersThreads() throws Exception {
    WeirHandler weir = WeirHandler.builder()
        .routeKey(r -> r.getHttpURI().getPath())
        .handler(app((req, res, cb) -> {
          res.setStatus(200);
          cb.succeeded();
          return true;
        }))
        .build();
    try (TestServer s = TestServer.start(weir, 40)) {
      assertEquals(200, status(s, "/a"));
      assertEquals(200, status(s, "/b"));
      LoadShedder a = weir.shedders().get("GET /a");
      LoadShedder b = weir.shedders().get("GET /b");
      int expected = ServerThreads.admittable(s.threads.getMaxAvailableThreads());
      Support.await(() -> a.concurrencyBudget() != null
              && a.concurrencyBudget() == b.concurrencyBudget(), Support.WAIT,
          () -> "budgets " + a.concurrencyBudget() + ", " + b.concurrencyBudget());
      assertEquals(expected, a.concurrencyBudget().threads());
      assertEquals(2, a.concurrencyBudget().members());
    }
  }

  @Test
  void aRouteThatAlsoCompletesLaterIsNotCapped() throws Exception {
    AtomicInteger returned = new AtomicInteger();
    WeirHandler weir = new WeirHandler(app((req, res, cb) -> {
      if (req.getHttpURI().getPath().equals("/now")) {
        res.setStatus(400);
        cb.succeeded();
        return true;
      }
      int before = returned.get();
      req.getContext().execute(() -> {
        // Completes only once handle has returned through the handler under test.
        Support.await(() -> returned.get() > before, Support.WAIT, () -> "handle did not return");
        res.setStatus(200);
        cb.succeeded();
      });
      return true;
    }));
    Handler outer = afterHandle(weir, returned::incrementAndGet);
    try (TestServer s = TestServer.start(outer, 40)) {
      assertEquals(400, status(s, "/now"));
      LoadShedder route = weir.shedders().get(WeirHandler.SINGLE_ROUTE);
      Support.await(() -> returned.get() == 1, Support.WAIT, () -> "handled " + returned);
      assertNotNull(route.concurrencyBudget(), "completed before handle returned: capped");
      assertEquals(200, status(s, "/later"));
      Support.await(() -> returned.get() == 2, Support.WAIT, () -> "handled " + returned);
      assertNull(route.concurrencyBudget(), "completed later: uncapped");
      assertEquals(400, status(s, "/now"));
      Support.await(() -> returned.get() == 3, Support.WAIT, () -> "handled " + returned);
      assertNull(route.concurrencyBudget(), "and not capped again");
    }
  }

  /** {@code inner}, with {@code then} run each time its {@code handle} has returned. */
  private static Handler afterHandle(Handler inner, Runnable then) {
    return new Handler.Wrapper(inner) {
      @Override
      public boolean handle(Request request, Response response, Callback callback)
          throws Exception {
        boolean handled = super.handle(request, response, callback);
        then.run();
        return handled;
      }
    };
  }

  private static int status(TestServer s) throws Exception {
    return status(s, "/x");
  }

  private static int status(TestServer s, String path) throws Exception {
    HttpClient client = Support.Protocol.HTTP1.client();
    try {
      return get(client, s.uri(path)).getStatus();
    } finally {
      client.stop();
    }
  }
}
