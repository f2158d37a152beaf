package dev.weir.http;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads contract-cases.tsv (see its header). The adapters' tests read the same file with their
 * own few lines of parsing.
 */
final class ContractCases {
  static final Path FILE = Path.of("src/test/resources/dev/weir/http/contract-cases.tsv");

  private ContractCases() {}

  /** Every non-comment row, split on tabs. */
  static List<String[]> rows(String kind) {
    List<String[]> out = new ArrayList<>();
    try {
      for (String line : Files.readAllLines(FILE, StandardCharsets.UTF_8)) {
        if (!line.isBlank() && !line.startsWith("#") && line.startsWith(kind + "\t")) {
          out.add(line.split("\t", -1));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  /** The header cell as name-value pairs, {N*text} expanded. */
  static List<Map.Entry<String, String>> headers(String cell) {
    List<Map.Entry<String, String>> out = new ArrayList<>();
    if (cell.equals("-")) {
      return out;
    }
    for (String pair : cell.split(" \\| ")) {
      int colon = pair.indexOf(':');
      out.add(Map.entry(pair.substring(0, colon).trim(), expand(pair.substring(colon + 1)).trim()));
    }
    return out;
  }

  static String expand(String s) {
    StringBuilder b = new StringBuilder();
    int i = 0;
    while (i < s.length()) {
      int open = s.indexOf('{', i);
      if (open < 0) {
        b.append(s, i, s.length());
        break;
      }
      int star = s.indexOf('*', open);
      int close = s.indexOf('}', star);
      b.append(s, i, open).append(s.substring(star + 1, close)
          .repeat(Integer.parseInt(s.substring(open + 1, star))));
      i = close + 1;
    }
    return b.toString();
  }
}
