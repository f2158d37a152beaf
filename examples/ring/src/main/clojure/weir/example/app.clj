(ns weir.example.app
  "A small Ring app on run-jetty, protected by weir.ring.

    GET /            a fast answer
    GET /work?ms=N   N ms of work (default 200, at most 5000): try it past the 1 s bound
    GET /stats       the shedders' state; not shed, so it answers even under overload

  Run:  examples/ring/run.sh [port]     (port 0 picks a free one; default 8080)
  Load: priority comes from x-weir-tier: 0 is the most important, 5 the least."
  (:require [ring.adapter.jetty :as jetty]
            [weir.ring :as wr])
  (:import (dev.weir LoadShedder)
           (org.eclipse.jetty.server Server ServerConnector)))

(defn- text [status body]
  {:status status :headers {"Content-Type" "text/plain; charset=utf-8"} :body body})

(defn- query-ms [query-string]
  (or (some->> query-string (re-find #"(?:^|&)ms=(\d{1,6})(?:&|$)") second Long/parseLong)
      200))

(defn app
  "The application: synchronous handlers, unaware of load shedding."
  [{:keys [uri query-string]}]
  (case uri
    "/" (text 200 "hello from a Weir-protected Ring app\n")
    "/work" (let [ms (min 5000 (query-ms query-string))]
              (Thread/sleep (long ms))
              (text 200 (str "worked " ms " ms\n")))
    (text 404 "not found\n")))

(defn- stats [shedders]
  (text 200 (apply str (for [[route ^LoadShedder s] shedders]
                         (str (or route "-") " " (.snapshot s) "\n")))))

(defn handler
  "Wraps `app` with load shedding, one shedder per known route, and serves /stats beside
  it. Returns the wrapped handler too, to close it on shutdown."
  []
  (let [shed (wr/wrap-load-shedding app {:name "example"
                                         :request-timeout-ms 1000
                                         :route-key-fn (fn [{:keys [uri]}] (#{"/" "/work"} uri))
                                         :max-routes 2
                                         :worker-threads 64})]
    {:shed shed
     :handler (fn
                ([request]
                 (if (= "/stats" (:uri request)) (stats (wr/shedders shed)) (shed request)))
                ([request respond raise]
                 (if (= "/stats" (:uri request))
                   (respond (stats (wr/shedders shed)))
                   (shed request respond raise))))}))

(defn -main [& [port]]
  (let [{:keys [shed handler]} (handler)
        ^Server server (jetty/run-jetty handler {:host "127.0.0.1"
                                                 :port (Integer/parseInt (or port "8080"))
                                                 :async? true
                                                 :join? false})
        bound (.getLocalPort ^ServerConnector (first (.getConnectors server)))]
    (.addShutdownHook (Runtime/getRuntime)
                      (Thread. ^Runnable (fn [] (.stop server) (wr/close! shed))))
    (println (str "weir ring example listening on http://127.0.0.1:" bound "/"))
    (flush)
    (.join server)))
