package dev.weir.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class TierMixAndArgsTest {
  @Test
  void mixSamplesTiersInProportion() {
    TierMix mix = TierMix.parse("0:10, 3:30 ,5:60");
    assertArrayEquals(new int[] {0, 3, 5}, mix.tiers());
    assertEquals(0.3, mix.share(3), 1e-9);
    assertEquals(0, mix.share(1));
    int[] seen = new int[6];
    Random random = new Random(7);
    for (int i = 0; i < 20_000; i++) {
      seen[mix.sample(random)]++;
    }
    assertEquals(0, seen[1] + seen[2] + seen[4]);
    // Expected 2000 / 6000 / 12000; binomial standard deviations are under 70.
    assertTrue(Math.abs(seen[0] - 2000) < 400, () -> "tier 0: " + seen[0]);
    assertTrue(Math.abs(seen[3] - 6000) < 400, () -> "tier 3: " + seen[3]);
    assertEquals("10% tier 0, 30% tier 3, 60% tier 5", mix.toString());
  }

  @Test
  void mixRejectsNonsenseNamingTheProblem() {
    assertMessage("twice", () -> TierMix.parse("1:50,1:50"));
    assertMessage("mix tier", () -> TierMix.parse("6:1"));
    assertMessage("mix tier", () -> TierMix.parse("-1:1"));
    assertMessage("integer", () -> TierMix.parse("1.5:1"));
    assertMessage("mix weight", () -> TierMix.parse("1:0"));
    assertMessage("mix weight", () -> TierMix.parse("1:lots"));
    assertMessage("tier:weight", () -> TierMix.parse("1"));
    assertMessage("tier:weight", () -> TierMix.parse(""));
  }

  @Test
  void argsParseValuesFlagsAndDefaults() {
    Args a = Args.parse(new String[] {"--seconds", "5", "--fixed-rate", "--loads=1.5,3"},
        "seconds", "fixed-rate", "loads", "seed");
    assertEquals(5, a.intValue("seconds", 10, 1, 600));
    assertTrue(a.flag("fixed-rate"));
    assertEquals(List.of(1.5, 3.0), a.doubles("loads", List.of(), 0, 100));
    assertEquals(42, a.longValue("seed", 42));
    assertFalse(a.flag("seed"));
  }

  @Test
  void argsRejectNonsenseNamingTheOption() {
    assertMessage("unknown option --second",
        () -> Args.parse(new String[] {"--second", "5"}, "seconds"));
    assertMessage("unexpected argument '5'", () -> Args.parse(new String[] {"5"}, "seconds"));
    assertMessage("--seconds must be in 1..600",
        () -> Args.parse(new String[] {"--seconds", "0"}, "seconds").intValue("seconds", 1, 1,
            600));
    assertMessage("--seconds must be an integer",
        () -> Args.parse(new String[] {"--seconds", "ten"}, "seconds").intValue("seconds", 1, 1,
            600));
    assertMessage("--seconds needs a value",
        () -> Args.parse(new String[] {"--seconds"}, "seconds").intValue("seconds", 1, 1, 600));
    assertMessage("--loads must be a number",
        () -> Args.parse(new String[] {"--loads", "1.5,,3"}, "loads").doubles("loads", null, 0, 9));
    assertMessage("--loads must be in",
        () -> Args.parse(new String[] {"--loads", "NaN"}, "loads").doubles("loads", null, 0, 9));
    assertMessage("takes no value",
        () -> Args.parse(new String[] {"--help", "me"}, "help").flag("help"));
    // Given twice, the first would be ignored without a word.
    assertMessage("--seconds is given twice",
        () -> Args.parse(new String[] {"--seconds", "5", "--seconds=9"}, "seconds"));
  }

  @Test
  void aValueThatStartsWithDashesNeedsTheEqualsFormAndTheErrorSaysSo() {
    // Read as an option of its own, with a hint at the form that works.
    assertMessage("write --jvm-args=--enable-preview",
        () -> Args.parse(new String[] {"--jvm-args", "--enable-preview"}, "jvm-args"));
    assertMessage("write --jvm-args=--add-opens=a/b=c",
        () -> Args.parse(new String[] {"--jvm-args", "--add-opens=a/b=c"}, "jvm-args"));
    Args a = Args.parse(new String[] {"--jvm-args=--enable-preview -Dx=y", "--seconds", "2"},
        "jvm-args", "seconds");
    assertEquals("--enable-preview -Dx=y", a.string("jvm-args", ""));
    assertEquals(2, a.intValue("seconds", 1, 1, 9));
    // No hint without an option before the unknown one.
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Args.parse(new String[] {"--bogus"}, "jvm-args"));
    assertFalse(e.getMessage().contains("write"), e.getMessage());
  }

  @Test
  void demoSettingsParseAndRejectTooMuchLoad() {
    OverloadDemo.Settings s = OverloadDemo.Settings.parse(new String[] {"--seconds", "4",
        "--mix", "0:1,5:3", "--fixed-rate"});
    assertEquals(4, s.seconds);
    assertEquals(0.75, s.mix.share(5), 1e-9);
    assertFalse(s.poisson);
    assertNull(OverloadDemo.Settings.parse(new String[] {"--help"}));
    assertMessage("more than this demo's client sends",
        () -> OverloadDemo.Settings.parse(new String[] {"--loads", "100"}));
  }

  private static void assertMessage(String expected, org.junit.jupiter.api.function.Executable e) {
    IllegalArgumentException x = assertThrows(IllegalArgumentException.class, e);
    assertTrue(x.getMessage().contains(expected), () -> "message: " + x.getMessage());
  }
}
