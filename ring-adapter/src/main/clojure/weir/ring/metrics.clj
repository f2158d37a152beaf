(ns weir.ring.metrics
  "Binds shedders to a Micrometer registry. weir.ring loads this namespace only for its
  :registry option, so micrometer-core stays an optional dependency."
  (:import (dev.weir LoadShedder)
           (dev.weir.micrometer WeirMetrics)
           (io.micrometer.core.instrument MeterRegistry)))

(set! *warn-on-reflection* true)

(defn bind!
  "Publishes `shedder`'s weir.* meters to `registry`."
  [^MeterRegistry registry ^LoadShedder shedder]
  (.bindTo (WeirMetrics. shedder) registry))

(defn unbind!
  "Removes `shedder`'s weir.* meters from `registry`."
  [^MeterRegistry registry ^LoadShedder shedder]
  (WeirMetrics/remove registry (.name shedder)))
