package dev.weir.jetty;

import dev.weir.Permit;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.eclipse.jetty.server.Request;

/**
 * The request the application sees once admitted: Jetty's request, with {@link
 * WeirHandler#PERMIT_ATTRIBUTE} answered from this wrapper rather than stored in the request's
 * attributes, which would create Jetty's attribute map (about 220 bytes) for a request that has
 * none. The attribute is read-only: setting or removing it has no effect on what this answers.
 */
final class AdmittedRequest extends Request.Wrapper {
  private final Permit permit;
  /** Whether the application was handed the permit: then it is never recycled. */
  private volatile boolean permitRead;

  AdmittedRequest(Request request, Permit permit) {
    super(request);
    this.permit = permit;
  }

  /** Whether the application may hold the permit, having read it as an attribute. */
  boolean permitRead() {
    return permitRead;
  }

  @Override
  public Object getAttribute(String name) {
    if (WeirHandler.PERMIT_ATTRIBUTE.equals(name)) {
      permitRead = true;
      return permit;
    }
    return super.getAttribute(name);
  }

  @Override
  public Set<String> getAttributeNameSet() {
    Set<String> names = new HashSet<>(super.getAttributeNameSet());
    names.add(WeirHandler.PERMIT_ATTRIBUTE);
    return names;
  }

  @Override
  public Map<String, Object> asAttributeMap() {
    Map<String, Object> map = new java.util.HashMap<>(super.asAttributeMap());
    permitRead = true;
    map.put(WeirHandler.PERMIT_ATTRIBUTE, permit);
    return map;
  }
}
