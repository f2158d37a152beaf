/**
 * Weir for any Jetty 12 application, as a core {@link org.eclipse.jetty.server.Handler.Wrapper}:
 * {@link dev.weir.jetty.WeirHandler}. It implements the adapters' HTTP contract ({@link
 * dev.weir.http}) like the servlet filter, without the servlet API: queued requests hold no
 * thread, permits are released when the application completes its {@link
 * org.eclipse.jetty.util.Callback}, and a client that resets its HTTP/2 stream leaves the queue at
 * once.
 */
package dev.weir.jetty;
