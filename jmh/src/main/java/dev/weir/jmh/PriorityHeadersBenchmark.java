package dev.weir.jmh;

import dev.weir.http.HeaderFields;
import dev.weir.http.HeaderLookup;
import dev.weir.http.PriorityHeaders;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Reading a request's priority from Jetty's header fields, the two ways the adapters read it: one
 * {@code get(name)} per header name the contract reads ({@code lookups}, what the Servlet API's
 * {@code getHeader} does on Jetty), or one pass over the fields ({@code onePass}, {@link
 * PriorityHeaders#priorityFromFields}, what the Jetty handler and the filter on Jetty do). For a
 * request with no priority header (a load generator's three headers, or a browser's ten) and one
 * with a tier and cohort.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Threads(1)
@State(Scope.Benchmark)
public class PriorityHeadersBenchmark {
  private static final PriorityHeaders DEFAULTS = PriorityHeaders.defaults();
  private static final HeaderLookup<HttpFields> LOOKUP = HttpFields::get;
  private static final HeaderFields<HttpFields> FIELDS = new HeaderFields<HttpFields>() {
    @Override
    public int size(HttpFields fields) {
      return fields.size();
    }

    @Override
    public String name(HttpFields fields, int index) {
      return fields.getField(index).getName();
    }

    @Override
    public String value(HttpFields fields, int index) {
      return fields.getField(index).getValue();
    }
  };

  /** {@code bench}: Host, User-Agent, Accept; {@code browser}: ten headers; {@code tiered}: bench's with a tier. */
  @Param({"bench", "browser", "tiered"})
  String request = "bench";

  HttpFields fields;

  @Setup
  public void setup() {
    HttpFields.Mutable f = HttpFields.build()
        .put(HttpHeader.HOST, "127.0.0.1:8080")
        .put(HttpHeader.USER_AGENT, "bench")
        .put(HttpHeader.ACCEPT, "*/*");
    switch (request) {
      case "bench":
        break;
      case "browser":
        f.put(HttpHeader.ACCEPT_ENCODING, "gzip, deflate, br")
            .put(HttpHeader.ACCEPT_LANGUAGE, "en-GB,en;q=0.9")
            .put(HttpHeader.CONNECTION, "keep-alive")
            .put(HttpHeader.COOKIE, "session=0123456789abcdef")
            .put(HttpHeader.REFERER, "https://example.com/")
            .put("Sec-Fetch-Mode", "navigate")
            .put(HttpHeader.CACHE_CONTROL, "max-age=0");
        break;
      case "tiered":
        f.put("X-Weir-Tier", "1:42");
        break;
      default:
        throw new IllegalArgumentException("request must be bench, browser or tiered");
    }
    fields = f.asImmutable();
  }

  @Benchmark
  public int lookups() {
    return DEFAULTS.priority(fields, LOOKUP);
  }

  @Benchmark
  public int onePass() {
    return DEFAULTS.priorityFromFields(fields, FIELDS);
  }
}
