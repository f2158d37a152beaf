package dev.weir.examples;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Command-line options of the form {@code --name value} or {@code --flag}. Every error is an
 * {@link IllegalArgumentException} whose message names the option, for the mains to print.
 */
public final class Args {
  private final Map<String, String> values;

  private Args(Map<String, String> values) {
    this.values = values;
  }

  /**
   * Parses {@code args}, accepting only the {@code known} option names (without dashes). An option
   * followed by another option, or by nothing, is a flag; so a value that starts with {@code --}
   * can only be given as {@code --name=--value}, which the usage of such options says. An option
   * given twice is an error.
   */
  public static Args parse(String[] args, String... known) {
    List<String> names = Arrays.asList(known);
    Map<String, String> values = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (!arg.startsWith("--") || arg.length() == 2) {
        throw new IllegalArgumentException("unexpected argument '" + arg + "'; options are --"
            + String.join(", --", names));
      }
      String name = arg.substring(2);
      String value = null;
      int eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.substring(eq + 1);
        name = name.substring(0, eq);
      } else if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
        value = args[++i];
      }
      if (!names.contains(name)) {
        // "--jvm-args --enable-preview": the value was read as an option of its own.
        String previous = i > 0 ? args[i - 1] : "";
        String hint = previous.startsWith("--") && previous.indexOf('=') < 0
            && names.contains(previous.substring(2))
            ? " (if it is the value of " + previous + ", write " + previous + "=" + arg + ")"
            : "";
        throw new IllegalArgumentException("unknown option --" + name + hint + "; options are --"
            + String.join(", --", names));
      }
      if (values.containsKey(name)) {
        throw new IllegalArgumentException("--" + name + " is given twice; give it once");
      }
      values.put(name, value);
    }
    return new Args(values);
  }

  public boolean flag(String name) {
    if (!values.containsKey(name)) {
      return false;
    }
    if (values.get(name) != null) {
      throw new IllegalArgumentException("--" + name + " takes no value, was given '"
          + values.get(name) + "'");
    }
    return true;
  }

  public String string(String name, String defaultValue) {
    return values.containsKey(name) ? required(name) : defaultValue;
  }

  public int intValue(String name, int defaultValue, int min, int max) {
    if (!values.containsKey(name)) {
      return defaultValue;
    }
    long v = longValue(name, defaultValue);
    if (v < min || v > max) {
      throw new IllegalArgumentException("--" + name + " must be in " + min + ".." + max
          + ", was " + v);
    }
    return (int) v;
  }

  public long longValue(String name, long defaultValue) {
    if (!values.containsKey(name)) {
      return defaultValue;
    }
    String text = required(name);
    try {
      return Long.parseLong(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--" + name + " must be an integer, was '" + text + "'");
    }
  }

  public double doubleValue(String name, double defaultValue, double min, double max) {
    if (!values.containsKey(name)) {
      return defaultValue;
    }
    return parseDouble("--" + name, required(name), min, max);
  }

  /**
   * {@code text}, a comma-separated list of names, each one of {@code known}, trimmed and listed
   * once.
   *
   * @throws IllegalArgumentException naming {@code what} and the name that is unknown or twice
   */
  public static List<String> parseNames(String what, String text, List<String> known) {
    List<String> list = new ArrayList<>();
    for (String part : text.split(",", -1)) {
      String n = part.trim();
      if (!known.contains(n)) {
        throw new IllegalArgumentException(what + ": unknown '" + n + "'; choose from "
            + String.join(",", known));
      }
      if (list.contains(n)) {
        throw new IllegalArgumentException(what + " lists " + n + " twice");
      }
      list.add(n);
    }
    return List.copyOf(list);
  }

  /** A comma-separated list of numbers, such as {@code 1.5,3}. */
  public List<Double> doubles(String name, List<Double> defaultValue, double min, double max) {
    if (!values.containsKey(name)) {
      return defaultValue;
    }
    List<Double> list = new ArrayList<>();
    for (String part : required(name).split(",", -1)) {
      list.add(parseDouble("--" + name, part, min, max));
    }
    return List.copyOf(list);
  }

  public static double parseDouble(String what, String text, double min, double max) {
    double v;
    try {
      v = Double.parseDouble(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(what + " must be a number, was '" + text + "'");
    }
    if (!(v >= min && v <= max)) { // also rejects NaN
      throw new IllegalArgumentException(what + " must be in " + min + ".." + max + ", was "
          + text.trim());
    }
    return v;
  }

  private String required(String name) {
    String v = values.get(name);
    if (v == null) {
      throw new IllegalArgumentException("--" + name + " needs a value");
    }
    return v;
  }
}
