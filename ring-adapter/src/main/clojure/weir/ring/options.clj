(ns weir.ring.options
  "wrap-load-shedding's options: checked when the middleware is created, and turned into
  Weir's core settings, a dev.weir.LoadShedder$Builder template and dev.weir.http.HttpAnswers,
  so that no option accepted there can fail on a request."
  (:require [clojure.string :as str])
  (:import (dev.weir Limit LoadShedder LoadShedder$Builder Rejector)
           (dev.weir.control Limits)
           (dev.weir.http HttpAnswers RejectionFormat)
           (java.time Duration)
           (java.util.concurrent Executor)
           (java.util.function Supplier)))

(set! *warn-on-reflection* true)

(def known-options
  #{:priority-fn :request-timeout-ms :queue-timeout-ms :queue-capacity :limit :rejector
    :shedder :name :route-key-fn :max-routes :registry :executor :worker-threads
    :server-threads :handler-async? :rejected-response :deadline-response :shed-status :unavailable-status
    :retry-after-seconds :rejection-format})

(def ^:private shedder-settings
  "Options that configure shedders this middleware builds, so meaningless with `:shedder`."
  [:request-timeout-ms :queue-timeout-ms :queue-capacity :limit :rejector :name :route-key-fn
   :max-routes])

(defn bad [option value requirement]
  (throw (IllegalArgumentException.
          (str "weir.ring/wrap-load-shedding: option " option " " requirement ", was "
               (pr-str value)))))

(defn fn-like?
  "A fn, var or keyword; not a map or set, which are callable but surely a mistake here."
  [x]
  (and (ifn? x) (not (coll? x))))

(defn- meter-registry?
  "Whether `x` is a Micrometer MeterRegistry, without needing Micrometer to be present."
  [x]
  (let [^Class c (try (Class/forName "io.micrometer.core.instrument.MeterRegistry")
                      (catch ClassNotFoundException _ nil))]
    (boolean (and c (.isInstance c x)))))

(defn check
  "Throws IllegalArgumentException naming the first bad option; what the core settings
  check is checked by `template` and `answers`."
  [options]
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
  (doseq [k [:request-timeout-ms :queue-timeout-ms :queue-capacity :max-routes :worker-threads
             :server-threads]]
    (let [v (get options k)]
      (when (and (some? v) (not (and (int? v) (pos? v))))
        (bad k v "must be a positive integer"))))
  (doseq [k [:queue-capacity :max-routes :worker-threads :server-threads :limit]]
    (let [v (get options k)]
      (when (and (int? v) (> v Integer/MAX_VALUE))
        (bad k v (str "must be at most " Integer/MAX_VALUE)))))
  (let [{:keys [limit shedder executor name registry handler-async?]} options]
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
    (when-not (or (nil? handler-async?) (boolean? handler-async?))
      (bad :handler-async? handler-async? "must be true or false"))))

(defn- factory
  "A Supplier calling `f` for each shedder, checking that it returns a `type`."
  ^Supplier [option f ^Class type]
  (reify Supplier
    (get [_]
      (let [x (try (f)
                   (catch Throwable t
                     ;; Named here: a wrong arity is an IllegalArgumentException too, whose
                     ;; message names no setting.
                     (bad option f (str "threw when called with no arguments: " t))))]
        (if (instance? type x)
          x
          (bad option x (str "must return a " (.getName type))))))))

(def ^:private setting->option
  {"requestTimeout" :request-timeout-ms "queueTimeout" :queue-timeout-ms
   "queueCapacity" :queue-capacity "limit" :limit "rejector" :rejector "name" :name})

(defn template
  "The dev.weir.LoadShedder$Builder every shedder of the middleware is copied from,
  validated; nil with :shedder. A setting core refuses throws naming the option."
  ^LoadShedder$Builder [options]
  (when-not (:shedder options)
    (let [{:keys [request-timeout-ms queue-timeout-ms queue-capacity limit rejector name]} options
          b (LoadShedder/builder)]
      (try
        (when name (.name b ^String name))
        (when request-timeout-ms (.requestTimeout b (Duration/ofMillis request-timeout-ms)))
        (when queue-timeout-ms (.queueTimeout b (Duration/ofMillis queue-timeout-ms)))
        (when queue-capacity (.queueCapacity b (int queue-capacity)))
        (cond
          (int? limit) (do (Limits/fixed (int limit))
                           (.limit b (reify Supplier (get [_] (Limits/fixed (int limit))))))
          limit (.limit b (factory :limit limit Limit)))
        (when rejector (.rejector b (factory :rejector rejector Rejector)))
        (.validate b)
        (catch IllegalArgumentException e
          (let [msg (str (.getMessage e))]
            (if (str/starts-with? msg "weir.ring/")
              (throw e)
              (let [option (get setting->option (re-find #"^[a-zA-Z]+" msg))]
                (if option
                  (bad option (get options option) (str "is refused: " msg))
                  (throw (IllegalArgumentException.
                          (str "weir.ring/wrap-load-shedding: the shedder's settings are refused: "
                               msg)
                          e)))))))))))

(def ^:private formats
  {:text RejectionFormat/TEXT :json RejectionFormat/JSON :empty RejectionFormat/EMPTY})

(defn answers
  "The dev.weir.http.HttpAnswers from :shed-status (default 429), :unavailable-status (503),
  :retry-after-seconds (1; 0 omits Retry-After) and :rejection-format (:text, :json or
  :empty; default :text)."
  ^HttpAnswers [{:keys [shed-status unavailable-status retry-after-seconds rejection-format]}]
  (let [b (HttpAnswers/builder)
        int-option (fn [option v f]
                     (when (some? v)
                       (when-not (int? v) (bad option v "must be an integer"))
                       (when-not (<= Integer/MIN_VALUE v Integer/MAX_VALUE)
                         (bad option v "is out of range"))
                       (try (f) (catch IllegalArgumentException e
                                  (bad option v (str "is refused: " (.getMessage e)))))))]
    (int-option :shed-status shed-status #(.shedStatus b (int shed-status)))
    (int-option :unavailable-status unavailable-status #(.unavailableStatus b (int unavailable-status)))
    (int-option :retry-after-seconds retry-after-seconds
                #(.retryAfter b (Duration/ofSeconds retry-after-seconds)))
    (when (some? rejection-format)
      (.format b (or (formats rejection-format)
                     (bad :rejection-format rejection-format "must be :text, :json or :empty"))))
    (.build b)))
