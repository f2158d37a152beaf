package dev.weir.examples.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.URI;
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
}
