(ns weir.ring
  "Ring middleware that protects a handler with a Weir load shedder.

  `wrap-load-shedding` bounds how many requests run at once, how long a request may
  wait for its turn, and how long a client waits for an answer. Requests beyond
  capacity are queued by priority, then shed with 429 or 503, so a burst or a slow
  dependency never turns into unbounded latency.

  Thread model. A request is submitted to the shedder on the server's thread. Once
  admitted, the (synchronous) handler runs on a worker pool (weir.ring.pools), so the
  server thread goes straight back to the server. The middleware answers each
  request exactly once: the first of the handler's response, its exception, the
  queue timeout or the processing deadline wins (a compare-and-set decides), and
  anything later is dropped quietly. If the server's respond throws, raise is called
  with that exception, so that the server closes the exchange. An answer decided on
  another thread than the server's (a queue timeout or deadline on Weir's timer, an
  eviction) is written on the answer pool, never on the timer. A permit is always
  released, whatever the handler does. The synchronous arity bounds the server threads
  it holds, and caps the limits of the shedders it serves by them (weir.ring.seats).

  The HTTP contract is Weir's core dev.weir.http, shared with the servlet filter: the
  priority from headers (weir.ring.priority), the answers and the outcome of a status
  (HttpAnswers). The options become core settings in weir.ring.options."
  (:require [weir.ring.options :as options]
            [weir.ring.pools :as pools]
            [weir.ring.priority :as priority]
            [weir.ring.seats :as seats]
            [weir.ring.status :as status])
  (:import (dev.weir AdmissionCallback LoadShedder LoadShedder$Builder Outcome Permit Priority
                     RejectReason WorkerPool)
           (dev.weir.http HttpAnswer HttpAnswers PriorityHeaders)
           (java.util.concurrent CompletableFuture ConcurrentHashMap ExecutionException Executor
                                 TimeUnit TimeoutException)
           (java.util.concurrent.atomic AtomicBoolean AtomicInteger AtomicLong)
           (java.util.function Function)
           (java.util.logging Level Logger)))

(set! *warn-on-reflection* true)

(def ^:private ^Logger log (Logger/getLogger "weir.ring"))

;; ---------------------------------------------------------------------------------- priority

(def default-tier
  "The tier of a request that names none, or names one badly: 3, ordinary traffic below
  the critical paths (dev.weir.http.PriorityHeaders/DEFAULT_TIER, as in the servlet filter)."
  PriorityHeaders/DEFAULT_TIER)

(def ^{:arglists '([] [options])} header-priority-fn
  "The default :priority-fn: see weir.ring.priority/header-priority-fn."
  priority/header-priority-fn)

(alter-meta! #'header-priority-fn assoc :doc (:doc (meta #'priority/header-priority-fn)))

;; --------------------------------------------------------------------------------- responses

(def ^:private reason-keyword
  {RejectReason/SHED :shed
   RejectReason/QUEUE_FULL :queue-full
   RejectReason/QUEUE_TIMEOUT :queue-timeout
   RejectReason/SHUTTING_DOWN :shutting-down
   RejectReason/CANCELLED :cancelled})

(defn- ring-response
  "An HttpAnswer as a Ring response."
  [^HttpAnswer a]
  {:status (.status a) :headers (into {} (.headers a)) :body (.body a)})

(defn- responses
  "The middleware's own answers from `answers`: {reason-keyword response, :deadline response},
  made once."
  [^HttpAnswers answers]
  (assoc (into {} (for [[r k] reason-keyword] [k (ring-response (.rejected answers r))]))
         :deadline (ring-response (.deadline answers))))

(def ^:private default-responses (responses (HttpAnswers/defaults)))

(defn default-rejected-response
  "The answer to a request that was not admitted, from dev.weir.http.HttpAnswers with
  the middleware's :shed-status, :unavailable-status, :retry-after-seconds and
  :rejection-format (this 2-arity fn uses their defaults): 429 for `:shed` and
  `:queue-full` (too much traffic, slow down), 503 for `:queue-timeout`, `:shutting-down`
  and `:cancelled`. Each carries `Retry-After: 1`, `Cache-Control: no-store` and
  `X-Weir-Outcome` naming the reason."
  [_request reason]
  (get default-responses reason))

(defn default-deadline-response
  "The answer sent when the processing deadline passes before the handler answered: 503
  with `Retry-After: 1` and `X-Weir-Outcome: deadline` (configured like
  `default-rejected-response`)."
  [_request]
  (:deadline default-responses))

;; ---------------------------------------------------------------------------------- shedders

(defn- bind-metrics! [registry shedder]
  (when registry
    ;; Resolved only when asked for, so Micrometer stays an optional dependency.
    ((requiring-resolve 'weir.ring.metrics/bind!) registry shedder)))

(defn- unbind-metrics! [registry shedder]
  (when registry
    ((requiring-resolve 'weir.ring.metrics/unbind!) registry shedder)))

(defn- check-registry-free!
  "Throws naming :name if `registry` already has meters of a shedder of this handler's name: a
  second registration would be ignored by Micrometer, and close! on either handler would remove
  the other's meters."
  [options]
  (when-let [registry (:registry options)]
    (let [^LoadShedder shedder (:shedder options)
          n (if shedder (.name shedder) (or (:name options) "ring"))]
      (when-let [taken ((requiring-resolve 'weir.ring.metrics/bound-name) registry n)]
        (options/bad (if shedder :shedder :name) n
                     (str "names shedders whose meters this :registry has already (shedder="
                          taken "): give each wrapped handler its own :name"))))))

(defn- shedder-lookup
  "{:lookup request -> LoadShedder, :all () -> {route-key shedder}, :owned? whether
  close! should close them}. With a route key fn, each key gets its own shedder, up to
  `max-routes`; later keys, nil keys, a throwing key fn and a key whose shedder cannot be
  built (a :limit or :rejector fn that throws or returns something else on a later call)
  share one overflow shedder, built here so that it is always there."
  [options ^LoadShedder$Builder template]
  (let [{:keys [shedder route-key-fn max-routes registry] :or {max-routes 32}} options
        base (or (:name options) "ring")
        build-shedder (fn [shedder-name] (-> template .copy (.name shedder-name) .build))]
    (cond
      shedder
      (do (bind-metrics! registry shedder)
          {:lookup (constantly shedder) :all (fn [] {nil shedder}) :owned? false})

      (nil? route-key-fn)
      (let [s (build-shedder base)]
        (bind-metrics! registry s)
        {:lookup (constantly s) :all (fn [] {nil s}) :owned? true})

      :else
      (let [routes (ConcurrentHashMap.)
            created (AtomicInteger.)
            failures (AtomicLong.)
            overflow-shedder (doto ^LoadShedder (build-shedder (str base "/overflow"))
                               (->> (bind-metrics! registry)))
            overflow-used (AtomicBoolean.)
            overflow (fn [] (.set overflow-used true) overflow-shedder)
            make (reify Function
                   (apply [_ k]
                     ;; computeIfAbsent runs this at most once per key; the CAS keeps the count
                     ;; exact across keys, and never moves once the bound is reached.
                     (loop []
                       (let [n (.get created)]
                         (when (< n (long max-routes))
                           (if (.compareAndSet created n (inc n))
                             (try
                               (doto (build-shedder (str base "/" k))
                                 (->> (bind-metrics! registry)))
                               (catch Throwable t
                                 ;; nil: no mapping, the slot is free again, and the request
                                 ;; goes to the overflow shedder rather than failing.
                                 (.decrementAndGet created)
                                 (let [n (.incrementAndGet failures)]
                                   (when (or (= n 1) (zero? (rem n 1000)))
                                     (.log log Level/WARNING
                                           (str "weir.ring: building the shedder of route " (pr-str k)
                                                " failed (" n " so far); using the overflow shedder")
                                           t)))
                                 nil))
                             (recur)))))))]
        {:lookup (fn [request]
                   (let [k (try (route-key-fn request)
                                (catch Throwable t
                                  (.log log Level/WARNING "weir.ring: :route-key-fn threw" t)
                                  nil))]
                     (or (when (and (some? k) (not= "" k))
                           (or (.get routes k) (.computeIfAbsent routes k make)))
                         (overflow))))
         :all (fn [] (cond-> (into {} routes)
                       (.get overflow-used) (assoc ::overflow overflow-shedder)))
         :close (fn []
                  (.close ^LoadShedder overflow-shedder)
                  (unbind-metrics! registry overflow-shedder))
         :owned? true}))))

;; ---------------------------------------------------------------------------------- handling

(defn- as-int
  "`x` as an int, or nil if it is not a whole number in int's range: casting one past it
  throws, and the application's values (a status, a priority) may be any number."
  [x]
  (when (and (int? x) (<= Integer/MIN_VALUE x Integer/MAX_VALUE))
    (int x)))

(defn- outcome-of
  "The core rule (HttpAnswers/outcomeOf), as in the servlet filter: 503 and 504 DROPPED,
  other 5xx ERROR, the rest SUCCESS."
  [response]
  (if-let [status (as-int (:status response))]
    (HttpAnswers/outcomeOf status)
    Outcome/SUCCESS))

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
  (let [p (as-int (try (priority-fn request)
                       (catch Throwable t
                         (.log log Level/WARNING
                               "weir.ring: :priority-fn threw; using the default tier" t)
                         nil)))]
    (if (and p (Priority/isValid p))
      p
      (Priority/of (int default-tier) PriorityHeaders/DEFAULT_COHORT))))

(defn- serve
  "Submits `request` and answers it through `respond` or `raise`, exactly once. `seat` is
  nil, or in the synchronous arity the request's weir.ring.seats/waiter hooks."
  ([ctx request respond raise]
   (serve ctx request respond raise nil (priority-of (:priority-fn ctx) request)))
  ([ctx request respond raise seat priority]
   (let [{:keys [lookup timeout-nanos ^Executor executor handler handler-async?
                 rejected deadline ^AtomicBoolean closed owned? seats]} ctx
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
         on-submitter? (fn [] (and (.get submitting) (identical? submitter (Thread/currentThread))))
         ;; An answer the shedder decides: the first-answer race is won here, but the
         ;; response fn and the write run on the server's thread during submit, else on the
         ;; answer pool, never on Weir's timer, where a slow client would stall every shedder.
         answer-later! (fn [f make]
                         (when (.compareAndSet done false true)
                           (if (on-submitter?)
                             (safe-call f (make))
                             (pools/hand-off #(safe-call f (make))))
                           true))
         left! (or (:left seat) (fn []))
         ticket-ref (volatile! nil)
         ;; Each task runs on a worker, handed off: the permit's latency starts there.
         run-sync (fn [^Permit permit]
                    (fn []
                      (.started permit)
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
                       (.started permit)
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
             (left!)
             (.onDeadline permit
                          (fn []
                            (answer-later! respond #(deadline request))
                            ;; A worker still holds a synchronous handler's thread, so its permit
                            ;; stays held until it returns. An async handler holds nothing we can
                            ;; see, and may never call back: give its permit back now.
                            (when handler-async? (.release permit Outcome/DROPPED))))
             (let [task (if handler-async? (run-async permit) (run-sync permit))]
               (if (and handler-async? (on-submitter?))
                 ;; Admitted at once on the server's thread: an async handler may start here.
                 (task)
                 (try
                   (.execute executor ^Runnable task)
                   (catch Throwable t
                     (.log log Level/WARNING "weir.ring: the worker pool refused a request" t)
                     (answer-later! respond #(rejected request :shutting-down))
                     (.release permit Outcome/DROPPED))))))
           (onRejected [_ reason]
             (left!)
             (when-let [k (if (and seat (identical? reason RejectReason/CANCELLED)
                                   (.get ^AtomicBoolean (:evicted seat)))
                            :queue-full
                            (reason-keyword reason))]
               (answer-later! respond #(rejected request k)))))]
     (try
       (if (.get closed)
         ;; Do not build a shedder for a new route after close!.
         (answer! respond (rejected request :shutting-down))
         (let [^LoadShedder shedder (lookup request)
               ;; close! may have closed every shedder while this lookup built a new route's:
               ;; one of the two sees the other's write, so close it here (it answers
               ;; :shutting-down, and its ticks stop).
               _ (when (and owned? (.get closed)) (.close shedder))
               ;; A synchronous request holds a server thread: cap the route by the seats.
               _ (when seat (seats/share! seats shedder))
               ticket (.submit shedder (int priority) (long timeout-nanos)
                               ^AdmissionCallback callback)]
           (vreset! ticket-ref ticket)
           (when seat ((:queued seat) ticket))))
       (catch Throwable t
         ;; Only a bug could land here; still, every request gets its one answer.
         (answer! raise t))
       (finally (.set submitting false)))
     ;; For the sync arity: gives up on a request whose thread stops waiting.
     (fn abandon! []
       (when (.compareAndSet done false true)
         (some-> ^dev.weir.Ticket @ticket-ref .cancel)
         true)))))

(defn- serve-sync
  "The synchronous Ring arity: the same path as the async one, with the server's thread
  waiting for the answer, in one of the seats that bound how many server threads the
  middleware holds (weir.ring.seats); with no seat to take, the answer is :queue-full at
  once. The request's shedder joins the seats' budget, which caps its limit. The shedder's
  timers answer on time; the extra second only guards against an answer that never comes."
  [ctx request]
  (let [fut (CompletableFuture.)
        {:keys [timeout-nanos deadline priority-fn seats]} ctx
        priority (priority-of priority-fn request)]
    (cond
      (.get ^AtomicBoolean (:closed ctx)) ((:rejected ctx) request :shutting-down)
      (not (seats/take! seats priority)) ((:rejected ctx) request :queue-full)
      :else
      (try
        (let [abandon! (serve ctx request #(.complete fut %) #(.completeExceptionally fut %)
                              (seats/waiter seats priority) priority)]
        (try
          (.get fut (unchecked-add (min (long timeout-nanos) (- Long/MAX_VALUE 1000000000))
                                   1000000000)
                TimeUnit/NANOSECONDS)
          (catch ExecutionException e
            (throw (or (.getCause e) e)))
          (catch TimeoutException _
            (abandon!)
            (deadline request))
          (catch InterruptedException _
            (abandon!)
            (.interrupt (Thread/currentThread))
            ((:rejected ctx) request :shutting-down))))
        (finally (seats/leave! seats))))))

(defn wrap-load-shedding
  "Wraps a Ring `handler` with load shedding. The returned handler has both Ring arities:
  [request] and [request respond raise].

  Options (all optional):

    :priority-fn        request -> packed dev.weir.Priority int. Default
                        (header-priority-fn): x-weir-tier, baggage, x-weir-caller,
                        x-weir-user. A throw or an invalid value means tier `default-tier`,
                        cohort 64.
    :request-timeout-ms the processing deadline, from arrival. Default 3000.
    :queue-timeout-ms   how long a request may wait to be admitted. Default a third of
                        :request-timeout-ms.
    :queue-capacity     how many may wait. Default 4096.
    :limit              a positive int (a fixed inflight limit) or a fn of no arguments
                        returning a dev.weir.Limit (called once per shedder, and once
                        when wrapping, to check it). Default adaptive.
    :rejector           a fn of no arguments returning a dev.weir.Rejector (called like
                        :limit's), e.g. #(Rejectors/none). Default adaptive.
    :name               the shedder's name in metrics and logs. Default \"ring\".
    :shedder            a dev.weir.LoadShedder to use (and share) instead of building one;
                        excludes :request-timeout-ms, :queue-timeout-ms, :queue-capacity,
                        :limit, :rejector, :name, :route-key-fn and :max-routes. Not closed
                        by `close!`.
    :route-key-fn       request -> key: one shedder per key (named name/key), so one slow
                        route cannot eat another's capacity.
    :max-routes         how many keyed shedders at most. Default 32; further keys, nil or
                        \"\" keys and a throwing :route-key-fn share one overflow shedder.
    :registry           a Micrometer MeterRegistry: every shedder's weir.* meters are
                        bound to it (requires micrometer-core on the class path). A
                        :name whose meters it has already is refused.
    :executor           a java.util.concurrent.Executor to run admitted handlers on; it must
                        not block or run tasks on the calling thread. Not closed by `close!`.
                        Default a dev.weir.WorkerPool shared by every wrapped handler: 2
                        threads at first, growing to what the limits use (at most 4096),
                        idle threads reused and kept for 60 s.
    :worker-threads     gives this handler its own pool of at most n threads (2 started at
                        once, more on demand, idle ones kept for 60 s), closed by `close!`.
                        Default: the shared pool.
    :server-threads     the server's thread pool size, for the synchronous arity, where
                        every request inside the middleware, running or queued, holds a
                        server thread: at most n - max(8, n/4) are held at once (37 of 50);
                        a request beyond takes the seat of a less important queued request
                        or is answered :queue-full at once, so the server never queues
                        requests out of Weir's sight. Each shedder that serves a synchronous
                        request, a :limit or :shedder of your own too, has its limit capped
                        by one dev.weir.ConcurrencyBudget of those seats, shared by the
                        routes: one busy route may take them all, several share them.
                        Default 50, run-jetty's :max-threads; set it to the server's maximum
                        threads in synchronous mode.
    :handler-async?     true if `handler` is a 3-arity async handler: it is called directly
                        (on the server's thread when admitted at once, on a worker
                        otherwise) and its permit is released when it responds or raises,
                        or at the deadline. Default false: a 1-arity handler run on a worker.
    :shed-status        the status of :shed and :queue-full answers, 400..599. Default 429.
    :unavailable-status the status of the other rejections and the deadline answer,
                        400..599. Default 503.
    :retry-after-seconds  the Retry-After of those answers; 0 omits it. Default 1.
    :rejection-format   their body: :text, :json or :empty. Default :text.
    :rejected-response  (fn [request reason]) -> response, reason one of :shed :queue-full
                        :queue-timeout :shutting-down :cancelled. Default: the answer of
                        dev.weir.http.HttpAnswers from the four options above, as
                        `default-rejected-response` gives with their defaults.
    :deadline-response  (fn [request]) -> response. Default likewise, as
                        `default-deadline-response`.

  The response fns never run on Weir's timer thread: answers the shedder decides there are
  written on a shared answer pool. A handler's status
  means what it means in the servlet filter (dev.weir.http.HttpAnswers/outcomeOf): 503 and
  504 tell the limit of overload, other 5xx are errors. A bad option throws
  IllegalArgumentException naming it, here rather than on the first request: the shedder
  options fill one dev.weir.LoadShedder$Builder template, validated here, from which
  every shedder is copied.

  Call `close!` on the returned handler to stop the shedders and pool it built."
  ([handler] (wrap-load-shedding handler {}))
  ([handler options]
   (when-not (ifn? handler)
     (throw (IllegalArgumentException.
             (str "weir.ring/wrap-load-shedding: handler must be a function, was "
                  (pr-str handler)))))
   (options/check options)
   (check-registry-free! options)
   (let [closed (AtomicBoolean.)
         {:keys [priority-fn executor worker-threads handler-async? rejected-response
                 deadline-response ^LoadShedder shedder server-threads]} options
         own (responses (options/answers options))
         rejected (fn [_request reason] (get own reason))
         deadline (fn [_request] (:deadline own))
         seat-bound (seats/seats (or server-threads seats/default-server-threads))
         template (options/template options)
         {:keys [lookup all owned?] close-more :close} (shedder-lookup options template)
         pool (when (and (not executor) worker-threads)
                (pools/worker-pool (str "weir-" (or (:name options) (some-> shedder .name) "ring"))
                                   worker-threads))
         timeout-nanos (cond
                         shedder (.requestTimeoutNanos shedder)
                         (:request-timeout-ms options)
                         (.toNanos TimeUnit/MILLISECONDS (:request-timeout-ms options))
                         :else (.toNanos LoadShedder$Builder/DEFAULT_REQUEST_TIMEOUT))
         ctx {:lookup lookup
              :priority-fn (or priority-fn (header-priority-fn))
              :timeout-nanos timeout-nanos
              :executor (or executor pool (pools/shared-worker-pool))
              :seats seat-bound
              :handler handler
              :handler-async? (boolean handler-async?)
              :rejected (if rejected-response (answer-fn rejected-response rejected) rejected)
              :deadline (if deadline-response (answer-fn deadline-response deadline) deadline)
              :closed closed
              :owned? owned?}]
     (with-meta
       (fn
         ([request] (serve-sync ctx request))
         ([request respond raise] (serve ctx request respond raise) nil))
       {::shedders all
        ::close (fn []
                  (when (.compareAndSet closed false true)
                    (when owned?
                      (doseq [^LoadShedder s (vals (all))]
                        (.close s)
                        ;; A closed shedder's meters would read it for good, and a new handler's
                        ;; of the same names would be refused as duplicates.
                        (unbind-metrics! (:registry options) s))
                      (when close-more (close-more)))
                    ;; shutdown, not close: accepted tasks still run (or skip a request already
                    ;; answered) and release their permits; close! does not block on handlers.
                    (when pool (.shutdown ^WorkerPool pool))))}))))

(defn shedders
  "The shedders behind a handler returned by `wrap-load-shedding`, as a map from route
  key to dev.weir.LoadShedder (the key is nil without :route-key-fn, and
  :weir.ring/overflow for the overflow shedder). For metrics, health checks and tests."
  [wrapped]
  (if-let [f (::shedders (meta wrapped))]
    (f)
    (throw (IllegalArgumentException. "not a handler returned by weir.ring/wrap-load-shedding"))))

(defn status-handler
  "A Ring handler (sync and async arities) showing the shedders behind `wrapped`, a handler
  returned by `wrap-load-shedding`: JSON by default, and with `?view=html` a self-contained
  page that polls that JSON and charts it live. The same view as the servlet filter's
  WeirStatusServlet (dev.weir.http.StatusPage documents the format); a string route key
  names its shedder, the others show the shedder's name. Route it where only operators reach
  it, outside `wrapped`."
  [wrapped]
  (shedders wrapped) ; fails now, not at the first request, if wrapped is not ours
  (status/handler #(shedders wrapped)))

(defn close!
  "Stops a handler returned by `wrap-load-shedding`: closes the shedders and shuts down the
  worker pool it built for :worker-threads (not a :shedder or :executor you supplied, nor the
  shared pools), and removes their meters from the :registry. Queued requests are answered
  503 :shutting-down; later requests too; running handlers, and admitted ones waiting for a
  worker, finish. Returns at once. Idempotent."
  [wrapped]
  (if-let [f (::close (meta wrapped))]
    (f)
    (throw (IllegalArgumentException. "not a handler returned by weir.ring/wrap-load-shedding"))))
