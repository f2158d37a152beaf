package dev.weir.example.boot;

import dev.weir.servlet.WeirFilter;
import dev.weir.servlet.WeirStatusServlet;
import jakarta.servlet.DispatcherType;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A Spring Boot service as a new user writes it: one blocking endpoint, Boot's defaults for the
 * server's threads, and {@code new WeirFilter()} with zero configuration (unless {@code
 * --guard=none}). {@code GET /work} holds its thread for 500 ms, as a JDBC call or a blocking
 * client would, so the server's threads bound its capacity: Boot's Tomcat runs 200, its Undertow
 * 8 per I/O thread.
 */
@SpringBootApplication
@RestController
public class App {
  public static void main(String[] args) {
    SpringApplication.run(App.class, args);
  }

  @GetMapping("/work")
  public String work() throws InterruptedException {
    Thread.sleep(500);
    return "ok";
  }

  /** Weir before every other filter, for the REQUEST and ASYNC dispatches, as its README says. */
  @Bean
  @ConditionalOnProperty(name = "guard", havingValue = "weir", matchIfMissing = true)
  public FilterRegistrationBean<WeirFilter> weir() {
    FilterRegistrationBean<WeirFilter> weir = new FilterRegistrationBean<>(new WeirFilter());
    weir.setAsyncSupported(true);
    weir.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ASYNC);
    weir.addUrlPatterns("/*");
    weir.setOrder(Ordered.HIGHEST_PRECEDENCE); // shed before other filters spend anything
    return weir;
  }

  /** The filter's shedders as JSON at /weir/status (and live, with ?view=html). */
  @Bean
  @ConditionalOnProperty(name = "guard", havingValue = "weir", matchIfMissing = true)
  public ServletRegistrationBean<WeirStatusServlet> weirStatus() {
    return new ServletRegistrationBean<>(new WeirStatusServlet(), "/weir/status");
  }
}
