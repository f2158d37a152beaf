package dev.weir.servlet;

import dev.weir.Cohorts;
import dev.weir.Priority;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The default {@link PriorityResolver}: reads the priority from request headers, trusting none of
 * them.
 *
 * <h2>Where the tier comes from, first match wins</h2>
 * <ol>
 *   <li>the tier header, default {@value #DEFAULT_TIER_HEADER}: {@code "t"} or {@code "t:c"}, for
 *       example {@code X-Weir-Tier: 1} or {@code X-Weir-Tier: 1:40};
 *   <li>the W3C {@code baggage} entry {@value #BAGGAGE_TIER} (for example
 *       {@code baggage: weir-tier=1,weir-cohort=5}), so the priority rides along with tracing
 *       context through services that do not know Weir;
 *   <li>the calling service, from the caller header (default {@value #DEFAULT_CALLER_HEADER}),
 *       looked up in the configured caller-to-tier map;
 *   <li>the default tier, {@value #DEFAULT_TIER} unless configured.
 * </ol>
 *
 * <h2>Where the cohort comes from, first match wins</h2>
 * The cohort given with the tier header ({@code "t:c"}); the baggage entry {@value #BAGGAGE_COHORT};
 * the user-key header (off unless configured) hashed through {@link Cohorts}; otherwise
 * {@code Cohorts.cohort(null)}, the middle cohort 64.
 *
 * <h2>Hostile input</h2>
 * A header longer than {@code maxHeaderLength} characters, repeated, negative, non-numeric or out
 * of range is ignored, as if absent, and logged at {@code FINE}: the request is served at the
 * default priority, never answered 500. At most {@code maxHeaderLength} characters of each header
 * are looked at ({@value #MAX_BAGGAGE_LENGTH} for baggage, the W3C limit), and at most
 * {@value #MAX_BAGGAGE_HEADERS} baggage headers.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class HeaderPriorityResolver implements PriorityResolver {
  /** The default tier header. */
  public static final String DEFAULT_TIER_HEADER = "X-Weir-Tier";
  /** The default caller header, naming the calling service. */
  public static final String DEFAULT_CALLER_HEADER = "X-Weir-Caller";
  /** The default user-key header. */
  public static final String DEFAULT_USER_KEY_HEADER = "X-Weir-User";
  /** The default tier of a request that says nothing: 3, ordinary traffic below critical paths. */
  public static final int DEFAULT_TIER = 3;
  /** The default cap on how much of a header is read. */
  public static final int DEFAULT_MAX_HEADER_LENGTH = 256;
  /** The baggage key for the tier. */
  public static final String BAGGAGE_TIER = "weir-tier";
  /** The baggage key for the cohort. */
  public static final String BAGGAGE_COHORT = "weir-cohort";
  /** The most baggage read, in characters, the W3C limit. */
  public static final int MAX_BAGGAGE_LENGTH = 8192;
  /** The most baggage headers looked at. */
  public static final int MAX_BAGGAGE_HEADERS = 8;

  private static final Logger LOG = Logger.getLogger(HeaderPriorityResolver.class.getName());
  private static final int NONE = -1;

  private final String tierHeader;
  private final String callerHeader;
  private final String userKeyHeader;
  private final Map<String, Integer> callerTiers;
  private final int defaultTier;
  private final int maxHeaderLength;
  private final boolean readBaggage;
  private final Cohorts cohorts;

  private HeaderPriorityResolver(Builder b) {
    this.tierHeader = b.tierHeader;
    this.callerHeader = b.callerHeader;
    this.userKeyHeader = b.userKeyHeader;
    this.callerTiers = Map.copyOf(b.callerTiers);
    this.defaultTier = b.defaultTier;
    this.maxHeaderLength = b.maxHeaderLength;
    this.readBaggage = b.readBaggage;
    this.cohorts = b.cohorts != null ? b.cohorts : Cohorts.rotating();
  }

  /** The resolver with every default. */
  public static HeaderPriorityResolver defaults() {
    return builder().build();
  }

  /** A builder; every setting has a default. */
  public static Builder builder() {
    return new Builder();
  }

  @Override
  public int resolve(HttpServletRequest request) {
    int tier = NONE;
    int cohort = NONE;
    String explicit = single(request, tierHeader, maxHeaderLength);
    if (explicit != null) {
      try {
        if (explicit.indexOf(':') >= 0) {
          int p = Priority.parse(explicit);
          tier = Priority.tier(p);
          cohort = Priority.cohort(p);
        } else {
          tier = Priority.parseTier(explicit.trim());
        }
      } catch (IllegalArgumentException e) {
        debug(tierHeader, e.getMessage());
      }
    }
    if (readBaggage && (tier == NONE || cohort == NONE)) {
      long fromBaggage = baggage(request);
      if (tier == NONE) {
        tier = (int) (fromBaggage >> 32);
      }
      if (cohort == NONE) {
        cohort = (int) fromBaggage;
      }
    }
    if (tier == NONE && callerHeader != null && !callerTiers.isEmpty()) {
      String caller = single(request, callerHeader, maxHeaderLength);
      if (caller != null) {
        Integer t = callerTiers.get(caller.trim());
        if (t != null) {
          tier = t;
        }
      }
    }
    if (tier == NONE) {
      tier = defaultTier;
    }
    if (cohort == NONE) {
      String key = userKeyHeader == null ? null : single(request, userKeyHeader, maxHeaderLength);
      cohort = cohorts.cohort(key);
    }
    return Priority.of(tier, cohort);
  }

  /**
   * The one value of a header, or null if it is absent, repeated or too long. A repeated priority
   * header is ambiguous, and picking one would let a client add a header to override a proxy's.
   */
  private static String single(HttpServletRequest request, String name, int maxLength) {
    Enumeration<String> values = request.getHeaders(name);
    if (values == null || !values.hasMoreElements()) {
      return null;
    }
    String value = values.nextElement();
    if (values.hasMoreElements()) {
      debug(name, "header is repeated");
      return null;
    }
    if (value == null) {
      return null;
    }
    if (value.length() > maxLength) {
      debug(name, "header is longer than " + maxLength + " characters (" + value.length() + ")");
      return null;
    }
    return value;
  }

  /** Tier in the high half and cohort in the low half, each {@link #NONE} if not found. */
  private long baggage(HttpServletRequest request) {
    int tier = NONE;
    int cohort = NONE;
    Enumeration<String> values = request.getHeaders("baggage");
    int budget = MAX_BAGGAGE_LENGTH;
    for (int n = 0; values != null && values.hasMoreElements() && n < MAX_BAGGAGE_HEADERS; n++) {
      String v = values.nextElement();
      if (v == null) {
        continue;
      }
      int end = Math.min(v.length(), budget);
      budget -= end;
      int start = 0;
      while (start < end) {
        int comma = v.indexOf(',', start);
        int memberEnd = comma < 0 || comma > end ? end : comma;
        int eq = v.indexOf('=', start);
        if (eq > start && eq < memberEnd) {
          String key = v.substring(start, eq).trim();
          int valueEnd = v.indexOf(';', eq); // properties follow ';'
          if (valueEnd < 0 || valueEnd > memberEnd) {
            valueEnd = memberEnd;
          }
          if (BAGGAGE_TIER.equals(key)) {
            int t = number(v, eq + 1, valueEnd, Priority.TIERS, BAGGAGE_TIER);
            tier = tier == NONE ? t : tier;
          } else if (BAGGAGE_COHORT.equals(key)) {
            int c = number(v, eq + 1, valueEnd, Priority.COHORTS, BAGGAGE_COHORT);
            cohort = cohort == NONE ? c : cohort;
          }
        }
        start = memberEnd + 1;
      }
      if (budget <= 0) {
        debug("baggage", "longer than " + MAX_BAGGAGE_LENGTH + " characters; rest ignored");
        break;
      }
    }
    return ((long) tier << 32) | (cohort & 0xffffffffL);
  }

  /** A small decimal in 0..bound-1 between optional white space, or NONE. */
  private static int number(String s, int from, int to, int bound, String what) {
    while (from < to && s.charAt(from) == ' ') {
      from++;
    }
    while (to > from && s.charAt(to - 1) == ' ') {
      to--;
    }
    if (from == to) {
      debug(what, "empty baggage value");
      return NONE;
    }
    int value = 0;
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9' || (value = value * 10 + (c - '0')) >= bound) {
        debug(what, "baggage value is not a number in 0.." + (bound - 1));
        return NONE;
      }
    }
    return value;
  }

  private static void debug(String header, String why) {
    if (LOG.isLoggable(Level.FINE)) {
      LOG.fine("ignoring priority header " + header + ": " + why);
    }
  }

  /** Settings for a {@link HeaderPriorityResolver}; invalid values throw naming the setting. */
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
     * explicitly. Default {@value #DEFAULT_USER_KEY_HEADER}, as in the Ring middleware.
     */
    public Builder userKeyHeader(String name) {
      this.userKeyHeader = headerName("userKeyHeader", name);
      return this;
    }

    /** Requests from {@code caller} (the caller header's value) get {@code tier} by default. */
    public Builder callerTier(String caller, int tier) {
      if (caller == null || caller.isBlank()) {
        throw new IllegalArgumentException("callerTier: caller must not be blank");
      }
      checkTier("callerTier", tier);
      callerTiers.put(caller.trim(), tier);
      return this;
    }

    /** The tier of a request that says nothing. Default {@value #DEFAULT_TIER}. */
    public Builder defaultTier(int tier) {
      this.defaultTier = checkTier("defaultTier", tier);
      return this;
    }

    /** The longest header value looked at; longer ones are ignored. Default 256, 1..8192. */
    public Builder maxHeaderLength(int length) {
      if (length < 1 || length > MAX_BAGGAGE_LENGTH) {
        throw new IllegalArgumentException(
            "maxHeaderLength must be in 1.." + MAX_BAGGAGE_LENGTH + ", was " + length);
      }
      this.maxHeaderLength = length;
      return this;
    }

    /** Whether W3C baggage is read. Default true. */
    public Builder readBaggage(boolean read) {
      this.readBaggage = read;
      return this;
    }

    /** How user keys map to cohorts. Default {@link Cohorts#rotating()}. */
    public Builder cohorts(Cohorts cohorts) {
      if (cohorts == null) {
        throw new IllegalArgumentException("cohorts must not be null");
      }
      this.cohorts = cohorts;
      return this;
    }

    public HeaderPriorityResolver build() {
      return new HeaderPriorityResolver(this);
    }

    private static int checkTier(String setting, int tier) {
      if (tier < 0 || tier >= Priority.TIERS) {
        throw new IllegalArgumentException(
            setting + " must be a tier in 0.." + (Priority.TIERS - 1) + ", was " + tier);
      }
      return tier;
    }

    private static String headerName(String setting, String name) {
      if (name == null || name.isBlank() || !name.chars().allMatch(c -> c > 32 && c < 127
          && "()<>@,;:\\\"/[]?={}".indexOf(c) < 0)) {
        throw new IllegalArgumentException(setting + " must be an HTTP header name, was '"
            + name + "'");
      }
      return name;
    }
  }
}
