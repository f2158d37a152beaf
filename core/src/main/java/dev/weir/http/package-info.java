/**
 * The HTTP contract every Weir adapter implements the same way: the servlet filter
 * ({@code dev.weir.servlet.WeirFilter}), the Jetty 12 core handler ({@code
 * dev.weir.jetty.WeirHandler}) and the Ring middleware ({@code weir.ring}) all delegate here, so a
 * request gets the same priority and the same answers through any of them.
 *
 * <ul>
 *   <li>{@link dev.weir.http.PriorityHeaders} reads a request's priority from its headers and W3C
 *       baggage, through the adapter's {@link dev.weir.http.HeaderLookup}: in one bounded pass,
 *       ignoring any bad value as absent, never throwing.
 *   <li>{@link dev.weir.http.HttpAnswers} holds the adapter's own answers, one {@link
 *       dev.weir.http.HttpAnswer} for each {@link dev.weir.RejectReason} and one for a missed
 *       deadline (status, {@code Retry-After}, {@code X-Weir-Outcome}, body in a {@link
 *       dev.weir.http.RejectionFormat}), and the {@link dev.weir.Outcome} an application's status
 *       means ({@link dev.weir.http.HttpAnswers#outcomeOf}).
 *   <li>{@link dev.weir.http.RouteKeys} names per-route shedders from a bounded vocabulary.
 * </ul>
 *
 * <p>The table {@code contract-cases.tsv} beside this package's tests states the contract case by
 * case; the core test and each adapter's test run it.
 */
package dev.weir.http;
