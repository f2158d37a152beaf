(ns weir.ring-test
  "The middleware without a server: a shedder on virtual time makes timeouts and
  deadlines happen exactly when a test says so."
  (:require [clojure.string :as str]
            [clojure.test :refer [deftest is testing]]
            [weir.ring :as wr])
  (:import (dev.weir Cohorts ControlWindow LoadShedder Outcome Permit Priority Rejector Snapshot$Counter
                     VirtualTime)
           (dev.weir.control Limits Rejectors)
           (io.micrometer.core.instrument.simple SimpleMeterRegistry)
           (java.time Duration)
           (java.util.concurrent CompletableFuture CountDownLatch Executor RejectedExecutionException
                                 TimeUnit)))

(set! *warn-on-reflection* true)

(def ^:private wait-ms 10000)

(defn- virtual-shedder
  "A shedder on `vt` with a fixed limit, no rejector unless given, 1 s request timeout and
  300 ms queue timeout."
  ^LoadShedder [^VirtualTime vt & {:keys [limit capacity rejector] :or {limit 1 capacity 16}}]
  (-> (LoadShedder/builder)
      (.name "unit")
      (.timer vt)
      (.limit (reify java.util.function.Supplier (get [_] (Limits/fixed limit))))
      (.rejector (let [r (or rejector (Rejectors/none))] (reify java.util.function.Supplier (get [_] r))))
      (.requestTimeout (Duration/ofSeconds 1))
      (.queueTimeout (Duration/ofMillis 300))
      (.queueCapacity (int capacity))
      (.build)))

(defn- call
  "Calls the async arity and records every respond and raise. A request that names no priority
  gets tier 3, cohort 64: without one its cohort would be random, and which of two requests a full
  queue evicts would be a coin toss."
  [handler request]
  (let [answers (atom [])
        first-answer (promise)
        record (fn [kind] (fn [x] (swap! answers conj [kind x]) (deliver first-answer [kind x])))
        request (update request :headers #(merge {"x-weir-tier" "3:64"} %))]
    (handler request (record :respond) (record :raise))
    {:answers answers :first first-answer}))

(defn- answer
  "The first answer of a `call`, waiting for it."
  [{:keys [first]}]
  (deref first wait-ms [:none nil]))

(defn- eventually
  "Polls `f` until it returns truthy or `ms` pass; returns its last value."
  ([f] (eventually f wait-ms))
  ([f ms]
   (let [end (+ (System/nanoTime) (* ms 1000000))]
     (loop []
       (or (f)
           (if (< (System/nanoTime) end)
             (do (Thread/sleep 5) (recur))
             (f)))))))

(defn- idle? [^LoadShedder s] (and (zero? (.inflight s)) (zero? (.queued s))))

(defn- ms->ns ^long [ms] (* (long ms) 1000000))

(deftest admitted-request-runs-on-a-worker-and-is-answered-once
  (let [vt (VirtualTime.)
        shedder (virtual-shedder vt)
        threads (atom #{})
        h (wr/wrap-load-shedding (fn [_] (swap! threads conj (.getName (Thread/currentThread)))
                                   {:status 200 :body "ok"})
                                 {:shedder shedder :worker-threads 2})
        c (call h {:uri "/"})]
    (try
      (is (= [:respond {:status 200 :body "ok"}] (answer c)))
      (is (eventually #(idle? shedder)))
      (is (= 1 (count @(:answers c))))
      (is (every? #(str/starts-with? % "weir-unit-") @threads)
          "the handler runs on the worker pool, not the caller's thread")
      (finally (wr/close! h) (.close shedder)))))

(deftest zero-configuration-works-in-both-arities
  (let [h (wr/wrap-load-shedding (fn [_] {:status 200 :body "ok"}))]
    (try
      (is (= {:status 200 :body "ok"} (h {:uri "/"})))
      (is (= [:respond {:status 200 :body "ok"}] (answer (call h {:uri "/"}))))
      (let [[s & more] (vals (wr/shedders h))]
        (is (nil? more))
        (is (= "ring" (.name ^LoadShedder s)))
        (is (= 3000 (.toMillis TimeUnit/NANOSECONDS (.requestTimeoutNanos ^LoadShedder s)))))
      (finally (wr/close! h)))))

(deftest rejections-timeouts-and-deadline-get-their-statuses
  (let [vt (VirtualTime.)
        shedder (virtual-shedder vt :limit 1 :capacity 1)
        release (CountDownLatch. 1)
        started (promise)
        finished (promise)
        h (wr/wrap-load-shedding (fn [_]
                                   (deliver started true)
                                   (.await release)
                                   (deliver finished true)
                                   {:status 200})
                                 {:shedder shedder :worker-threads 2})]
    (try
      (let [running (call h {})
            _ (is (deref started wait-ms false) "the first request's handler is running")
            queued (call h {})
            full (call h {})]
        (testing "queue full -> 429"
          (let [[kind r] (answer full)]
            (is (= :respond kind))
            (is (= 429 (:status r)))
            (is (= "1" (get-in r [:headers "Retry-After"])))
            (is (= "queue-full" (get-in r [:headers "X-Weir-Outcome"])))))
        (testing "queue timeout -> 503"
          (.advance vt (ms->ns 301))
          (let [[kind r] (answer queued)]
            (is (= :respond kind))
            (is (= 503 (:status r)))
            (is (= "1" (get-in r [:headers "Retry-After"])))
            (is (= "queue-timeout" (get-in r [:headers "X-Weir-Outcome"])))))
        (testing "deadline -> 503 while the handler still runs"
          (is (not (realized? (:first running))))
          (.advance vt (ms->ns 700))
          (let [[kind r] (answer running)]
            (is (= :respond kind))
            (is (= 503 (:status r)))
            (is (= "deadline" (get-in r [:headers "X-Weir-Outcome"]))))
          (is (not (realized? finished)))
          (is (= 1 (.inflight shedder)) "the worker still holds its permit"))
        (testing "the late response is dropped and the permit comes back"
          (.countDown release)
          (is (deref finished wait-ms false))
          (is (eventually #(idle? shedder)))
          (is (= 1 (count @(:answers running))))
          (is (= 1 (count @(:answers queued))))
          (is (= 1 (count @(:answers full))))))
      (testing "closed shedder -> 503 shutting-down"
        (.close shedder)
        (let [[_ r] (answer (call h {}))]
          (is (= 503 (:status r)))
          (is (= "shutting-down" (get-in r [:headers "X-Weir-Outcome"])))))
      (finally (wr/close! h) (.close shedder)))))

(defn- cutoff-rejector
  "Cuts off every priority at or below `cutoff` from the first control tick on: shed when it
  would wait."
  ^Rejector [cutoff]
  (reify Rejector
    (update [_ _] (int cutoff))
    (ratio [_] 0.5)
    (overloaded [_] true)))

(deftest shed-by-priority-is-429-and-important-traffic-still-runs
  (let [vt (VirtualTime.)
        shedder (virtual-shedder vt :limit 1 :rejector (cutoff-rejector (Priority/of 3 0)))
        h (wr/wrap-load-shedding (fn [_] {:status 200}) {:shedder shedder :worker-threads 4})]
    (try
      (.advance vt (ms->ns 150))                          ; one control tick applies the cutoff
      (let [[_ idle] (answer (call h {:headers {"x-weir-tier" "4"}}))
            _ (is (eventually #(idle? shedder)) "its permit is back")
            held (.acquire shedder Priority/HIGHEST)      ; the only permit: now tier 4 would wait
            [_ low] (answer (call h {:headers {"x-weir-tier" "4"}}))
            high (call h {:headers {"x-weir-tier" "1"}})]
        (is (= 200 (:status idle)) "cut off, but a permit was free and nothing waited")
        (is (some? held))
        (is (= 429 (:status low)))
        (is (= "shed" (get-in low [:headers "X-Weir-Outcome"])))
        (is (= "1" (get-in low [:headers "Retry-After"])))
        (is (= 1 (.queued shedder)) "tier 1 waits for the permit")
        (.success ^Permit held)
        (is (= 200 (:status (second (answer high))))))
      (finally (wr/close! h) (.close shedder)))))

(deftest a-throwing-handler-raises-once-and-never-leaks-its-permit
  (let [vt (VirtualTime.)
        shedder (virtual-shedder vt :limit 2)
        boom (ex-info "boom" {})]
    (testing "synchronous handler on a worker"
      (let [h (wr/wrap-load-shedding (fn [_] (throw boom)) {:shedder shedder :worker-threads 2})
            c (call h {})]
        (is (= [:raise boom] (answer c)))
        (is (eventually #(idle? shedder)))
        (is (= 1 (count @(:answers c))))
        (wr/close! h)))
    (testing "async handler throwing before it calls back"
      (let [h (wr/wrap-load-shedding (fn [_ _ _] (throw boom))
                                     {:shedder shedder :handler-async? true :worker-threads 2})
            c (call h {})]
        (is (= [:raise boom] (answer c)))
        (is (idle? shedder))
        (is (= 1 (count @(:answers c))))
        (wr/close! h)))
    (testing "async handler that raises, then responds anyway"
      (let [h (wr/wrap-load-shedding (fn [_ respond raise] (raise boom) (respond {:status 200}))
                                     {:shedder shedder :handler-async? true :worker-threads 2})
            c (call h {})]
        (is (= [:raise boom] (answer c)))
        (is (idle? shedder))
        (is (= [[:raise boom]] @(:answers c)))
        (wr/close! h)))
    (testing "a server whose respond throws (the client gone mid-write) gets raise, once"
      (let [h (wr/wrap-load-shedding (fn [_] {:status 200}) {:shedder shedder :worker-threads 2})
            gone (java.io.IOException. "client gone")
            answers (atom [])
            raised (promise)]
        (h {:headers {"x-weir-tier" "3:64"}}
           (fn [r] (swap! answers conj [:respond (:status r)]) (throw gone))
           (fn [t] (swap! answers conj [:raise t]) (deliver raised true)))
        (is (deref raised wait-ms false))
        (is (eventually #(idle? shedder)) "the permit is released")
        (is (= [[:respond 200] [:raise gone]] @answers))
        (wr/close! h)))
    (.close shedder)))

(deftest async-handler-holds-its-permit-until-it-answers-or-the-deadline
  (let [vt (VirtualTime.)
        shedder (virtual-shedder vt :limit 2)
        pending (atom [])
        h (wr/wrap-load-shedding (fn [req respond raise] (swap! pending conj [req respond raise]))
                                 {:shedder shedder :handler-async? true :worker-threads 2})]
    (try
      (let [a (call h {:id :a})
            b (call h {:id :b})]
        (is (= 2 (count @pending)) "admitted at once, called on the caller's thread")
        (is (= 2 (.inflight shedder)))
        (let [[_ respond-a _] (first @pending)]
          (respond-a {:status 201})
          (is (= [:respond {:status 201}] (answer a)))
          (is (= 1 (.inflight shedder)))
          (respond-a {:status 202})
          (is (= 1 (count @(:answers a))) "a second respond is ignored"))
        (testing "a handler that never answers: 503 at the deadline, permit released"
          (.advance vt (ms->ns 1001))
          (let [[_ r] (answer b)]
            (is (= 503 (:status r))))
          (is (idle? shedder))
          (let [[_ respond-b _] (second @pending)]
            (respond-b {:status 200}))
          (is (= 1 (count @(:answers b))) "the late respond is ignored")
          (is (idle? shedder))))
      (finally (wr/close! h) (.close shedder)))))

(deftest sync-arity-answers-on-time-and-rethrows
  (let [release (CountDownLatch. 1)
        h (wr/wrap-load-shedding (fn [{:keys [uri]}]
                                   (case uri
                                     "/slow" (do (.await release) {:status 200})
                                     "/boom" (throw (IllegalStateException. "boom"))
                                     {:status 200 :body "fast"}))
                                 {:request-timeout-ms 300 :limit 2 :worker-threads 2
                                  :rejector #(Rejectors/none) :name "sync-unit"})
        [shedder] (vals (wr/shedders h))]
    (try
      (is (= {:status 200 :body "fast"} (h {:uri "/"})))
      (is (thrown-with-msg? IllegalStateException #"boom" (h {:uri "/boom"})))
      (let [start (System/nanoTime)
            r (h {:uri "/slow"})
            took-ms (/ (- (System/nanoTime) start) 1e6)]
        (is (= 503 (:status r)))
        (is (= "deadline" (get-in r [:headers "X-Weir-Outcome"])))
        (is (<= 250 took-ms 1500) (str "answered after " took-ms " ms, deadline 300 ms")))
      (.countDown release)
      (is (eventually #(idle? shedder)))
      (finally (.countDown release) (wr/close! h)))))

(deftest response-options-override-and-fall-back
  (let [vt (VirtualTime.)
        shedder (virtual-shedder vt :limit 1 :capacity 1)
        release (CountDownLatch. 1)
        seen (atom [])
        h (wr/wrap-load-shedding
           (fn [_] (.await release) {:status 200})
           {:shedder shedder :worker-threads 1
            :rejected-response (fn [req reason]
                                 (swap! seen conj reason)
                                 (if (= :queue-full reason)
                                   {:status 418 :headers {} :body (str (:id req))}
                                   (throw (RuntimeException. "bad override"))))
            :deadline-response (fn [_] {:status 504 :headers {} :body "late"})})]
    (try
      (let [running (call h {:id 1})
            queued (call h {:id 2})
            full (call h {:id 3})]
        (is (= {:status 418 :headers {} :body "3"} (second (answer full))))
        (.advance vt (ms->ns 301))
        (is (= 503 (:status (second (answer queued)))) "a throwing override falls back")
        (.advance vt (ms->ns 700))
        (is (= {:status 504 :headers {} :body "late"} (second (answer running))))
        (is (= [:queue-full :queue-timeout] @seen)))
      (.countDown release)
      (is (eventually #(idle? shedder)))
      (finally (.countDown release) (wr/close! h) (.close shedder)))))

(deftest work-not-started-by-the-deadline-is-never-started
  (let [vt (VirtualTime.)
        shedder (virtual-shedder vt :limit 1)
        tasks (atom [])
        ran (atom 0)
        ;; An executor that only runs tasks when the test says so: a saturated pool.
        later (reify Executor (execute [_ task] (swap! tasks conj task)))
        h (wr/wrap-load-shedding (fn [_] (swap! ran inc) {:status 200})
                                 {:shedder shedder :executor later})
        c (call h {})]
    (is (= 1 (count @tasks)))
    (is (= 1 (.inflight shedder)))
    (.advance vt (ms->ns 1001))
    (is (= 503 (:status (second (answer c)))))
    (is (= 1 (.inflight shedder)) "the permit waits for its task")
    (.run ^Runnable (first @tasks))
    (is (zero? @ran) "nobody would read the answer, so the handler is skipped")
    (is (idle? shedder))
    (is (= 1 (count @(:answers c))))
    (.close shedder)))

(deftest a-refusing-executor-gets-503-and-no-leak
  (let [vt (VirtualTime.)
        shedder (virtual-shedder vt :limit 1)
        refuse (reify Executor (execute [_ _] (throw (RejectedExecutionException. "full"))))
        h (wr/wrap-load-shedding (fn [_] {:status 200}) {:shedder shedder :executor refuse})
        [_ r] (answer (call h {}))]
    (is (= 503 (:status r)))
    (is (idle? shedder))
    (.close shedder)))

(deftest bad-priority-fn-means-default-priority
  (let [vt (VirtualTime.)
        shedder (virtual-shedder vt :limit 2)]
    (doseq [pf [(fn [_] (throw (RuntimeException. "bug"))) (constantly -1) (constantly 768)
                (constantly "2") (constantly nil) (constantly 4294967296) (constantly Long/MIN_VALUE)]]
      (let [h (wr/wrap-load-shedding (fn [_] {:status 200})
                                     {:shedder shedder :priority-fn pf :worker-threads 1})]
        (is (= [:respond {:status 200}] (answer (call h {}))))
        (is (= {:status 200} (h {})) "the synchronous arity too")
        (wr/close! h)))
    (is (eventually #(idle? shedder)))
    (.close shedder)))

(deftest a-status-past-int-range-still-releases-the-permit-on-the-answer
  (let [vt (VirtualTime.)
        shedder (virtual-shedder vt :limit 2)
        uncaught (atom [])
        inline (reify Executor
                 (execute [_ r] (try (.run ^Runnable r) (catch Throwable t (swap! uncaught conj t)))))
        odd {:status 4294967296}]
    (testing "an async handler answering on the caller's thread"
      (let [h (wr/wrap-load-shedding (fn [_ respond _] (respond odd))
                                     {:shedder shedder :handler-async? true :executor inline})]
        (is (= [:respond odd] (answer (call h {}))))
        (is (idle? shedder) "released when it answered, not at its deadline")
        (wr/close! h)))
    (testing "a synchronous handler on a worker"
      (let [h (wr/wrap-load-shedding (fn [_] odd) {:shedder shedder :executor inline})]
        (is (= [:respond odd] (answer (call h {}))))
        (is (idle? shedder))
        (is (empty? @uncaught) "nothing thrown on the worker")
        (is (zero? (.total (.snapshot shedder) Snapshot$Counter/DROPPED)) "released as the answer says")
        (wr/close! h)))
    (.close shedder)))

(deftest close-while-a-new-route-is-being-built-closes-its-shedder-too
  (let [in-key-fn (CountDownLatch. 1)
        go-on (CountDownLatch. 1)
        h (wr/wrap-load-shedding (fn [_] {:status 200})
                                 {:route-key-fn (fn [{:keys [uri]}]
                                                  (when (= uri "/new")
                                                    (.countDown in-key-fn)
                                                    (.await go-on wait-ms TimeUnit/MILLISECONDS))
                                                  uri)
                                  :limit 2 :worker-threads 1})
        result (CompletableFuture.)]
    (future (h {:uri "/new"} #(.complete result (:status %)) #(.complete result %)))
    (is (.await in-key-fn wait-ms TimeUnit/MILLISECONDS))
    (wr/close! h)
    (.countDown go-on)
    (is (= 503 (.get result wait-ms TimeUnit/MILLISECONDS)) "answered :shutting-down")
    (is (contains? (wr/shedders h) "/new"))
    (is (every? #(.isClosed ^LoadShedder %) (vals (wr/shedders h))) "no shedder left open")))

(deftest routes-get-their-own-shedders-up-to-a-bound
  (let [h (wr/wrap-load-shedding (fn [_] {:status 200})
                                 {:route-key-fn (fn [{:keys [uri]}]
                                                  (if (= uri "/throw") (throw (RuntimeException.)) uri))
                                  :max-routes 2 :limit 2 :worker-threads 2 :name "routes"})]
    (try
      (doseq [uri ["/a" "/b" "/c" "/d" "/a" nil "/throw"]]
        (is (= 200 (:status (h {:uri uri})))))
      (let [ss (wr/shedders h)]
        (is (= #{"/a" "/b" ::wr/overflow} (set (keys ss))))
        (is (= "routes//a" (.name ^LoadShedder (get ss "/a"))))
        (is (every? #(eventually (fn [] (idle? %))) (vals ss))))
      (finally (wr/close! h)))
    (is (every? #(.isClosed ^LoadShedder %) (vals (wr/shedders h))) "close! closes them all")
    (is (= 503 (:status (h {:uri "/a"}))) "a closed handler answers 503")))

(deftest registry-gets-weir-meters
  (let [registry (SimpleMeterRegistry.)
        h (wr/wrap-load-shedding (fn [_] {:status 200})
                                 {:registry registry :name "metered" :limit 3 :worker-threads 1})]
    (try
      (is (= 200 (:status (h {}))))
      (let [gauge (-> registry (.find "weir.limit") (.tag "shedder" "metered") (.gauge))]
        (is (some? gauge))
        (is (= 3.0 (.value gauge))))
      (finally (wr/close! h)))
    (is (empty? (.getMeters registry)) "close! removes the meters of the shedders it closed"))
  (testing "per route, the overflow shedder's too"
    (let [registry (SimpleMeterRegistry.)
          h (wr/wrap-load-shedding (fn [_] {:status 200})
                                   {:registry registry :route-key-fn :uri :limit 3
                                    :worker-threads 1})]
      (is (= 200 (:status (h {:uri "/a"}))))
      (is (seq (.getMeters registry)))
      (wr/close! h)
      (is (empty? (.getMeters registry)))))
  (testing "a second handler of the same name on the same registry is refused at wrap time"
    (let [registry (SimpleMeterRegistry.)
          a (wr/wrap-load-shedding (fn [_] {:status 200}) {:registry registry :limit 3})
          routed (wr/wrap-load-shedding (fn [_] {:status 200})
                                        {:registry registry :name "api" :route-key-fn :uri})]
      (try
        (is (= 200 (:status (routed {:uri "/a"}))))
        (is (thrown-with-msg? IllegalArgumentException #":name .*its own :name, was \"ring\""
                              (wr/wrap-load-shedding (fn [_] {:status 200})
                                                     {:registry registry :limit 7})))
        (is (thrown-with-msg? IllegalArgumentException #":name .*shedder=api/.*was \"api\""
                              (wr/wrap-load-shedding (fn [_] {:status 200})
                                                     {:registry registry :name "api"})))
        (let [b (wr/wrap-load-shedding (fn [_] {:status 200})
                                       {:registry registry :name "other" :limit 7})]
          (is (= [3.0 7.0] (for [n ["ring" "other"]]
                             (-> registry (.find "weir.limit") (.tag "shedder" n) (.gauge)
                                 (.value)))))
          (wr/close! a)
          (is (some? (-> registry (.find "weir.limit") (.tag "shedder" "other") (.gauge)))
              "closing one handler leaves the other's meters")
          (wr/close! b))
        (let [again (wr/wrap-load-shedding (fn [_] {:status 200}) {:registry registry})]
          (wr/close! again))
        (finally (wr/close! a) (wr/close! routed))))))

(defn- rejects-option [option options]
  (try
    (wr/wrap-load-shedding identity options)
    (is false (str "expected " option " to be rejected: " (pr-str options)))
    (catch IllegalArgumentException e
      (is (str/includes? (.getMessage e) (str option)) (.getMessage e)))))

(deftest bad-options-fail-at-wrap-time-naming-the-option
  (let [s (LoadShedder/builder)]
    (doseq [[option options]
            [[:request-timeout-ms {:request-timeout-ms 0}]
             [:request-timeout-ms {:request-timeout-ms "3000"}]
             [:queue-timeout-ms {:queue-timeout-ms -5}]
             [:queue-timeout-ms {:request-timeout-ms 100 :queue-timeout-ms 200}]
             [:queue-timeout-ms {:queue-timeout-ms 60000}]
             [:queue-capacity {:queue-capacity 0}]
             [:limit {:limit 0}]
             [:limit {:limit "many"}]
             [:limit {:limit (constantly 7)}]
             [:rejector {:rejector (constantly :none)}]
             [:shedder {:shedder "shared"}]
             [:name {:name ""}]
             [:name {:name :api}]
             [:priority-fn {:priority-fn 3}]
             [:route-key-fn {:route-key-fn "uri"}]
             [:max-routes {:max-routes 0}]
             [:registry {:registry {}}]
             [:executor {:executor (fn [])}]
             [:worker-threads {:worker-threads 0}]
             [:worker-threads {:executor (reify Executor (execute [_ r] (.run r))) :worker-threads 2}]
             [:handler-async? {:handler-async? "yes"}]
             [:rejected-response {:rejected-response 429}]
             [:deadline-response {:deadline-response {:status 503}}]
             [:request-timeout {:request-timeout 3000}]
             [:request-timeout-ms {:request-timeout-ms Long/MAX_VALUE}]
             [:queue-capacity {:queue-capacity (inc Integer/MAX_VALUE)}]
             [:shed-status {:shed-status 200}]
             [:shed-status {:shed-status 4294967725}]
             [:unavailable-status {:unavailable-status 4294967799}]
             [:unavailable-status {:unavailable-status "503"}]
             [:retry-after-seconds {:retry-after-seconds -1}]
             [:rejection-format {:rejection-format :xml}]]]
      (rejects-option option options))
    (doseq [[option options] [[:limit {:limit (fn [n] (Limits/fixed n))}]
                              [:limit {:limit :fixed}]
                              [:rejector {:rejector (fn [_] (Rejectors/none))}]]]
      (rejects-option option options)
      (is (not (str/includes? (try (wr/wrap-load-shedding identity options) ""
                                   (catch IllegalArgumentException e (.getMessage e)))
                              ":request-timeout-ms"))
          "a factory of the wrong arity is blamed on its own option"))
    (let [shared (.build s)]
      (rejects-option :queue-timeout-ms {:shedder shared :queue-timeout-ms 100})
      (rejects-option :route-key-fn {:shedder shared :route-key-fn :uri})
      (.close shared))
    (is (thrown-with-msg? IllegalArgumentException #"options must be a map"
                          (wr/wrap-load-shedding identity [:limit 3])))
    (is (thrown-with-msg? IllegalArgumentException #"handler must be a function"
                          (wr/wrap-load-shedding nil {})))))

;; ---------------------------------------------------------------------------------- priority

(defn- prio [headers]
  ((wr/header-priority-fn {:cohorts (Cohorts/rotating (Duration/ofDays 3650))}) {:headers headers}))

(defn- are-priorities
  "Each case is [headers tier cohort]; cohort :any for a request that gives none, whose cohort
  is random."
  [cases]
  (doseq [[headers tier cohort] cases]
    (let [p (prio headers)]
      (if (= cohort :any)
        (is (and (Priority/isValid p) (= tier (Priority/tier p))) (pr-str headers))
        (is (= [tier cohort] [(Priority/tier p) (Priority/cohort p)]) (pr-str headers))))))

(defn- keyless?
  "Whether `priority-of` gives random cohorts, as for a request with no usable user key."
  [priority-of]
  (< 1 (count (set (repeatedly 50 #(Priority/cohort (priority-of)))))))

(deftest header-priority-reads-tier-cohort-baggage-and-user
  (let [cohorts (Cohorts/rotating (Duration/ofDays 3650))]
    (are-priorities
     [[{"x-weir-tier" "0"} 0 :any]
      [{"x-weir-tier" "3:17"} 3 17]
      [{"x-weir-tier" " 5:127 "} 5 127]
      [{"baggage" "foo=bar, weir-tier=1;prop=x, weir-cohort=9"} 1 9]
      [{"x-weir-tier" "4" "baggage" "weir-tier=1,weir-cohort=9"} 4 9]
      [{"x-weir-tier" "4:2" "baggage" "weir-cohort=9"} 4 2]
      [{"x-weir-tier" "1" "x-weir-user" "alice"} 1 (.cohort cohorts "alice")]
      [{} wr/default-tier :any]])))

(deftest hostile-priority-headers-fall-back-and-never-throw
  (let [digits (apply str (repeat 100000 "9"))]
    (are-priorities
     [[{"x-weir-tier" digits} wr/default-tier :any]
      [{"x-weir-tier" (str "1:" digits)} wr/default-tier :any]
      [{"x-weir-tier" (str "1:" (apply str (repeat 250 "0")) "7")} 1 7]
      [{"x-weir-tier" "-1"} wr/default-tier :any]
      [{"x-weir-tier" "6"} wr/default-tier :any]
      [{"x-weir-tier" "5:128"} wr/default-tier :any] ; a bad value is ignored whole
      [{"x-weir-tier" "1,2"} wr/default-tier :any]
      [{"x-weir-tier" "٣"} wr/default-tier :any]
      [{"x-weir-tier" ""} wr/default-tier :any]
      [{"x-weir-tier" ":"} wr/default-tier :any]
      [{"x-weir-tier" "1:2:3"} wr/default-tier :any]
      [{"x-weir-tier" "0x1"} wr/default-tier :any]
      [{"x-weir-tier" ["1"]} wr/default-tier :any]
      [{"baggage" ",,;=;weir-tier,=,weir-tier==2,weir-cohort=-3"} wr/default-tier :any]
      [{"baggage" (apply str (repeat 600 "weir-tier=9,"))} wr/default-tier :any]
      [{"baggage" (str "weir-tier=1," (apply str (repeat 8192 " ")))} wr/default-tier :any]
      [{"x-weir-user" ""} wr/default-tier :any]])
    (is (keyless? #(prio {"x-weir-user" digits})) "an over-long user key is ignored")
    (is (keyless? #((wr/header-priority-fn {:user-header nil}) {:headers {"x-weir-user" "alice"}})))
    (is (= (.cohort (Cohorts/rotating (Duration/ofDays 3650)) "bob")
           (Priority/cohort ((wr/header-priority-fn {:user-header "X-Account"
                                                     :cohorts (Cohorts/rotating (Duration/ofDays 3650))})
                             {:headers {"x-account" "bob"}}))))
    (is (Priority/isValid ((wr/header-priority-fn) {})))
    (is (Priority/isValid ((wr/header-priority-fn) {:headers nil})))
    (is (Priority/isValid ((wr/header-priority-fn) {:headers "garbage"})))))

(deftest header-priority-fn-options-are-checked
  (is (= 0 (Priority/tier ((wr/header-priority-fn {:default-tier 0}) {}))))
  (is (thrown-with-msg? IllegalArgumentException #":default-tier"
                        (wr/header-priority-fn {:default-tier 6})))
  (is (thrown-with-msg? IllegalArgumentException #":cohorts"
                        (wr/header-priority-fn {:cohorts "hourly"})))
  (is (thrown-with-msg? IllegalArgumentException #":user-header"
                        (wr/header-priority-fn {:user-header :x-user})))
  (is (thrown-with-msg? IllegalArgumentException #":caller-tiers"
                        (wr/header-priority-fn {:caller-tiers {"checkout" 9}})))
  (is (thrown-with-msg? IllegalArgumentException #":max-header-length"
                        (wr/header-priority-fn {:max-header-length 0})))
  (is (thrown-with-msg? IllegalArgumentException #":caller-tiers.*:max-header-length"
                        (wr/header-priority-fn {:caller-tiers {"checkout" 0} :max-header-length 4}))
      "a caller longer than the longest header read could never match")
  (doseq [[option opts] [[":default-tier" {:default-tier 4294967297}]
                         [":max-header-length" {:max-header-length 4294967297}]
                         [":caller-tiers" {:caller-tiers {"checkout" 4294967297}}]]]
    (is (thrown-with-msg? IllegalArgumentException (re-pattern option)
                          (wr/header-priority-fn opts))
        "a number past int's range names its option"))
  (is (thrown-with-msg? IllegalArgumentException #":caller-tier is not a known option"
                        (wr/header-priority-fn {:caller-tier {"checkout" 0}}))
      "a misspelt option fails rather than leaving its callers at the default tier")
  (is (thrown-with-msg? IllegalArgumentException #"options must be a map"
                        (wr/header-priority-fn [:default-tier 0])))
  (is (= 0 (Priority/tier ((wr/header-priority-fn {:caller-tiers {"checkout" 0}})
                           {:headers {"x-weir-caller" "checkout"}})))))
