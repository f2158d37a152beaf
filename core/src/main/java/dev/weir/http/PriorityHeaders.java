package dev.weir.http;

import dev.weir.Cohorts;
import dev.weir.Priority;
import dev.weir.internal.Check;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Reads a request's packed {@link Priority} from its headers, trusting none of them. Both
 * adapters use it, through their {@link HeaderLookup}.
 *
 * <h2>The tier, first match wins</h2>
 * <ol>
 *   <li>the tier header, default {@value #DEFAULT_TIER_HEADER}: {@code "t"} or {@code "t:c"}, for
 *       example {@code X-Weir-Tier: 1} or {@code X-Weir-Tier: 1:40};
 *   <li>the W3C {@code baggage} member {@value #BAGGAGE_TIER}, for example {@code baggage:
 *       weir-tier=1,weir-cohort=5}, so that the priority rides along with tracing context through
 *       services that do not know Weir;
 *   <li>the calling service, named by the caller header (default {@value #DEFAULT_CALLER_HEADER}),
 *       looked up in the caller-to-tier map;
 *   <li>the default tier, {@value #DEFAULT_TIER} unless configured.
 * </ol>
 *
 * <h2>The cohort, first match wins</h2>
 * The cohort of the tier header ({@code "t:c"}); the baggage member {@value #BAGGAGE_COHORT}; the
 * user-key header (default {@value #DEFAULT_USER_KEY_HEADER}) hashed through {@link Cohorts};
 * otherwise {@code Cohorts.cohort(null)}, a random cohort, so that a tier can be shed in part.
 *
 * <h2>Hostile input</h2>
 * A value that is not exactly what is described is ignored as if absent, as a whole: the request
 * gets what the next source gives, in the end the default priority; reading never throws. So:
 * <ul>
 *   <li>a tier header is {@code digits} or {@code digits:digits}, with optional spaces or tabs
 *       around it, tier in 0..5 and cohort in 0..127; anything else ({@code 1:999}, {@code 1:},
 *       {@code 1::2}, {@code -1}, {@code 0x1}) is ignored whole, not read in part;
 *   <li>a header sent more than once (its lookup value holds a {@code ,}) is ignored: picking
 *       one would let a client add a header to override a proxy's. The same holds for a baggage
 *       key given more than once. Repeated {@code baggage} headers are one list, as W3C says;
 *   <li>a header longer than {@code maxHeaderLength} characters (default {@value
 *       #DEFAULT_MAX_HEADER_LENGTH}), and baggage longer than {@value #MAX_BAGGAGE_LENGTH} in all
 *       (the W3C limit), are ignored whole.
 * </ul>
 * Reading is one pass over at most {@value #MAX_BAGGAGE_LENGTH} characters of baggage and {@code
 * maxHeaderLength} of each other header, whatever the request's size, so it may run before
 * admission. A request with no priority header costs a few lookups and allocates nothing.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class PriorityHeaders {
  /** The default tier header. */
  public static final String DEFAULT_TIER_HEADER = "X-Weir-Tier";
  /** The default caller header, naming the calling service. */
  public static final String DEFAULT_CALLER_HEADER = "X-Weir-Caller";
  /** The default user-key header, whose value is hashed into the cohort. */
  public static final String DEFAULT_USER_KEY_HEADER = "X-Weir-User";
  /** The default tier of a request that says nothing: 3, ordinary traffic below critical paths. */
  public static final int DEFAULT_TIER = 3;
  /** The cohort of {@link #defaultPriority()}: the middle one. */
  public static final int DEFAULT_COHORT = Priority.COHORTS / 2;
  /** The default cap on the length of the tier, caller and user-key headers. */
  public static final int DEFAULT_MAX_HEADER_LENGTH = 256;
  /** The W3C baggage header. */
  public static final String BAGGAGE_HEADER = "baggage";
  /** The baggage key for the tier. */
  public static final String BAGGAGE_TIER = "weir-tier";
  /** The baggage key for the cohort. */
  public static final String BAGGAGE_COHORT = "weir-cohort";
  /** The longest baggage read, in characters, the W3C limit; longer baggage is ignored. */
  public static final int MAX_BAGGAGE_LENGTH = 8192;

  private static final int NONE = -1;
  /** A baggage key given more than once. */
  private static final int TWICE = -2;

  private final String tierHeader;
  private final String callerHeader;
  private final String userKeyHeader;
  private final Map<String, Integer> callerTiers;
  private final int defaultTier;
  private final int maxHeaderLength;
  private final boolean readBaggage;
  private final Cohorts cohorts;

  private PriorityHeaders(Builder b) {
    this.tierHeader = b.tierHeader.toLowerCase(Locale.ROOT);
    this.callerHeader = b.callerHeader.toLowerCase(Locale.ROOT);
    this.userKeyHeader = b.userKeyHeader == null ? null : b.userKeyHeader.toLowerCase(Locale.ROOT);
    this.callerTiers = Map.copyOf(b.callerTiers);
    this.defaultTier = b.defaultTier;
    this.maxHeaderLength = b.maxHeaderLength;
    this.readBaggage = b.readBaggage;
    this.cohorts = b.cohorts != null ? b.cohorts : Cohorts.rotating();
  }

  /** Every default. */
  public static PriorityHeaders defaults() {
    return builder().build();
  }

  /** A builder; every setting has a default. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The packed priority of {@code request}, always valid. Throws only what {@code headers}
   * throws.
   */
  public <R> int priority(R request, HeaderLookup<? super R> headers) {
    String tierValue = value(request, headers, tierHeader);
    int explicit = tierValue == null ? NONE : parseTierHeader(tierValue);
    boolean complete = explicit != NONE && (explicit & 0xff) != 0xff;
    // Each other header is read only if the tier header leaves something for it to decide.
    String baggage = readBaggage && !complete ? headers.header(request, BAGGAGE_HEADER) : null;
    String caller = explicit == NONE && !callerTiers.isEmpty()
        ? value(request, headers, callerHeader) : null;
    String user = userKeyHeader != null && !complete
        ? value(request, headers, userKeyHeader) : null;
    return resolve(explicit, baggage, caller, user);
  }

  /**
   * The packed priority of the request whose header fields are {@code fields}, always valid: the
   * same as {@link #priority(Object, HeaderLookup)} gives, read in one pass over the fields. A
   * header sent more than once is read as its values joined by commas, as a lookup reads it. Throws
   * only what {@code access} throws.
   */
  public <F> int priorityFromFields(F fields, HeaderFields<? super F> access) {
    String tierValue = null;
    String baggage = null;
    String caller = null;
    String user = null;
    boolean callers = !callerTiers.isEmpty();
    for (int i = 0, n = access.size(fields); i < n; i++) {
      String name = access.name(fields, i);
      if (sameName(name, tierHeader)) {
        tierValue = tierValue == null ? nonNull(access.value(fields, i)) : REPEATED;
      }
      if (readBaggage && sameName(name, BAGGAGE_HEADER)) {
        baggage = baggage == null ? nonNull(access.value(fields, i))
            : joinBaggage(baggage, access.value(fields, i));
      }
      if (callers && sameName(name, callerHeader)) {
        caller = caller == null ? nonNull(access.value(fields, i)) : REPEATED;
      }
      if (userKeyHeader != null && sameName(name, userKeyHeader)) {
        user = user == null ? nonNull(access.value(fields, i)) : REPEATED;
      }
    }
    String tier = single(tierValue);
    return resolve(tier == null ? NONE : parseTierHeader(tier), baggage, single(caller),
        single(user));
  }

  /**
   * True if header name {@code name} is {@code lower}, a name in lower case, ignoring the case of
   * ASCII letters as HTTP does: what {@code equalsIgnoreCase} answers here, without its general
   * case folding, and with the length compared first.
   */
  private static boolean sameName(String name, String lower) {
    int n = lower.length();
    if (name.length() != n) {
      return false;
    }
    for (int i = n - 1; i >= 0; i--) { // from the end: the names read share their "x-weir-"
      char c = name.charAt(i);
      if (c >= 'A' && c <= 'Z') {
        c += 'a' - 'A';
      }
      if (c != lower.charAt(i)) {
        return false;
      }
    }
    return true;
  }

  /** What a header sent more than once reads as: it holds a comma, so it is ignored. */
  private static final String REPEATED = ",";

  private static String nonNull(String v) {
    return v == null ? "" : v;
  }

  /** Repeated baggage headers are one list; past the longest read, it is ignored anyway. */
  private static String joinBaggage(String sofar, String next) {
    return sofar.length() > MAX_BAGGAGE_LENGTH ? sofar : sofar + ',' + nonNull(next);
  }

  /** The priority from the tier header's parsed value and the other headers' raw values. */
  private int resolve(int explicit, String baggage, String caller, String user) {
    int tier = NONE;
    int cohort = NONE;
    if (explicit != NONE) {
      tier = explicit >> 8;
      cohort = (explicit & 0xff) == 0xff ? NONE : explicit & 0xff;
    }
    if (readBaggage && (tier == NONE || cohort == NONE)
        && baggage != null && baggage.length() <= MAX_BAGGAGE_LENGTH) {
      long found = parseBaggage(baggage);
      int t = (int) (found >> 32);
      int c = (int) found;
      tier = tier == NONE && t >= 0 ? t : tier;
      cohort = cohort == NONE && c >= 0 ? c : cohort;
    }
    if (tier == NONE && caller != null) {
      Integer t = callerTiers.get(caller.trim());
      tier = t == null ? NONE : t;
    }
    if (tier == NONE) {
      tier = defaultTier;
    }
    if (cohort == NONE) {
      cohort = cohorts.cohort(user);
    }
    return Priority.of(tier, cohort);
  }

  /**
   * What an adapter uses when a custom priority function fails or returns an invalid priority:
   * the default tier, cohort {@value #DEFAULT_COHORT}.
   */
  public int defaultPriority() {
    return Priority.of(defaultTier, DEFAULT_COHORT);
  }

  /** The default tier. */
  public int defaultTier() {
    return defaultTier;
  }

  /** The tier header's name, in lower case. */
  public String tierHeader() {
    return tierHeader;
  }

  /** A header's single value: null if absent, repeated (holds a comma) or too long. */
  private <R> String value(R request, HeaderLookup<? super R> headers, String name) {
    return single(headers.header(request, name));
  }

  /** {@code v} if it is a single value: null if absent, repeated (holds a comma) or too long. */
  private String single(String v) {
    return v == null || v.length() > maxHeaderLength || v.indexOf(',') >= 0 ? null : v;
  }

  /**
   * {@code tier << 8 | cohort} (cohort 0xff if not given), or {@link #NONE} unless the value is
   * exactly {@code digits} or {@code digits:digits} in range, between optional blanks.
   */
  static int parseTierHeader(String v) {
    int from = skipBlanks(v, 0, v.length());
    int to = trimBlanks(v, from, v.length());
    int colon = v.indexOf(':', from);
    if (colon < 0 || colon >= to) {
      int tier = number(v, from, to, Priority.TIERS);
      return tier == NONE ? NONE : tier << 8 | 0xff;
    }
    int tier = number(v, from, colon, Priority.TIERS);
    int cohort = number(v, colon + 1, to, Priority.COHORTS);
    return tier == NONE || cohort == NONE ? NONE : tier << 8 | cohort;
  }

  /**
   * The {@link #BAGGAGE_TIER} value in the high half and the {@link #BAGGAGE_COHORT} value in the
   * low half, each negative if absent, invalid or given twice. One pass: each member's end is found
   * once, and its key and value are looked for only inside it.
   */
  static long parseBaggage(String b) {
    int tier = NONE;
    int cohort = NONE;
    int n = b.length();
    int start = 0;
    while (start <= n) {
      int end = b.indexOf(',', start);
      if (end < 0) {
        end = n;
      }
      int eq = -1;
      int semi = end;
      for (int i = start; i < end; i++) {
        char c = b.charAt(i);
        if (c == '=' && eq < 0) {
          eq = i;
        } else if (c == ';') {
          semi = i;
          break;
        }
      }
      if (eq >= 0) {
        int keyFrom = skipBlanks(b, start, eq);
        int keyTo = trimBlanks(b, keyFrom, eq);
        if (is(b, keyFrom, keyTo, BAGGAGE_TIER)) {
          tier = tier == NONE ? valueOrInvalid(b, eq + 1, semi, Priority.TIERS) : TWICE;
        } else if (is(b, keyFrom, keyTo, BAGGAGE_COHORT)) {
          cohort = cohort == NONE ? valueOrInvalid(b, eq + 1, semi, Priority.COHORTS) : TWICE;
        }
      }
      start = end + 1;
    }
    return ((long) tier << 32) | (cohort & 0xffffffffL);
  }

  /** The number, or {@link #TWICE} for an invalid one: a given key counts even if invalid. */
  private static int valueOrInvalid(String s, int from, int to, int bound) {
    int f = skipBlanks(s, from, to);
    int v = number(s, f, trimBlanks(s, f, to), bound);
    return v == NONE ? TWICE : v;
  }

  private static boolean is(String s, int from, int to, String key) {
    return to - from == key.length() && s.regionMatches(from, key, 0, key.length());
  }

  /** A decimal in 0..bound-1 filling {@code [from, to)}, or {@link #NONE}; never overflows. */
  private static int number(String s, int from, int to, int bound) {
    if (from >= to) {
      return NONE;
    }
    int value = 0;
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9' || (value = value * 10 + (c - '0')) >= bound) {
        return NONE;
      }
    }
    return value;
  }

  private static int skipBlanks(String s, int from, int to) {
    while (from < to && (s.charAt(from) == ' ' || s.charAt(from) == '\t')) {
      from++;
    }
    return from;
  }

  private static int trimBlanks(String s, int from, int to) {
    while (to > from && (s.charAt(to - 1) == ' ' || s.charAt(to - 1) == '\t')) {
      to--;
    }
    return to;
  }

  /**
   * Settings for {@link PriorityHeaders}. Every setting has a default; an invalid value throws
   * {@link IllegalArgumentException} naming the setting. Not thread-safe.
   */
  public static final class Builder {
    private String tierHeader = DEFAULT_TIER_HEADER;
    private String callerHeader = DEFAULT_CALLER_HEADER;
    private String userKeyHeader = DEFAULT_USER_KEY_HEADER;
    private final Map<String, Integer> callerTiers = new HashMap<>();
    private int defaultTier = DEFAULT_TIER;
    private int maxHeaderLength = DEFAULT_MAX_HEADER_LENGTH;
    private boolean readBaggage = true;
    private Cohorts cohorts;

    private Builder() {}

    /** The tier header. Default {@value #DEFAULT_TIER_HEADER}. */
    public Builder tierHeader(String name) {
      this.tierHeader = headerName("tierHeader", name);
      return this;
    }

    /** The header naming the calling service. Default {@value #DEFAULT_CALLER_HEADER}. */
    public Builder callerHeader(String name) {
      this.callerHeader = headerName("callerHeader", name);
      return this;
    }

    /**
     * The header whose value (a user or session id) is hashed into the cohort when none is given
     * explicitly; null to ignore users. Default {@value #DEFAULT_USER_KEY_HEADER}.
     */
    public Builder userKeyHeader(String name) {
      this.userKeyHeader = name == null ? null : headerName("userKeyHeader", name);
      return this;
    }

    /**
     * Requests from {@code caller} (the caller header's value, trimmed) get {@code tier} when
     * they give none. A caller name holds no comma, which would read as a repeated header, and is
     * at most {@link #maxHeaderLength} characters, checked by {@link #build()}.
     */
    public Builder callerTier(String caller, int tier) {
      Check.notBlank("callerTier", caller);
      if (caller.indexOf(',') >= 0) {
        throw new IllegalArgumentException("callerTier: caller must not contain ',', was '"
            + caller + "'");
      }
      Check.inRange("callerTier", tier, 0, Priority.TIERS - 1);
      callerTiers.put(caller.trim(), tier);
      return this;
    }

    /** The tier of a request that says nothing. Default {@value #DEFAULT_TIER}, 0..5. */
    public Builder defaultTier(int tier) {
      this.defaultTier = Check.inRange("defaultTier", tier, 0, Priority.TIERS - 1);
      return this;
    }

    /**
     * The longest tier, caller or user-key header read; longer ones are ignored. Default {@value
     * #DEFAULT_MAX_HEADER_LENGTH}, 1..8192.
     */
    public Builder maxHeaderLength(int length) {
      this.maxHeaderLength = Check.inRange("maxHeaderLength", length, 1, MAX_BAGGAGE_LENGTH);
      return this;
    }

    /** Whether W3C baggage is read. Default true. */
    public Builder readBaggage(boolean read) {
      this.readBaggage = read;
      return this;
    }

    /** How user keys map to cohorts. Default {@link Cohorts#rotating()}. */
    public Builder cohorts(Cohorts cohorts) {
      this.cohorts = Check.notNull("cohorts", cohorts);
      return this;
    }

    /**
     * Builds the settings.
     *
     * @throws IllegalArgumentException naming {@code callerTier}, for a caller longer than {@code
     *     maxHeaderLength}: its header would be ignored, so the entry could never apply
     */
    public PriorityHeaders build() {
      for (String caller : callerTiers.keySet()) {
        if (caller.length() > maxHeaderLength) {
          throw new IllegalArgumentException("callerTier: caller '"
              + (caller.length() <= 64 ? caller : caller.substring(0, 64) + "...") + "' ("
              + caller.length() + " characters) is longer than maxHeaderLength ("
              + maxHeaderLength + "), so its header would be ignored");
        }
      }
      return new PriorityHeaders(this);
    }

    private static String headerName(String setting, String name) {
      if (name == null || name.isEmpty() || !name.chars().allMatch(c -> c > 32 && c < 127
          && "()<>@,;:\\\"/[]?={}".indexOf(c) < 0)) {
        throw new IllegalArgumentException(setting + " must be an HTTP header name, was '"
            + name + "'");
      }
      return name;
    }
  }
}
