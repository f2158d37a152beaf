package dev.weir.examples.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The probe's reading of its per-second counts: the best five-second mean. */
class CapacityProbeTest {
  @Test
  void aColdStartAndADipDoNotCountTheWarmPlateauDoes() {
    // A cold JVM's closed-loop rate as the JIT compiles, a dip, then the warm plateau.
    long[] counts = {220, 320, 330, 350, 390, 400, 310, 420, 440, 430, 450, 440, 380, 400};
    assertEquals((420 + 440 + 430 + 450 + 440) / 5.0, CapacityProbe.bestRate(counts), 1e-9);
  }

  @Test
  void fewerSecondsThanAWindowAreAveragedWhole() {
    assertEquals(150.0, CapacityProbe.bestRate(new long[] {100, 200}), 1e-9);
    assertEquals(7.0, CapacityProbe.bestRate(new long[] {7}), 1e-9);
  }

  @Test
  void aWindowAtTheEndCounts() {
    assertEquals(500.0, CapacityProbe.bestRate(new long[] {100, 100, 500, 500, 500, 500, 500}),
        1e-9);
  }

  @Test
  void aProbeOfNoSecondsOrNoClientsIsRefused() {
    URI nowhere = URI.create("http://127.0.0.1:1/");
    assertThrows(IllegalArgumentException.class, () -> CapacityProbe.measure(nowhere, 1, 0));
    assertThrows(IllegalArgumentException.class, () -> CapacityProbe.measure(nowhere, 0, 1));
  }

  @Test
  void anInterruptedProbeStopsInsteadOfSpinningToItsEnd() throws Exception {
    // A server that interrupts the probe's thread when the first request reaches it: by then the
    // clients are sending and the probe is counting, where an interrupt must end it.
    Thread probe = Thread.currentThread();
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", exchange -> {
      probe.interrupt();
      exchange.sendResponseHeaders(200, -1);
      exchange.close();
    });
    server.start();
    long start = System.nanoTime();
    try {
      URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/");
      assertThrows(InterruptedException.class, () -> CapacityProbe.measure(uri, 1, 30));
      assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(20), "ran to its end");
    } finally {
      Thread.interrupted();
      server.stop(0);
    }
  }
}
