(ns weir.example.overload
  "The server side of examples/ring/overload.sh: a Ring handler in front of a simulated
  downstream pool (8 connections x 20 ms mean lognormal service time: 400 requests/s),
  protected by weir.ring, on run-jetty with its default thread pool (50 threads).

  Usage: clojure.main -m weir.example.overload PORT MODE [:max-threads N] [:server-threads N]
    MODE sync (run-jetty's default) or async. PORT 0 picks a free port. :max-threads is
    run-jetty's (default 50); :server-threads weir.ring's (default :max-threads, else 50).
  Prints `listening PORT` once serving; stops when stdin closes."
  (:require [ring.adapter.jetty :as jetty]
            [weir.ring :as wr])
  (:import (java.util Random)
           (java.util.concurrent Semaphore TimeUnit)
           (org.eclipse.jetty.server Server ServerConnector)))

(set! *warn-on-reflection* true)

(defn downstream
  "A pool of `connections` with a fair wait and a lognormal service time (sigma 0.5) of
  `mean-ms`, as dev.weir.examples.Downstream: returns a no-arg fn making one call."
  [connections mean-ms seed]
  (let [pool (Semaphore. (int connections) true)
        random (Random. (long seed))
        mean-ns (* 1e6 (double mean-ms))]
    (fn []
      (let [g (.nextGaussian random)
            service (max 1 (Math/round (* mean-ns (Math/exp (- (* 0.5 g) 0.125)))))]
        (.acquire pool)
        (try (.sleep TimeUnit/NANOSECONDS service)
             (finally (.release pool)))))))

(defn -main [port mode & more]
  (let [call (downstream 8 20 1)
        app (fn [_] (call) {:status 200 :headers {"Content-Type" "text/plain"} :body "ok\n"})
        extra (into {} (map (fn [[k v]] [(keyword (subs k 1)) (Long/parseLong v)]) (partition 2 more)))
        threads (:max-threads extra)
        seats (or (:server-threads extra) threads)
        shed (wr/wrap-load-shedding app (cond-> {:request-timeout-ms 1000 :name "overload"}
                                          seats (assoc :server-threads seats)))
        ^Server server (jetty/run-jetty shed (cond-> {:host "127.0.0.1" :port (Integer/parseInt port)
                                                      :join? false :async? (= mode "async")}
                                               threads (assoc :max-threads threads)))
        bound (.getLocalPort ^ServerConnector (first (.getConnectors server)))]
    (println "listening" bound)
    (flush)
    ;; With WEIR_TRACE set, every 250 ms, each shedder's state on stderr (the script keeps it beside the run).
    (when (System/getenv "WEIR_TRACE")
      (doto (Thread. ^Runnable (fn []
                                 (try
                                   (loop []
                                     (Thread/sleep 250)
                                     (doseq [[_ s] (wr/shedders shed)]
                                       (binding [*out* *err*] (println (System/currentTimeMillis) (str s) "ratio" (.rejectionRatio ^dev.weir.LoadShedder s))))
                                     (recur))
                                   (catch InterruptedException _))))
        (.setDaemon true) (.start)))
    ;; Stop when the driving script closes our stdin.
    (while (not= -1 (.read System/in)))
    (.stop server)
    (wr/close! shed)
    (shutdown-agents)))
