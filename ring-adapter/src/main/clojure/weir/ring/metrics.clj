(ns weir.ring.metrics
  "Binds shedders to a Micrometer registry. weir.ring loads this namespace only for its
  :registry option, so micrometer-core stays an optional dependency."
  (:import (dev.weir LoadShedder)
           (dev.weir.micrometer WeirMetrics)
           (io.micrometer.core.instrument Meter MeterRegistry Tags)))

(set! *warn-on-reflection* true)

(defn bind!
  "Publishes `shedder`'s weir.* meters to `registry`."
  [^MeterRegistry registry ^LoadShedder shedder]
  (.bindTo (WeirMetrics. shedder) registry))

(defn unbind!
  "Removes `shedder`'s weir.* meters from `registry`."
  [^MeterRegistry registry ^LoadShedder shedder]
  (WeirMetrics/remove registry (.name shedder) (Tags/empty)))

(defn bound-name
  "The shedder name under which `registry` already has weir meters, `name` or a route of it
  (`name`/route), or nil."
  [^MeterRegistry registry ^String name]
  (let [prefix (str name "/")]
    (some (fn [^Meter m]
            (let [v (.getTag (.getId m) "shedder")]
              (when (and v (or (= v name) (.startsWith v prefix))) v)))
          (.getMeters registry))))
