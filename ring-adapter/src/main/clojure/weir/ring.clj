(ns weir.ring
  "Ring middleware that protects a handler with a Weir load shedder.

  `wrap-load-shedding` bounds how many requests run at once, how long a request may
  wait for its turn, and how long a client waits for an answer. Requests beyond
  capacity are queued by priority, then shed with 429 or 503, so a burst or a slow
  dependency never turns into unbounded latency.

  Thread model. A request is submitted to the shedder on the server's thread. Once
  admitted, the (synchronous) handler runs on a pre-started worker pool, so the
  server thread goes straight back to the server. The middleware answers each
  request exactly once: the first of the handler's response, its exception, the
  queue timeout or the processing deadline wins (a compare-and-set decides), and
  anything later is dropped quietly. A permit is always released, whatever the
  handler does."
  (:require [clojure.string :as str])
  (:import (dev.weir AdmissionCallback Cohorts LoadShedder LoadShedder$Builder Outcome Permit
                     Priority RejectReason WorkerPool)
           (dev.weir.control Limits)
           (java.time Duration)
           (java.util.concurrent CompletableFuture ConcurrentHashMap ExecutionException Executor
                                 TimeUnit TimeoutException)
           (java.util.concurrent.atomic AtomicBoolean AtomicInteger)
           (java.util.function Function Supplier)
           (java.util.logging Level Logger)))

(set! *warn-on-reflection* true)

(def ^:private ^Logger log (Logger/getLogger "weir.ring"))

;; ---------------------------------------------------------------------------------- priority

(def default-tier
  "The tier of a request that names none, or names one badly: 3, ordinary traffic below
  the critical paths (the same default as Weir's servlet filter)."
  3)

(def ^:private tier-header "x-weir-tier")
(def ^:private max-header-length
  "Longer tier and user headers are ignored, as by the servlet filter."
  256)
(def ^:private max-baggage-length
  "The W3C limit; longer baggage is ignored."
  8192)

(defn- parse-tier
  "The tier in `text`, or nil if it is not a tier."
  [text]
  (when text
    (try (Priority/parseTier (str/trim text)) (catch IllegalArgumentException _ nil))))

(defn- parse-cohort
  "The cohort in `text` (0..127), or nil if it is not one."
  [text]
  (when text
    (try (Priority/cohort (Priority/parse (str "0:" (str/trim text))))
         (catch IllegalArgumentException _ nil))))

(defn- baggage-entries
  "The `weir-tier` and `weir-cohort` values of a W3C baggage header, as a map with
  keys \"weir-tier\" and \"weir-cohort\". Other entries, properties and malformed
  members are ignored."
  [^String baggage]
  (if (nil? baggage)
    {}
    (reduce (fn [m ^String member]
              (let [member (let [semi (.indexOf member ";")]
                             (if (neg? semi) member (subs member 0 semi)))
                    eq (.indexOf member "=")]
                (if (neg? eq)
                  m
                  (let [k (str/trim (subs member 0 eq))]
                    (if (or (= k "weir-tier") (= k "weir-cohort"))
                      (assoc m k (str/trim (subs member (inc eq))))
                      m)))))
            {}
            (str/split baggage #","))))

(defn header-priority-fn
  "A priority function reading the same headers as Weir's servlet filter:

    x-weir-tier   \"t\" or \"t:c\": the tier (0..5) and, optionally, the cohort (0..127)
    baggage       W3C baggage entries weir-tier=t and weir-cohort=c, used for what
                  x-weir-tier does not give
    x-weir-user   a user key, hashed to a cohort by `:cohorts` when no cohort is given

  Anything missing, malformed, out of range or too long (over 256 characters; 8192 for
  baggage) is ignored, piece by piece, falling back to `:default-tier` and to the user's
  cohort or, with no user, a random cohort (so a tier can be shed in part). It never throws.

  Options: `:default-tier` (0..5, default 3), `:cohorts` (a dev.weir.Cohorts, default
  hourly rotation), `:user-header` (default \"x-weir-user\"; nil to ignore users)."
  ([] (header-priority-fn {}))
  ([{:keys [default-tier cohorts user-header]
     :or {default-tier default-tier user-header "x-weir-user"}}]
   (when-not (and (int? default-tier) (<= 0 default-tier (dec Priority/TIERS)))
     (throw (IllegalArgumentException.
             (str ":default-tier must be an integer in 0.." (dec Priority/TIERS)
                  ", was " (pr-str default-tier)))))
   (when-not (or (nil? cohorts) (instance? Cohorts cohorts))
     (throw (IllegalArgumentException.
             (str ":cohorts must be a dev.weir.Cohorts, was " (pr-str cohorts)))))
   (when-not (or (nil? user-header) (and (string? user-header) (not (str/blank? user-header))))
     (throw (IllegalArgumentException.
             (str ":user-header must be a header name or nil, was " (pr-str user-header)))))
   (let [^Cohorts cohorts (or cohorts (Cohorts/rotating))
         default-tier (int default-tier)
         user-header (some-> ^String user-header .toLowerCase)]
     (fn [request]
       (let [headers (:headers request)
             header (fn [h limit]
                      (let [v (when (map? headers) (get headers h))]
                        (when (and (string? v) (<= (count v) (long limit))) v)))
             tier-text ^String (header tier-header max-header-length)
             colon (if tier-text (.indexOf tier-text ":") -1)
             baggage (baggage-entries (header "baggage" max-baggage-length))
             tier (or (parse-tier (if (neg? colon) tier-text (subs tier-text 0 colon)))
                      (parse-tier (get baggage "weir-tier"))
                      default-tier)
             cohort (or (when-not (neg? colon) (parse-cohort (subs tier-text (inc colon))))
                        (parse-cohort (get baggage "weir-cohort"))
                        (.cohort cohorts (when user-header (header user-header max-header-length))))]
         (Priority/of (int tier) (int cohort)))))))

;; --------------------------------------------------------------------------------- responses

(def ^:private reason-keyword
  {RejectReason/SHED :shed
   RejectReason/QUEUE_FULL :queue-full
   RejectReason/QUEUE_TIMEOUT :queue-timeout
   RejectReason/SHUTTING_DOWN :shutting-down})

(defn- plain [status outcome text]
  {:status status
   :headers {"Content-Type" "text/plain; charset=utf-8"
             "Cache-Control" "no-store"
             "Retry-After" "1"
             "X-Weir-Outcome" outcome}
   :body text})

(defn default-rejected-response
  "The answer to a request that was not admitted: 429 for `:shed` and `:queue-full` (too
  much traffic, slow down), 503 for `:queue-timeout` and `:shutting-down`. Each carries
  `Retry-After: 1` and `X-Weir-Outcome` naming the reason."
  [_request reason]
  (case reason
    :shed (plain 429 "shed" "Too many requests: shed under load\n")
    :queue-full (plain 429 "queue-full" "Too many requests: queue full\n")
    :queue-timeout (plain 503 "queue-timeout" "Service unavailable: waited too long in the queue\n")
    :shutting-down (plain 503 "shutting-down" "Service unavailable: shutting down\n")))

(defn default-deadline-response
  "The answer sent when the processing deadline passes before the handler answered: 503
  with `Retry-After: 1` and `X-Weir-Outcome: deadline`."
  [_request]
  (plain 503 "deadline" "Service unavailable: the request took too long\n"))

;; ----------------------------------------------------------------------------------- options

(def ^:private known-options
  #{:priority-fn :request-timeout-ms :queue-timeout-ms :queue-capacity :limit :rejector
    :shedder :name :route-key-fn :max-routes :registry :executor :worker-threads
    :handler-async? :rejected-response :deadline-response})

(def ^:private shedder-settings
  "Options that configure shedders this middleware builds, so meaningless with `:shedder`."
  [:request-timeout-ms :queue-timeout-ms :queue-capacity :limit :rejector :name :route-key-fn
   :max-routes])

(defn- bad [option value requirement]
  (throw (IllegalArgumentException.
          (str "weir.ring/wrap-load-shedding: option " option " " requirement ", was "
               (pr-str value)))))

(defn- fn-like?
  "A fn, var or keyword; not a map or set, which are callable but surely a mistake here."
  [x]
  (and (ifn? x) (not (coll? x))))

(defn- meter-registry?
  "Whether `x` is a Micrometer MeterRegistry, without needing Micrometer to be present."
  [x]
  (let [^Class c (try (Class/forName "io.micrometer.core.instrument.MeterRegistry")
                      (catch ClassNotFoundException _ nil))]
    (boolean (and c (.isInstance c x)))))

(defn- check-options [options]
  (when-not (map? options)
    (throw (IllegalArgumentException.
            (str "weir.ring/wrap-load-shedding: options must be a map, was " (pr-str options)))))
  (doseq [k (keys options)]
    (when-not (contains? known-options k)
      (bad k (get options k) (str "is not a known option; known options are "
                                  (str/join " " (sort known-options))))))
  (doseq [k [:priority-fn :route-key-fn :rejected-response :deadline-response :limit :rejector]]
    (let [v (get options k)]
      (when (and (some? v) (not (fn-like? v)) (not (and (= k :limit) (int? v))))
        (bad k v (if (= k :limit)
                   "must be a positive integer (a fixed limit) or a fn of no arguments returning a dev.weir.Limit"
                   "must be a function")))))
  (doseq [k [:request-timeout-ms :queue-timeout-ms :queue-capacity :max-routes :worker-threads]]
    (let [v (get options k)]
      (when (and (some? v) (not (and (int? v) (pos? v))))
        (bad k v "must be a positive integer"))))
  (let [{:keys [limit shedder executor name registry request-timeout-ms queue-timeout-ms
                handler-async?]} options]
    (when (and (int? limit) (not (pos? limit)))
      (bad :limit limit "must be a positive integer"))
    (when (and (some? shedder) (not (instance? LoadShedder shedder)))
      (bad :shedder shedder "must be a dev.weir.LoadShedder"))
    (when shedder
      (doseq [k shedder-settings]
        (when (contains? options k)
          (bad k (get options k) "cannot be combined with :shedder; configure the shedder itself"))))
    (when (and (some? executor) (not (instance? Executor executor)))
      (bad :executor executor "must be a java.util.concurrent.Executor"))
    (when (and (some? executor) (contains? options :worker-threads))
      (bad :worker-threads (:worker-threads options) "cannot be combined with :executor"))
    (when (and (some? name) (or (not (string? name)) (str/blank? name)))
      (bad :name name "must be a non-blank string"))
    (when (and (some? registry) (not (meter-registry? registry)))
      (bad :registry registry "must be a Micrometer io.micrometer.core.instrument.MeterRegistry"))
    (when (and request-timeout-ms queue-timeout-ms (> queue-timeout-ms request-timeout-ms))
      (bad :queue-timeout-ms queue-timeout-ms
           (str "must not exceed :request-timeout-ms (" request-timeout-ms ")")))
    (when (and (nil? request-timeout-ms) queue-timeout-ms
               (> queue-timeout-ms (.toMillis LoadShedder$Builder/DEFAULT_REQUEST_TIMEOUT)))
      (bad :queue-timeout-ms queue-timeout-ms
           (str "must not exceed the default request timeout ("
                (.toMillis LoadShedder$Builder/DEFAULT_REQUEST_TIMEOUT) " ms)")))
    (when (fn-like? limit)
      (let [l (limit)]
        (when-not (instance? dev.weir.Limit l) (bad :limit l "must return a dev.weir.Limit"))))
    (when (fn-like? (:rejector options))
      (let [r ((:rejector options))]
        (when-not (instance? dev.weir.Rejector r) (bad :rejector r "must return a dev.weir.Rejector"))))
    (when-not (or (nil? handler-async?) (boolean? handler-async?))
      (bad :handler-async? handler-async? "must be true or false"))))

;; ---------------------------------------------------------------------------------- shedders

(defn- build-shedder
  ^LoadShedder [options shedder-name]
  (let [{:keys [request-timeout-ms queue-timeout-ms queue-capacity limit rejector]} options
        b (doto (LoadShedder/builder) (.name shedder-name))]
    (when request-timeout-ms (.requestTimeout b (Duration/ofMillis request-timeout-ms)))
    (when queue-timeout-ms (.queueTimeout b (Duration/ofMillis queue-timeout-ms)))
    (when queue-capacity (.queueCapacity b (int queue-capacity)))
    (cond
      (int? limit) (let [n (int limit)] (.limit b (reify Supplier (get [_] (Limits/fixed n)))))
      (fn-like? limit) (let [l (limit)]
                         (when-not (instance? dev.weir.Limit l)
                           (bad :limit l "must return a dev.weir.Limit"))
                         (.limit b (reify Supplier (get [_] l)))))
    (when rejector
      (let [r (rejector)]
        (when-not (instance? dev.weir.Rejector r)
          (bad :rejector r "must return a dev.weir.Rejector"))
        (.rejector b (reify Supplier (get [_] r)))))
    (.build b)))

(defn- max-limit
  "The largest inflight limit one shedder built from `options` can reach."
  [options]
  (let [{:keys [^LoadShedder shedder limit]} options]
    (cond
      shedder (.maxLimit shedder)
      (int? limit) limit
      (fn-like? limit) (.maxLimit ^dev.weir.Limit (limit))
      :else (.maxLimit (Limits/adaptive)))))

(defn- bind-metrics! [registry shedder]
  (when registry
    ;; Resolved only when asked for, so Micrometer stays an optional dependency.
    ((requiring-resolve 'weir.ring.metrics/bind!) registry shedder)))

(defn- shedder-lookup
  "{:lookup request -> LoadShedder, :all () -> {route-key shedder}, :owned? whether
  close! should close them}. With a route key fn, each key gets its own shedder, up to
  `max-routes`; later keys, nil keys and a throwing key fn share one overflow shedder."
  [options]
  (let [{:keys [shedder route-key-fn max-routes registry] :or {max-routes 32}} options
        base (or (:name options) "ring")]
    (cond
      shedder
      (do (bind-metrics! registry shedder)
          {:lookup (constantly shedder) :all (fn [] {nil shedder}) :owned? false})

      (nil? route-key-fn)
      (let [s (build-shedder options base)]
        (bind-metrics! registry s)
        {:lookup (constantly s) :all (fn [] {nil s}) :owned? true})

      :else
      (let [routes (ConcurrentHashMap.)
            created (AtomicInteger.)
            overflow (delay (doto (build-shedder options (str base "/overflow"))
                              (->> (bind-metrics! registry))))
            make (reify Function
                   (apply [_ k]
                     ;; computeIfAbsent runs this at most once per key; the CAS keeps the count
                     ;; exact across keys, and never moves once the bound is reached.
                     (loop []
                       (let [n (.get created)]
                         (when (< n (long max-routes))
                           (if (.compareAndSet created n (inc n))
                             (doto (build-shedder options (str base "/" k))
                               (->> (bind-metrics! registry)))
                             (recur)))))))]
        {:lookup (fn [request]
                   (let [k (try (route-key-fn request)
                                (catch Throwable t
                                  (.log log Level/WARNING "weir.ring: :route-key-fn threw" t)
                                  nil))]
                     (or (when (some? k)
                           (or (.get routes k) (.computeIfAbsent routes k make)))
                         @overflow)))
         :all (fn [] (cond-> (into {} routes)
                       (realized? overflow) (assoc ::overflow @overflow)))
         :owned? true}))))

;; ---------------------------------------------------------------------------------- handling

(defn- outcome-of [response]
  (let [status (:status response)]
    (if (and (int? status) (>= status 500)) Outcome/ERROR Outcome/SUCCESS)))

(defn- safe-call
  "Calls the server's respond or raise; a failure there (a client that went away) must
  not stop the permit's release."
  [f x]
  (try (f x)
       (catch Throwable t
         (.log log Level/FINE "weir.ring: answering the request failed" t))))

(defn- not-a-response [x]
  ;; Ring's adapters fail on a nil response without completing the exchange; an error is an
  ;; answer the client does get.
  (IllegalStateException. (str "the handler answered " (pr-str (type x))
                               ", not a Ring response map")))

(defn- answer-fn [make-response fallback]
  (fn [& args]
    (let [r (try (apply make-response args)
                 (catch Throwable t
                   (.log log Level/WARNING "weir.ring: a response option threw; using the default" t)
                   nil))]
      (if (map? r) r (apply fallback args)))))

(defn- priority-of [priority-fn request]
  (let [p (try (priority-fn request)
               (catch Throwable t
                 (.log log Level/WARNING "weir.ring: :priority-fn threw; using the default tier" t)
                 nil))]
    (if (and (int? p) (Priority/isValid p))
      (int p)
      (Priority/of (int default-tier) (int (quot Priority/COHORTS 2))))))

(defn- serve
  "Submits `request` and answers it through `respond` or `raise`, exactly once."
  [ctx request respond raise]
  (let [{:keys [lookup priority-fn timeout-nanos ^Executor executor handler handler-async?
                rejected deadline ^AtomicBoolean closed]} ctx
        ;; If writing the response fails before anything is committed, an error response
        ;; may still get through; either way the exchange is not left open.
        respond (fn [response]
                  (try (respond response)
                       (catch Throwable t
                         (.log log Level/FINE "weir.ring: respond failed; raising instead" t)
                         (raise t))))
        done (AtomicBoolean.)
        answer! (fn [f x] (when (.compareAndSet done false true) (safe-call f x) true))
        submitter (Thread/currentThread)
        submitting (AtomicBoolean. true)
        run-sync (fn [^Permit permit]
                   (fn []
                     (let [outcome (volatile! Outcome/DROPPED)]
                       (try
                         ;; Answered already (the deadline passed while this waited for a
                         ;; worker): do not start work nobody will read.
                         (when-not (.get done)
                           (let [response (try (handler request)
                                               (catch Throwable t
                                                 ;; Past the deadline it stays DROPPED.
                                                 (when (answer! raise t)
                                                   (vreset! outcome Outcome/ERROR))
                                                 ::threw))]
                             (cond
                               (identical? response ::threw) nil
                               (map? response) (when (answer! respond response)
                                                 (vreset! outcome (outcome-of response)))
                               :else (when (answer! raise (not-a-response response))
                                       (vreset! outcome Outcome/ERROR)))))
                         (finally (.release permit @outcome))))))
        run-async (fn [^Permit permit]
                    (fn []
                      (try
                        (handler request
                                 (fn [response]
                                   (if (map? response)
                                     (when (answer! respond response)
                                       (.release permit (outcome-of response)))
                                     (when (answer! raise (not-a-response response))
                                       (.release permit Outcome/ERROR))))
                                 (fn [t]
                                   (when (answer! raise t)
                                     (.release permit Outcome/ERROR))))
                        (catch Throwable t
                          (answer! raise t)
                          (.release permit Outcome/ERROR)))))
        callback
        (reify AdmissionCallback
          (onAdmitted [_ permit]
            (.onDeadline permit
                         (fn []
                           (answer! respond (deadline request))
                           ;; A worker still holds a synchronous handler's thread, so its permit
                           ;; stays held until it returns. An async handler holds nothing we can
                           ;; see, and may never call back: give its permit back now.
                           (when handler-async? (.release permit Outcome/DROPPED))))
            (let [task (if handler-async? (run-async permit) (run-sync permit))]
              (if (and handler-async? (.get submitting) (identical? submitter (Thread/currentThread)))
                ;; Admitted at once on the server's thread: an async handler may start here.
                (task)
                (try
                  (.execute executor ^Runnable task)
                  (catch Throwable t
                    (.log log Level/WARNING "weir.ring: the worker pool refused a request" t)
                    (answer! respond (rejected request :shutting-down))
                    (.release permit Outcome/DROPPED))))))
          (onRejected [_ reason]
            (when-let [k (reason-keyword reason)]
              (answer! respond (rejected request k)))))]
    (try
      (if (.get closed)
        ;; Do not build a shedder for a new route after close!.
        (answer! respond (rejected request :shutting-down))
        (.submit ^LoadShedder (lookup request) (int (priority-of priority-fn request))
                 (long timeout-nanos) ^AdmissionCallback callback))
      (catch Throwable t
        ;; Only a bug could land here; still, every request gets its one answer.
        (answer! raise t))
      (finally (.set submitting false)))
    nil))

(defn- serve-sync
  "The synchronous Ring arity: the same path as the async one, with the server's thread
  waiting for the answer. The shedder's timers answer on time; the extra second only
  guards against an answer that never comes."
  [ctx request]
  (let [fut (CompletableFuture.)
        {:keys [timeout-nanos deadline]} ctx]
    (serve ctx request #(.complete fut %) #(.completeExceptionally fut %))
    (try
      (.get fut (+ (long timeout-nanos) (.toNanos TimeUnit/SECONDS 1)) TimeUnit/NANOSECONDS)
      (catch ExecutionException e
        (throw (or (.getCause e) e)))
      (catch TimeoutException _
        (deadline request))
      (catch InterruptedException _
        (.interrupt (Thread/currentThread))
        ((:rejected ctx) request :shutting-down)))))

(defn wrap-load-shedding
  "Wraps a Ring `handler` with load shedding. The returned handler has both Ring arities:
  [request] and [request respond raise].

  Options (all optional):

    :priority-fn        request -> packed dev.weir.Priority int. Default
                        (header-priority-fn): x-weir-tier, baggage, x-weir-user. A throw
                        or an invalid value means tier `default-tier`, cohort 64.
    :request-timeout-ms the processing deadline, from arrival. Default 3000.
    :queue-timeout-ms   how long a request may wait to be admitted. Default a third of
                        :request-timeout-ms.
    :queue-capacity     how many may wait. Default 4096.
    :limit              a positive int (a fixed inflight limit) or a fn of no arguments
                        returning a dev.weir.Limit (called once per shedder). Default
                        adaptive.
    :rejector           a fn of no arguments returning a dev.weir.Rejector (called once
                        per shedder), e.g. #(Rejectors/none). Default adaptive.
    :name               the shedder's name in metrics and logs. Default \"ring\".
    :shedder            a dev.weir.LoadShedder to use (and share) instead of building one;
                        excludes the settings above and :route-key-fn. Not closed by `close!`.
    :route-key-fn       request -> key: one shedder per key (named name/key), so one slow
                        route cannot eat another's capacity.
    :max-routes         how many keyed shedders at most. Default 32; further keys, nil
                        keys and a throwing :route-key-fn share one overflow shedder.
    :registry           a Micrometer MeterRegistry: every shedder's weir.* meters are
                        bound to it (requires micrometer-core on the class path).
    :executor           a java.util.concurrent.Executor to run admitted handlers on; it must
                        not block or run tasks on the calling thread. Not closed by `close!`.
                        Default a pre-started dev.weir.WorkerPool.
    :worker-threads     the default pool's size. Default the shedder's largest possible
                        limit (its Limit's maxLimit), so admitted work never waits for a
                        thread; with :route-key-fn, size it for all routes together.
    :handler-async?     true if `handler` is a 3-arity async handler: it is called directly
                        (on the server's thread when admitted at once, on a worker
                        otherwise) and its permit is released when it responds or raises,
                        or at the deadline. Default false: a 1-arity handler run on a worker.
    :rejected-response  (fn [request reason]) -> response, reason one of :shed :queue-full
                        :queue-timeout :shutting-down. Default `default-rejected-response`.
    :deadline-response  (fn [request]) -> response. Default `default-deadline-response`.

  The response fns may run on Weir's timer thread: keep them quick. A bad option throws
  IllegalArgumentException naming it, here rather than on the first request.

  Call `close!` on the returned handler to stop the shedders and pool it built."
  ([handler] (wrap-load-shedding handler {}))
  ([handler options]
   (when-not (ifn? handler)
     (throw (IllegalArgumentException.
             (str "weir.ring/wrap-load-shedding: handler must be a function, was "
                  (pr-str handler)))))
   (check-options options)
   (let [closed (AtomicBoolean.)
         {:keys [priority-fn executor worker-threads handler-async? rejected-response
                 deadline-response ^LoadShedder shedder]} options
         {:keys [lookup all owned?]} (shedder-lookup options)
         pool (when-not executor
                (WorkerPool/of (str "weir-" (or (:name options) (some-> shedder .name) "ring"))
                               (int (or worker-threads (max-limit options)))))
         timeout-nanos (cond
                         shedder (.requestTimeoutNanos shedder)
                         (:request-timeout-ms options)
                         (.toNanos TimeUnit/MILLISECONDS (:request-timeout-ms options))
                         :else (.toNanos LoadShedder$Builder/DEFAULT_REQUEST_TIMEOUT))
         ctx {:lookup lookup
              :priority-fn (or priority-fn (header-priority-fn))
              :timeout-nanos timeout-nanos
              :executor (or executor pool)
              :handler handler
              :handler-async? (boolean handler-async?)
              :rejected (if rejected-response
                          (answer-fn rejected-response default-rejected-response)
                          default-rejected-response)
              :deadline (if deadline-response
                          (answer-fn deadline-response default-deadline-response)
                          default-deadline-response)
              :closed closed}]
     (with-meta
       (fn
         ([request] (serve-sync ctx request))
         ([request respond raise] (serve ctx request respond raise)))
       {::shedders all
        ::close (fn []
                  (when (.compareAndSet closed false true)
                    (when owned?
                      (doseq [^LoadShedder s (vals (all))] (.close s)))
                    (when pool (.close ^WorkerPool pool))))}))))

(defn shedders
  "The shedders behind a handler returned by `wrap-load-shedding`, as a map from route
  key to dev.weir.LoadShedder (the key is nil without :route-key-fn, and
  :weir.ring/overflow for the overflow shedder). For metrics, health checks and tests."
  [wrapped]
  (if-let [f (::shedders (meta wrapped))]
    (f)
    (throw (IllegalArgumentException. "not a handler returned by weir.ring/wrap-load-shedding"))))

(defn close!
  "Stops a handler returned by `wrap-load-shedding`: closes the shedders and the worker
  pool it built (not a :shedder or :executor you supplied). Queued requests are answered
  503 :shutting-down; running handlers finish. Idempotent."
  [wrapped]
  (if-let [f (::close (meta wrapped))]
    (f)
    (throw (IllegalArgumentException. "not a handler returned by weir.ring/wrap-load-shedding"))))
