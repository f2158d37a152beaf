(ns weir.ring.status
  "Weir's status view as a Ring handler: dev.weir.http.StatusPage's JSON, and its live HTML
  page for a query with view=html, exactly as the servlet filter's WeirStatusServlet serves
  them. weir.ring/status-handler builds one for a wrapped handler."
  (:import (dev.weir LoadShedder)
           (dev.weir.http StatusPage)
           (java.io ByteArrayInputStream)
           (java.util LinkedHashMap Map)))

(set! *warn-on-reflection* true)

(defn- named
  "{name shedder} in a stable order: a string route key names its shedder; nil (no
  :route-key-fn), the overflow shedder's keyword and any other key use the shedder's own name
  unless the key is not a keyword, then its str."
  ^Map [shedders]
  (let [m (LinkedHashMap.)]
    (doseq [[k ^LoadShedder s] (sort-by (comp str key) shedders)]
      (.put m (cond (string? k) k
                    (or (nil? k) (keyword? k)) (.name s)
                    :else (str k))
            s))
    m))

(defn- response [request shedders-fn]
  (if (StatusPage/wantsHtml (:query-string request))
    {:status 200
     :headers {"Content-Type" StatusPage/HTML_CONTENT_TYPE "Cache-Control" "no-store"}
     :body (ByteArrayInputStream. (StatusPage/html))}
    {:status 200
     :headers {"Content-Type" StatusPage/JSON_CONTENT_TYPE "Cache-Control" "no-store"}
     :body (StatusPage/json (named (shedders-fn)))}))

(defn handler
  "A Ring handler, sync and async arities, serving the status of the shedders that
  `shedders-fn` (no arguments) returns as {route-key LoadShedder}."
  [shedders-fn]
  (fn
    ([request] (response request shedders-fn))
    ([request respond raise]
     (let [r (try (response request shedders-fn)
                  (catch Throwable t (raise t) nil))]
       (when r (respond r))))))
