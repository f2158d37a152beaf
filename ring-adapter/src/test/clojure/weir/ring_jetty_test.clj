(ns weir.ring-jetty-test
  "End to end: the middleware on Ring's real run-jetty over loopback, driven by
  java.net.http.HttpClient and raw sockets. Includes the two experiments of 'Load
  Shedding in Clojure' (a burst far above capacity; a degraded dependency), scaled down
  to seconds."
  (:require [clojure.string :as str]
            [clojure.test :refer [deftest is testing]]
            [ring.adapter.jetty :as jetty]
            [weir.ring :as wr])
  (:import (dev.weir LoadShedder)
           (dev.weir.control Rejectors)
           (java.io InputStream OutputStream)
           (java.net Socket URI)
           (java.net.http HttpClient HttpClient$Version HttpRequest HttpResponse
                          HttpResponse$BodyHandlers)
           (java.nio.charset StandardCharsets)
           (java.time Duration)
           (java.util.concurrent ConcurrentLinkedQueue CountDownLatch TimeUnit)
           (java.util.concurrent.atomic AtomicLong)
           (org.eclipse.jetty.server Server ServerConnector)))

(set! *warn-on-reflection* true)

;; ----------------------------------------------------------------------------------- harness

(defn- start!
  "Runs `handler` on run-jetty at 127.0.0.1 on a free port; returns the base URL and server."
  [handler jetty-options]
  (let [^Server server (jetty/run-jetty handler (merge {:host "127.0.0.1" :port 0 :join? false}
                                                       jetty-options))
        port (.getLocalPort ^ServerConnector (first (.getConnectors server)))]
    {:server server :base (str "http://127.0.0.1:" port) :port port}))

(defn- stop! [{:keys [^Server server]}]
  (.stop server))

(defmacro ^:private with-server [[sym handler jetty-options] & body]
  `(let [~sym (start! ~handler ~jetty-options)]
     (try ~@body (finally (stop! ~sym)))))

(def ^:private ^HttpClient client
  (-> (HttpClient/newBuilder)
      (.version HttpClient$Version/HTTP_1_1)
      (.connectTimeout (Duration/ofSeconds 5))
      (.build)))

(defn- http-get
  "GETs `url`; returns {:status :ms :outcome :body}, or {:status :error :ms ...} if no
  answer came within 15 s (far beyond every bound under test, so it shows as a failure). A
  request that names no tier is sent as tier 3, cohort 64, so that which of two requests a full
  queue evicts does not depend on random cohorts."
  [url & {:keys [headers]}]
  (let [b (-> (HttpRequest/newBuilder (URI/create url)) (.timeout (Duration/ofSeconds 15)))
        headers (if (some #(= "x-weir-tier" (str/lower-case (key %))) headers)
                  headers
                  (assoc headers "x-weir-tier" "3:64"))
        _ (doseq [[k v] headers] (.header b k v))
        start (System/nanoTime)]
    (try
      (let [^HttpResponse r (.send client (.build b) (HttpResponse$BodyHandlers/ofString))]
        {:status (.statusCode r)
         :ms (/ (- (System/nanoTime) start) 1e6)
         :outcome (.orElse (.firstValue (.headers r) "x-weir-outcome") nil)
         :retry-after (.orElse (.firstValue (.headers r) "retry-after") nil)
         :body (.body r)})
      (catch Exception e
        {:status :error :error (str e) :ms (/ (- (System/nanoTime) start) 1e6)}))))

(defn- drive!
  "Runs `threads` client loops, each GETting (url-fn) back to back until `ms` pass.
  Returns every result, each with :at (ms since the start) and :url."
  [threads ms url-fn]
  (let [results (ConcurrentLinkedQueue.)
        t0 (System/nanoTime)
        end (+ t0 (* (long ms) 1000000))
        done (CountDownLatch. threads)]
    (dotimes [_ threads]
      (doto (Thread. (fn []
                       (try
                         (while (< (System/nanoTime) end)
                           (let [url (url-fn)
                                 at (/ (- (System/nanoTime) t0) 1e6)]
                             (.add results (assoc (http-get url) :at at :url url))))
                         (finally (.countDown done)))))
        (.setDaemon true)
        (.start)))
    (is (.await done (+ ms 30000) TimeUnit/MILLISECONDS) "the clients finished")
    (vec results)))

(defn- eventually
  "Polls `f` until it returns truthy or `ms` pass; returns its last value."
  [ms f]
  (let [end (+ (System/nanoTime) (* (long ms) 1000000))]
    (loop []
      (or (f)
          (if (< (System/nanoTime) end)
            (do (Thread/sleep 10) (recur))
            (f))))))

(defn- idle? [wrapped]
  (every? (fn [^LoadShedder s] (and (zero? (.inflight s)) (zero? (.queued s))))
          (vals (wr/shedders wrapped))))

(defn- percentile [xs p]
  (let [v (vec (sort xs))]
    (if (empty? v) 0.0 (nth v (min (dec (count v)) (int (* p (count v))))))))

(defn- summary [results]
  (let [ms (map :ms results)]
    {:requests (count results)
     :statuses (frequencies (map :status results))
     :p50-ms (Math/round (double (percentile ms 0.5)))
     :p99-ms (Math/round (double (percentile ms 0.99)))
     :max-ms (Math/round (double (reduce max 0.0 ms)))}))

(defn- recovered-ms
  "How long until `n` GETs of `url` in a row answer 200, polling for at most `ms`; nil if
  they never do."
  [url n ms]
  (let [start (System/nanoTime)
        end (+ start (* (long ms) 1000000))]
    (loop [streak 0]
      (cond
        (>= streak n) (/ (- (System/nanoTime) start) 1e6)
        (> (System/nanoTime) end) nil
        :else (recur (if (= 200 (:status (http-get url))) (inc streak) 0))))))

(defn- work!
  "The handler's own work: `ms` of waiting, as on a downstream call."
  [ms]
  (Thread/sleep (long ms)))

;; ---------------------------------------------------------------------------------- basics

(deftest async-server-serves-and-sheds-with-retry-after
  (let [release (CountDownLatch. 1)
        h (wr/wrap-load-shedding (fn [{:keys [uri]}]
                                   (when (= uri "/block") (.await release))
                                   {:status 200 :headers {"Content-Type" "text/plain"}
                                    :body (.getName (Thread/currentThread))})
                                 {:limit 1 :queue-capacity 1 :request-timeout-ms 2000
                                  :rejector #(Rejectors/none) :name "basic"})]
    (try
      (with-server [s h {:async? true}]
        (let [ok (http-get (str (:base s) "/"))]
          (is (= 200 (:status ok)))
          (is (str/starts-with? (:body ok) "weir-ring-worker-") "ran on the shared worker pool"))
        (let [blocked (future (http-get (str (:base s) "/block")))
              _ (is (eventually 5000 #(= 1 (.inflight ^LoadShedder (first (vals (wr/shedders h)))))))
              queued (future (http-get (str (:base s) "/")))
              _ (is (eventually 5000 #(= 1 (.queued ^LoadShedder (first (vals (wr/shedders h)))))))
              full (http-get (str (:base s) "/"))]
          (is (= 429 (:status full)))
          (is (= "1" (:retry-after full)))
          (is (= "queue-full" (:outcome full)))
          (let [q @queued]
            (is (= 503 (:status q)))
            (is (= "queue-timeout" (:outcome q))))
          (.countDown release)
          (is (= 200 (:status @blocked))))
        (is (eventually 5000 #(idle? h))))
      (finally (.countDown release) (wr/close! h)))))

;; ------------------------------------------------------------------- experiment 1: the burst

(deftest experiment-1-burst-far-above-capacity
  ;; Capacity: 8 workers x 200 ms = 40 requests/s. The burst: 48 clients back to back for
  ;; 3 s. Bound: the 1 s request timeout (the queue timeout is 400 ms).
  (let [bound-ms 1000
        margin-ms 1000
        h (wr/wrap-load-shedding (fn [_] (work! 200) {:status 200 :body "ok"})
                                 {:limit 8 :queue-capacity 16 :request-timeout-ms bound-ms
                                  :queue-timeout-ms 400 :rejector #(Rejectors/none)
                                  :name "burst"})]
    (try
      (with-server [s h {:async? true}]
        (let [url (str (:base s) "/work")
              results (drive! 48 3000 (constantly url))
              {:keys [statuses max-ms] :as sum} (summary results)
              ok (get statuses 200 0)
              recovery (recovered-ms url 5 5000)]
          (println "experiment 1 (burst, 48 clients x 3 s, capacity 40/s, bound 1000 ms):"
                   (assoc sum :recovered-ms (when recovery (Math/round (double recovery)))))
          (is (empty? (remove #{200 429 503} (keys statuses))) (str "only 200/429/503: " statuses))
          (is (< max-ms (+ bound-ms margin-ms)) "no client waited past the bound")
          (is (pos? (+ (get statuses 429 0) (get statuses 503 0))) "the surplus was shed")
          (is (>= ok 40) "the server kept doing useful work during the burst (capacity ~120)")
          (is (some? recovery) "after the burst, requests succeed again within 5 s")
          (is (every? #(= "1" (:retry-after %)) (filter #(#{429 503} (:status %)) results))))
        (is (eventually 5000 #(idle? h))))
      (finally (wr/close! h)))))

;; -------------------------------------------------------- experiment 2: degraded dependency

(deftest experiment-2-degraded-dependency-on-one-route
  ;; Two routes with their own shedders (limit 4 each). /slow's dependency goes from 100 ms
  ;; to 2 s, past the 800 ms bound, then back; /fast (10 ms) must not notice.
  (let [bound-ms 800
        margin-ms 1000
        slow-ms (atom 100)
        h (wr/wrap-load-shedding (fn [{:keys [uri]}]
                                   (work! (if (= uri "/slow") @slow-ms 10))
                                   {:status 200})
                                 {:route-key-fn :uri :limit 4 :queue-capacity 8
                                  :request-timeout-ms bound-ms :queue-timeout-ms 250
                                  :rejector #(Rejectors/none) :worker-threads 12
                                  :name "degraded"})]
    (try
      (with-server [s h {:async? true}]
        (let [fast (str (:base s) "/fast")
              slow (str (:base s) "/slow")
              n (atom 0)
              ;; Two of every three clients call /slow: it is the busier route.
              url-fn #(if (zero? (mod (swap! n inc) 3)) fast slow)
              phase (fn [ms] (drive! 9 ms url-fn))
              normal (phase 1000)
              _ (reset! slow-ms 2000)
              degraded (phase 3000)
              _ (reset! slow-ms 100)
              restored (recovered-ms slow 3 6000)
              by (fn [results url] (filter #(= url (:url %)) results))
              fast-degraded (summary (by degraded fast))
              slow-degraded (summary (by degraded slow))]
          (println "experiment 2 (degraded dependency, bound 800 ms): normal"
                   {:fast (summary (by normal fast)) :slow (summary (by normal slow))}
                   "degraded" {:fast fast-degraded :slow slow-degraded}
                   "slow route recovered after" (when restored (Math/round (double restored))) "ms")
          (is (= {200 (count (by normal fast))} (:statuses (summary (by normal fast)))))
          (is (every? #(< (:ms %) (+ bound-ms margin-ms)) (concat normal degraded))
              "every answer, on either route, came within the bound")
          (testing "the slow route is cut off at the deadline, not left hanging"
            (is (zero? (get-in slow-degraded [:statuses 200] 0)))
            (is (pos? (get-in slow-degraded [:statuses 503] 0)))
            (is (empty? (remove #{429 503} (keys (:statuses slow-degraded))))))
          (testing "the fast route keeps working"
            (let [{:keys [requests statuses p50-ms]} fast-degraded]
              (is (>= requests 10))
              (is (= requests (get statuses 200 0)) (str statuses))
              (is (< p50-ms 300))))
          (is (some? restored) "the slow route recovers once its dependency does"))
        (is (eventually 8000 #(idle? h))))
      (finally (wr/close! h)))))

;; ----------------------------------------------------------------------------------- chaos

(defn- raw-request!
  "Writes `request` (raw bytes) to a fresh connection. With `read?`, returns the status
  line; otherwise closes at once, a client that went away."
  [port ^bytes request read?]
  (with-open [sock (Socket. "127.0.0.1" (int port))]
    (.setSoTimeout sock 15000)
    (let [^OutputStream out (.getOutputStream sock)]
      (.write out request)
      (.flush out)
      (when read?
        (let [^InputStream in (.getInputStream sock)
              buf (byte-array 64)
              n (.read in buf)]
          (when (pos? n)
            (first (str/split-lines (String. buf 0 n StandardCharsets/ISO_8859_1)))))))))

(defn- get-bytes ^bytes [path & header-lines]
  (.getBytes (str "GET " path " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                  (apply str (map #(str % "\r\n") header-lines)) "\r\n")
             StandardCharsets/ISO_8859_1))

(defn- chaos-handler
  "A handler that misbehaves by route: throws, answers nil, overruns the deadline."
  [{:keys [uri]}]
  (case uri
    "/throw" (throw (RuntimeException. "chaos"))
    "/nil" nil
    "/late" (do (work! 600) {:status 200})
    {:status 200}))

(defn- async-chaos-handler
  "An async handler that misbehaves by route: throws before calling back, answers twice,
  raises after answering, answers late from another thread, never answers."
  [{:keys [uri]} respond raise]
  (case uri
    "/throw" (throw (RuntimeException. "chaos"))
    "/twice" (do (respond {:status 200}) (respond {:status 201}) (raise (RuntimeException.)))
    "/late" (future (work! 600) (respond {:status 200}))
    "/never" nil
    (respond {:status 200})))

(defn- counting
  "`handler`, counting the requests that reach it in `arrivals`."
  [^AtomicLong arrivals handler]
  (fn
    ([request] (.incrementAndGet arrivals) (handler request))
    ([request respond raise] (.incrementAndGet arrivals) (handler request respond raise))))

(deftest chaos-leaves-no-permit-behind
  (doseq [[mode handler options paths]
          [[:sync-handler chaos-handler {} ["/ok" "/throw" "/nil" "/late"]]
           [:async-handler async-chaos-handler {:handler-async? true}
            ["/ok" "/throw" "/twice" "/late" "/never"]]]]
    (testing mode
      (let [arrivals (AtomicLong.)
            h (wr/wrap-load-shedding handler (merge {:limit 4 :queue-capacity 4
                                                     :request-timeout-ms 300
                                                     :rejector #(Rejectors/none)
                                                     :worker-threads 8 :name (name mode)}
                                                    options))]
        (try
          (with-server [s (counting arrivals h) {:async? true}]
            (let [paths (vec paths)
                  results (drive! 8 2000 #(str (:base s) (rand-nth paths)))
                  disconnects (doall (for [i (range 40)]
                                       (future (raw-request! (:port s)
                                                             (get-bytes (nth paths (mod i (count paths))))
                                                             false))))]
              (run! deref disconnects)
              ;; The server may still be reading requests whose clients already left: let
              ;; it see them all (Jetty could drop some unread, so this is not asserted).
              (eventually 5000 #(>= (.get arrivals) (+ (count results) (count disconnects))))
              (println "chaos" mode (summary results))
              (is (empty? (filter #(= :error (:status %)) results)) "every request got an answer")
              (is (every? #(< (:ms %) 1500) results) "within the 300 ms bound plus margin")
              (doseq [[path rs] (group-by :url results)
                      :let [statuses (set (map :status rs))]]
                (is (every? #{200 429 503 500 201} statuses) (str path statuses)))
              (is (eventually 5000 #(idle? h)) "every permit came back")
              (is (some? (recovered-ms (str (:base s) "/ok") 3 5000)) "and the server still serves")))
          (finally (wr/close! h)))))))

;; ---------------------------------------------------------------------- hostile priorities

(deftest hostile-priority-headers-over-http-are-served
  (let [h (wr/wrap-load-shedding (fn [_] {:status 200}) {:limit 4 :name "hostile"})
        digits (apply str (repeat 6000 "7"))]
    (try
      (with-server [s h {:async? true}]
        (doseq [headers [{"x-weir-tier" digits}
                         {"x-weir-tier" "-3:-4"}
                         {"x-weir-tier" "5:999999999999999999999"}
                         {"baggage" (str "weir-tier=" digits ",weir-cohort=;;,=,")}
                         {"x-weir-user" digits}
                         {"x-weir-tier" "1" "baggage" "weir-tier=0;weir-cohort=1"}]]
          (is (= 200 (:status (http-get (str (:base s) "/") :headers headers))) (pr-str (keys headers))))
        (testing "raw bytes: non-ASCII, repeated and empty headers"
          (is (= "HTTP/1.1 200 OK"
                 (raw-request! (:port s) (get-bytes "/" "x-weir-tier: \u00ff\u00fe" "x-weir-tier: 2"
                                                    "baggage:" "x-weir-user: \u00e9") true)))))
      (finally (wr/close! h)))))

;; ------------------------------------------------------------------------------ sync server

(deftest sync-server-bounds-response-time
  ;; Ring's blocking adapter: the server thread waits, but never past the deadline.
  (let [bound-ms 500
        h (wr/wrap-load-shedding (fn [{:keys [uri]}]
                                   (when (= uri "/slow") (work! 2000))
                                   {:status 200 :body "ok"})
                                 {:limit 4 :queue-capacity 4 :request-timeout-ms bound-ms
                                  :rejector #(Rejectors/none) :worker-threads 8
                                  :name "sync-server"})]
    (try
      (with-server [s h {}]
        (is (= 200 (:status (http-get (str (:base s) "/")))))
        (let [results (drive! 12 2000 (constantly (str (:base s) "/slow")))
              {:keys [statuses max-ms] :as sum} (summary results)]
          (println "sync server (12 clients on a 2 s handler, bound 500 ms):" sum)
          (is (empty? (remove #{429 503} (keys statuses))) (str statuses))
          (is (< max-ms (+ bound-ms 1000)))
          (is (pos? (get statuses 503 0))))
        (is (some? (recovered-ms (str (:base s) "/") 1 5000))
            "fast requests are served again once the slow ones let go")
        (is (eventually 8000 #(idle? h))))
      (finally (wr/close! h)))))
