/**
 * The Jakarta Servlet 6 adapter: {@link dev.weir.servlet.WeirFilter} admits each request through
 * the {@link dev.weir.LoadShedder} of its route, reads its priority from headers and baggage
 * through the core contract in {@code dev.weir.http}, and answers rejections as that contract says.
 *
 * <p>Public: {@link dev.weir.servlet.WeirFilter} and its builder, {@link
 * dev.weir.servlet.InitParams} (the init-params a {@code web.xml} may set), {@link
 * dev.weir.servlet.PriorityResolver} for a custom priority, {@link
 * dev.weir.servlet.WeirStatusServlet} (a JSON view of every shedder), and {@link
 * dev.weir.servlet.PriorityPropagation} with {@link dev.weir.servlet.JettyPriorityPropagation}
 * (carry a request's priority onto the calls it makes). Everything else is package-private:
 * {@code RouteKeys} (the route of a servlet request, for core's {@code dev.weir.http.RouteShedders}:
 * one shedder per route, from a bounded vocabulary of keys), {@code Exchange} (one request's way
 * through the shedder), {@code BodyGuard} (the bound on reading an admitted request's body) and,
 * in bounded-response-time mode only, {@code BoundedRun}, {@code BufferedResponse} and {@code
 * CappedBuffer}.
 */
package dev.weir.servlet;
