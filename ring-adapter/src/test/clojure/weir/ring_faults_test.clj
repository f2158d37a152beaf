(ns weir.ring-faults-test
  "Faults found by hostile testing (issue 17) and by review: answers written on the shared
  timer thread, a thousand threads pre-started per wrapped handler, the synchronous arity
  holding every server thread, a route shedder that cannot be built, a sync request whose
  thread stops waiting, and close! while every seat or worker is busy."
  (:require [clojure.test :refer [deftest is testing]]
            [weir.ring :as wr]
            [weir.ring.pools :as pools]
            [weir.ring.seats :as seats])
  (:import (dev.weir LoadShedder VirtualTime WorkerPool)
           (dev.weir.control Limits Rejectors)
           (java.time Duration)
           (java.util.concurrent ConcurrentHashMap CountDownLatch TimeUnit)))

(set! *warn-on-reflection* true)

(def ^:private wait-ms 10000)

(defn- elapsed-ms ^double [^long start] (/ (- (System/nanoTime) start) 1e6))

(defn- eventually [f]
  (let [end (+ (System/nanoTime) (* wait-ms 1000000))]
    (loop []
      (or (f) (if (< (System/nanoTime) end) (do (Thread/onSpinWait) (recur)) (f))))))

(defn- weir-threads
  "Live threads whose name starts with `prefix`."
  [prefix]
  (count (filter #(and (.isAlive ^Thread %) (.startsWith (.getName ^Thread %) ^String prefix))
                 (keys (Thread/getAllStackTraces)))))

(defn- call
  "Calls the async arity; returns a promise of [kind answer thread-name ms-after-start]."
  [h request respond-hook]
  (let [p (promise)
        start (System/nanoTime)
        record (fn [kind] (fn [x]
                            (respond-hook x)
                            (deliver p [kind x (.getName (Thread/currentThread)) (elapsed-ms start)])))]
    (h request (record :respond) (record :raise))
    p))

;; ------------------------------------------------------------------------- item 7: the timer

(deftest a-blocking-respond-does-not-delay-other-shedders-timeouts
  (let [work (CountDownLatch. 1)
        reader (CountDownLatch. 1)
        blocking (promise)
        opts {:limit 1 :rejector #(Rejectors/none)}
        slow (wr/wrap-load-shedding (fn [_] (.await work) {:status 200})
                                    (assoc opts :request-timeout-ms 100 :name "slow-reader"))
        other (wr/wrap-load-shedding (fn [_] (.await work) {:status 200})
                                     (assoc opts :request-timeout-ms 600 :queue-timeout-ms 200
                                            :name "other"))]
    (try
      ;; A client that reads its deadline answer slowly: respond blocks until `reader` opens.
      (let [stuck (call slow {:uri "/"} (fn [_]
                                          (deliver blocking (.getName (Thread/currentThread)))
                                          (.await reader)))]
        (is (not= ::none (deref blocking wait-ms ::none)) "the deadline answer is being written")
        (is (not= "weir-timer" @blocking) "never written on the timer thread")
        (let [running (call other {:uri "/"} identity)
              queued (call other {:uri "/"} identity)
              [kind r thread ms] (deref queued 3000 nil)]
          (testing "the queue timeout fires on time while the other answer blocks"
            (is (= :respond kind))
            (is (= "queue-timeout" (get-in r [:headers "X-Weir-Outcome"])))
            (is (some-> ms (< 1500)) (str "answered after " ms " ms, queue timeout 200 ms"))
            (is (not= "weir-timer" thread)))
          (testing "and so does the deadline"
            (let [[kind r thread ms] (deref running 3000 nil)]
              (is (= :respond kind))
              (is (= "deadline" (get-in r [:headers "X-Weir-Outcome"])))
              (is (some-> ms (< 2000)) (str "answered after " ms " ms, deadline 600 ms"))
              (is (not= "weir-timer" thread)))))
        (.countDown reader)
        (is (= 503 (:status (second (deref stuck wait-ms nil))))))
      (finally
        (.countDown reader)
        (.countDown work)
        (wr/close! slow)
        (wr/close! other)))))

(deftest response-fns-never-run-on-the-timer
  (let [vt (VirtualTime.)
        shedder (-> (LoadShedder/builder) (.name "fn-thread") (.timer vt)
                    (.limit (reify java.util.function.Supplier (get [_] (Limits/fixed 1))))
                    (.rejector (reify java.util.function.Supplier (get [_] (Rejectors/none))))
                    (.requestTimeout (Duration/ofSeconds 1)) (.queueTimeout (Duration/ofMillis 300))
                    (.build))
        work (CountDownLatch. 1)
        ran-on (atom #{})
        mark (fn [r] (swap! ran-on conj (.getName (Thread/currentThread))) r)
        h (wr/wrap-load-shedding (fn [_] (.await work) {:status 200})
                                 {:shedder shedder :worker-threads 2
                                  :rejected-response (fn [_ _] (mark {:status 503 :body "r"}))
                                  :deadline-response (fn [_] (mark {:status 503 :body "d"}))})
        advancer (Thread/currentThread)]
    (try
      (let [running (call h {:uri "/"} identity)
            _ (is (eventually #(= 1 (.inflight shedder))))
            queued (call h {:uri "/"} identity)]
        ;; On virtual time the timer's tasks run on the thread that advances it: this one.
        (.advance vt (* 301 1000000))
        (is (= "r" (:body (second (deref queued wait-ms nil)))))
        (.advance vt (* 700 1000000))
        (is (= "d" (:body (second (deref running wait-ms nil)))))
        (is (= 2 (count @ran-on)) (str @ran-on))
        (is (not (contains? @ran-on (.getName advancer))) "the response fns ran on the answer pool"))
      (finally (.countDown work) (wr/close! h) (.close shedder)))))

;; --------------------------------------------------------------------- item 8: worker threads

(deftest wrapped-handlers-share-one-pool-that-grows-and-reuses-threads
  (let [before (weir-threads "weir-")
        n 5
        work (CountDownLatch. 1)
        started (CountDownLatch. 8)
        hs (vec (repeatedly n #(wr/wrap-load-shedding
                                (fn [_] (.countDown started) (.await work) {:status 200})
                                {:limit 4 :rejector (fn [] (Rejectors/none))})))
        pool (pools/shared-worker-pool)]
    (try
      (testing "wrapping does not start a thread per possible permit"
        (let [after (weir-threads "weir-")]
          (println "threads named weir-* before / after wrapping" n "handlers:" before "/" after)
          (is (<= (- after before) 4) (str "wrapping " n " handlers started " (- after before)))))
      (testing "the shared pool grows to what is used"
        (let [live (.liveThreads pool)
              calls (doall (for [h (take 4 hs), _ (range 2)] (call h {:uri "/"} identity)))]
          (is (.await started wait-ms TimeUnit/MILLISECONDS) "8 handlers run at once on the pool")
          (is (<= 8 (.liveThreads pool) (+ live 8)) (str "live " (.liveThreads pool)))
          (.countDown work)
          (doseq [c calls] (is (= 200 (:status (second (deref c wait-ms nil))))))))
      (testing "idle threads are reused"
        (let [live (.liveThreads pool)
              used (atom #{})
              h (wr/wrap-load-shedding (fn [_] (swap! used conj (Thread/currentThread)) {:status 200})
                                       {:limit 4 :rejector (fn [] (Rejectors/none))})]
          (try
            (dotimes [_ 200] (is (= 200 (:status (h {:uri "/"})))))
            (is (<= (count @used) (+ live 2)) (str "200 requests ran on " (count @used) " threads"))
            (is (<= (.liveThreads pool) (+ live 2)))
            (finally (wr/close! h)))))
      (testing "an own pool for :worker-threads starts small too, and close! ends it"
        (let [h (wr/wrap-load-shedding (fn [_] {:status 200}) {:worker-threads 500 :name "own"})]
          (is (<= (weir-threads "weir-own-") 2))
          (is (= 200 (:status (h {:uri "/"}))))
          (wr/close! h)
          (is (eventually #(zero? (weir-threads "weir-own-"))))))
      (finally (.countDown work) (run! wr/close! hs)))))

;; ------------------------------------------------------------------ item 9: sync server threads

(deftest seats-leave-server-threads-spare
  (is (= 37 (seats/cap 50)))
  (is (= 300 (seats/cap 400)))
  (is (= 2 (seats/cap 10)))
  (is (= 1 (seats/cap 1))))

(deftest sync-arity-holds-at-most-its-seats-and-evicts-for-more-important-requests
  (let [vt (VirtualTime.)
        shedder (-> (LoadShedder/builder) (.name "seats") (.timer vt)
                    (.limit (reify java.util.function.Supplier (get [_] (Limits/fixed 1))))
                    (.rejector (reify java.util.function.Supplier (get [_] (Rejectors/none))))
                    (.requestTimeout (Duration/ofSeconds 1)) (.queueTimeout (Duration/ofMillis 300))
                    (.build))
        work (CountDownLatch. 1)
        h (wr/wrap-load-shedding (fn [_] (.await work) {:status 200})
                                 ;; 10 server threads: 2 seats
                                 {:shedder shedder :worker-threads 2 :server-threads 10})
        req (fn [tier] {:uri "/" :headers {"x-weir-tier" (str tier ":64")}})
        ;; A waiter can be evicted once its thread has registered it, just after the shedder
        ;; queued it: wait for that, not for the queue alone. The hook runs after every submit
        ;; (an admitted request registers nothing), so the waiter's is the second.
        registered (atom 0)
        waiter seats/waiter]
    (try
      (with-redefs [seats/waiter (fn [s p]
                                   (update (waiter s p) :queued
                                           (fn [queued] (fn [t] (queued t) (swap! registered inc)))))]
      (let [running (future (h (req 3)))
            _ (is (eventually #(= 1 (.inflight shedder))))
            waiting (future (h (req 5)))
            _ (is (eventually #(and (= 1 (.queued shedder)) (= 2 @registered))))]
        (testing "no seat, and no less important waiter: answered at once"
          (let [r (h (req 5))]
            (is (= 429 (:status r)))
            (is (= "queue-full" (get-in r [:headers "X-Weir-Outcome"])))))
        (testing "a more important request takes the least important waiter's seat"
          (let [important (future (h (req 1)))
                r (deref waiting wait-ms nil)]
            (is (= 429 (:status r)))
            (is (= "queue-full" (get-in r [:headers "X-Weir-Outcome"])))
            (is (eventually #(= 1 (.queued shedder))))
            (.countDown work)
            (is (= 200 (:status (deref running wait-ms nil))))
            (is (= 200 (:status (deref important wait-ms nil))))))))
      (testing "every seat comes back"
        (dotimes [_ 3] (is (= 200 (:status (h (req 5)))))))
      (finally (.countDown work) (wr/close! h) (.close shedder)))))

;; ----------------------------------------------------------- item 4: route shedder build fails

(deftest a-route-shedder-that-cannot-be-built-falls-back-to-overflow
  (doseq [[label bad] [["throws" #(throw (IllegalStateException. "no limit today"))]
                       ["returns a non-Limit" (constantly :not-a-limit)]]]
    (testing label
      (let [calls (atom 0)
            ;; Call 1 validates at wrap time, call 2 builds the overflow shedder; later ones fail.
            limit (fn [] (if (<= (swap! calls inc) 2) (Limits/fixed 2) (bad)))
            h (wr/wrap-load-shedding (fn [_] {:status 200 :body "ok"})
                                     {:route-key-fn :uri :limit limit
                                      :rejector #(Rejectors/none) :name "unbuildable"})]
        (try
          (is (= {:status 200 :body "ok"} (h {:uri "/a"})) "sync arity")
          (let [p (promise)]
            (h {:uri "/b"} #(deliver p %) #(deliver p %))
            (is (= {:status 200 :body "ok"} (deref p wait-ms nil)) "async arity"))
          (is (= [::wr/overflow] (keys (wr/shedders h))))
          (finally (wr/close! h)))))))

;; -------------------------------------------------- the sync arity: small servers, interrupts

(defn- on-thread
  "Runs (f) on a new thread; returns [thread promise-of-its-result]."
  [f]
  (let [p (promise)
        t (Thread. ^Runnable (fn [] (deliver p (try (f) (catch Throwable e [:thrown e])))))]
    (.start t)
    [t p]))

(defn- fixed-shedder ^LoadShedder [limit]
  (-> (LoadShedder/builder) (.name "fixed") (.timer (VirtualTime.))
      (.limit (reify java.util.function.Supplier (get [_] (Limits/fixed limit))))
      (.rejector (reify java.util.function.Supplier (get [_] (Rejectors/none))))
      (.requestTimeout (Duration/ofSeconds 60)) (.queueTimeout (Duration/ofSeconds 20))
      (.build)))

(def ^:private ok (fn [_] {:status 200 :body "ok"}))

(deftest a-sync-request-caps-its-route-by-the-seats-budget
  (let [h (wr/wrap-load-shedding ok {:server-threads 20 :name "budget"})
        ^LoadShedder s (get (wr/shedders h) nil)]
    (try
      (is (nil? (.concurrencyBudget s)) "no budget before a request comes in sync")
      (is (= 200 (:status (h {:uri "/"}))))
      (let [budget (.concurrencyBudget s)]
        (is (some? budget))
        (is (= (seats/cap 20) (some-> budget .threads)) "20 threads leave 12 seats: 20 - max(8, 5)")
        (is (= (seats/cap 20) (.concurrencyCap s)) "alone, the route may take every seat"))
      (finally (wr/close! h)))))

(deftest routes-served-sync-share-one-budget
  (let [h (wr/wrap-load-shedding ok {:server-threads 20 :route-key-fn :uri :name "shared"})]
    (try
      (is (= 200 (:status (h {:uri "/a"}))))
      (is (= 200 (:status (h {:uri "/b"}))))
      (let [{^LoadShedder a "/a" ^LoadShedder b "/b"} (wr/shedders h)
            budget (.concurrencyBudget a)]
        (is (some? budget))
        (is (identical? budget (.concurrencyBudget b)) "one budget for the routes of one server")
        (is (= 2 (some-> budget .members)))
        (wr/close! h)
        (is (= 0 (some-> budget .members)) "closed shedders leave it"))
      (finally (wr/close! h)))))

(deftest the-seats-cap-a-limit-and-a-shedder-of-the-callers-own
  (let [request {:uri "/" :headers {"x-weir-tier" "1:64"}}]
    (testing ":limit above the seats: capped at the next control tick (the shedder's own timer)"
      (let [h (wr/wrap-load-shedding ok {:server-threads 20 :limit 50 :name "own-limit"})
            ^LoadShedder s (get (wr/shedders h) nil)]
        (try
          (is (= 50 (.limit s)))
          (is (= 200 (:status (h request))))
          (is (eventually #(= 12 (.limit s))) (str "limit " (.limit s) ", 12 seats"))
          (finally (wr/close! h)))))
    (testing ":shedder of a fixed limit above the seats, on virtual time"
      (let [vt (VirtualTime.)
            shedder (-> (LoadShedder/builder) (.name "own-shedder") (.timer vt)
                        (.limit (reify java.util.function.Supplier (get [_] (Limits/fixed 50))))
                        (.rejector (reify java.util.function.Supplier (get [_] (Rejectors/none))))
                        (.build))
            h (wr/wrap-load-shedding ok {:shedder shedder :server-threads 20})
            tick #(.advance vt (* 100 1000000))]
        (try
          (tick)
          (is (= 50 (.limit shedder)) "uncapped until a request comes in sync")
          (is (= 200 (:status (h request))))
          (tick)
          (is (= 12 (.limit shedder)))
          (let [budget (.concurrencyBudget shedder)
                other (wr/wrap-load-shedding ok {:shedder shedder :server-threads 40})]
            (try
              (is (= 200 (:status (other request))))
              (is (identical? budget (.concurrencyBudget shedder))
                  "shared by a second wrapped handler, it keeps the first one's budget")
              (finally (wr/close! other))))
          (finally (wr/close! h) (.close shedder)))))))

(deftest the-async-arity-alone-leaves-the-shedder-uncapped
  (let [h (wr/wrap-load-shedding ok {:server-threads 20 :limit 50 :name "async-only"})
        ^LoadShedder s (get (wr/shedders h) nil)]
    (try
      (dotimes [_ 3]
        (is (= 200 (:status (second (deref (call h {:uri "/"} identity) wait-ms nil))))))
      (is (nil? (.concurrencyBudget s)) "an async request holds no server thread")
      (is (= Integer/MAX_VALUE (.concurrencyCap s)))
      (finally (wr/close! h)))))

(deftest routes-get-their-own-shedders-in-sync-mode-on-a-small-server
  ;; :server-threads 10 leaves 2 seats, fewer than the adaptive limit's start of 4.
  (let [h (wr/wrap-load-shedding (fn [_] {:status 200 :body "ok"})
                                 {:server-threads 10 :route-key-fn :uri :name "small"})]
    (try
      (is (= {:status 200 :body "ok"} (h {:uri "/a"})))
      (is (= {:status 200 :body "ok"} (h {:uri "/b"})))
      (is (= #{"/a" "/b"} (set (keys (wr/shedders h)))) "no route fell back to the overflow")
      (finally (wr/close! h)))))

(deftest a-sync-request-whose-thread-is-interrupted-leaves-the-queue-and-never-runs
  (let [shedder (fixed-shedder 1)
        work (CountDownLatch. 1)
        ran (ConcurrentHashMap.)
        h (wr/wrap-load-shedding (fn [{:keys [uri]}]
                                   (.put ran uri true)
                                   (when (= uri "/a") (.await work))
                                   {:status 200 :body uri})
                                 {:shedder shedder :worker-threads 2 :server-threads 10})
        req (fn [uri tier] {:uri uri :headers {"x-weir-tier" (str tier ":64")}})]
    (try
      (let [[_ a] (on-thread #(h (req "/a" 3)))
            _ (is (eventually #(= 1 (.inflight shedder))))
            [waiting b] (on-thread #(h (req "/b" 5)))
            _ (is (eventually #(= 1 (.queued shedder))))
            _ (.interrupt ^Thread waiting)
            rb (deref b wait-ms :none)]
        (is (= [503 "shutting-down"] [(:status rb) (get-in rb [:headers "X-Weir-Outcome"])]))
        (is (zero? (.queued shedder)) "it left the queue with its answer")
        (.countDown work)
        (is (= 200 (:status (deref a wait-ms nil))))
        (is (eventually #(and (zero? (.inflight shedder)) (zero? (.queued shedder)))))
        (is (not (.containsKey ran "/b")) "a request answered 503 is never started"))
      (finally (.countDown work) (wr/close! h) (.close shedder)))))

(deftest after-close-a-sync-request-is-answered-shutting-down-even-with-every-seat-taken
  (let [work (CountDownLatch. 1)
        h (wr/wrap-load-shedding (fn [_] (.await work) {:status 200})
                                 {:server-threads 10 ; 2 seats
                                  :limit 2 :rejector (fn [] (Rejectors/none))
                                  :request-timeout-ms 5000 :name "closed-seats"})
        [^LoadShedder shedder] (vals (wr/shedders h))
        req {:uri "/" :headers {"x-weir-tier" "1:64"}}]
    (try
      (let [[_ a] (on-thread #(h req))
            [_ b] (on-thread #(h req))]
        (is (eventually #(= 2 (.inflight shedder))))
        (wr/close! h)
        (let [r (h req)]
          (is (= [503 "shutting-down"] [(:status r) (get-in r [:headers "X-Weir-Outcome"])])))
        (.countDown work)
        (is (= [200 200] [(:status (deref a wait-ms nil)) (:status (deref b wait-ms nil))])))
      (finally (.countDown work) (wr/close! h)))))

(deftest close-with-an-own-pool-neither-blocks-nor-loses-admitted-work
  ;; One worker, limit 3: two admitted requests wait in the pool behind a handler that ignores
  ;; interrupts and runs until the test lets it go.
  (let [work (CountDownLatch. 1)
        h (wr/wrap-load-shedding (fn [{:keys [uri]}]
                                   (when (= uri "/stuck")
                                     (while (pos? (.getCount work))
                                       (try (.await work) (catch InterruptedException _))))
                                   {:status 200})
                                 {:limit 3 :rejector (fn [] (Rejectors/none)) :worker-threads 1
                                  :request-timeout-ms 3000 :queue-timeout-ms 1000
                                  :name "own-pool-close"})
        [^LoadShedder shedder] (vals (wr/shedders h))
        answers (atom [])
        call (fn [uri] (h {:uri uri :headers {"x-weir-tier" "1:64"}}
                          #(swap! answers conj [uri (:status %)]) #(swap! answers conj [uri %])))]
    (try
      (call "/stuck")
      (call "/a")
      (call "/b")
      (is (eventually #(= 3 (.inflight shedder))))
      (let [start (System/nanoTime)]
        (wr/close! h)
        (is (< (elapsed-ms start) 5000.0) "close! does not wait for the handlers"))
      (.countDown work)
      (is (eventually #(= 3 (count @answers))) "every admitted request is answered")
      (is (eventually #(zero? (.inflight shedder))) "every permit is released")
      (finally (.countDown work) (wr/close! h)))))
