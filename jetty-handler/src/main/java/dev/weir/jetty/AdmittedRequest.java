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

  AdmittedRequest(Request request, Permit permit) {
    super(request);
    this.permit = permit;
  }

  @Override
  public Object getAttribute(String name) {
    return WeirHandler.PERMIT_ATTRIBUTE.equals(name) ? permit : super.getAttribute(name);
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
    map.put(WeirHandler.PERMIT_ATTRIBUTE, permit);
    return map;
  }
}
