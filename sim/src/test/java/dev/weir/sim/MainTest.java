package dev.weir.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The command line: every bad or extra argument is an error naming it, before anything runs. */
class MainTest {
  @Test
  void badOrExtraArgumentsAreRejectedNamingThem() {
    String[][] bad = {
        {"S3", "bogus"}, {"S3", "weir", "extra"}, {"nosuch"}, {"list", "x"}, {"check", "x"},
        {"compare", "x"}, {"corpus", "--stream", "x"}, {"corpus", "--bogus"},
        {"corpus", "--stream"}, {"corpus", "a", "b", "c"}, {"corpus", "nosuch-family"},
        {"corpus", "cpu", "mixed"}, {"oracle-backlog", "--stream", "x"}, {"oracle-backlog", "5"},
        {"oracle-backlog", "--stream"}, {"oracle-backlog", "--stream", "5", "6"},
        {"corpus", "--stream=x"}, {"long", "5"}, {"long", "--stream", "x"}, {"--bogus"}};
    for (String[] args : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Main.command(args), String.join(" ", args));
      String named = args[args.length - 1].replaceFirst("^--stream=", "");
      assertTrue(e.getMessage().contains(named) || e.getMessage().contains("--stream"),
          String.join(" ", args) + ": " + e.getMessage());
    }
  }

  @Test
  void goodArgumentsParseWithoutRunningAndHelpIsNotAnError() {
    List<String[]> good = List.of(new String[0], new String[] {"compare"},
        new String[] {"check"}, new String[] {"list"}, new String[] {"S3"},
        new String[] {"s3", "vegas-only"}, new String[] {"corpus"},
        new String[] {"corpus", "cpu", "--list", "--stream", "5"},
        new String[] {"corpus", "--stream=5", "heldout", "--experiment"},
        new String[] {"corpus", "families"}, new String[] {"oracle-backlog"},
        new String[] {"oracle-backlog", "--stream", "5"},
        new String[] {"oracle-backlog", "--stream=5"}, new String[] {"long"},
        new String[] {"long", "--stream", "5"});
    for (String[] args : good) {
      assertNotNull(Main.command(args), String.join(" ", args));
    }
    assertNull(Main.command(new String[] {"--help"}));
    assertNull(Main.command(new String[] {"-h"}));
    assertTrue(Main.USAGE.contains("oracle-backlog [--stream N]"), Main.USAGE);
    assertTrue(Main.USAGE.contains("long [--stream N]"), Main.USAGE);
    assertTrue(Main.command(new String[] {"list"}).get().contains("S3"));
  }
}
