(ns weir.ring.priority
  "A request's priority from its headers, through Weir's core contract
  (dev.weir.http.PriorityHeaders): the same rules as the servlet filter."
  (:require [clojure.string :as str])
  (:import (dev.weir Cohorts)
           (dev.weir.http HeaderLookup PriorityHeaders PriorityHeaders$Builder)))

(set! *warn-on-reflection* true)

(def ring-headers
  "A Ring request's headers for the core contract. Ring's adapters lower-case header names
  and join repeated headers with commas, which is what the contract asks; a value that is
  not a string is absent."
  (reify HeaderLookup
    (header [_ request name]
      (let [headers (:headers request)]
        (when (map? headers)
          (let [v (get headers name)]
            (when (string? v) v)))))))

(defn- bad [option value e]
  (throw (IllegalArgumentException.
          (str option " " (or (some-> ^Throwable e .getMessage) "is invalid") ", was "
               (pr-str value))
          e)))

(defn- setting [option value f]
  (try (f)
       (catch IllegalArgumentException e (bad option value e))
       (catch ClassCastException e (bad option value e))
       ;; (int x) of a number past int's range
       (catch ArithmeticException _ (bad option value (IllegalArgumentException. "is out of range")))))

(def known-options
  #{:default-tier :cohorts :user-header :tier-header :caller-header :caller-tiers
    :max-header-length :baggage?})

(defn priority-headers
  "A dev.weir.http.PriorityHeaders from `header-priority-fn`'s options. Throws
  IllegalArgumentException naming a bad or unknown option."
  ^PriorityHeaders [{:keys [default-tier cohorts tier-header caller-header caller-tiers
                            max-header-length baggage?] :as options}]
  (when-not (map? options)
    (throw (IllegalArgumentException.
            (str "weir.ring/header-priority-fn: options must be a map, was " (pr-str options)))))
  (doseq [k (keys options)]
    (when-not (contains? known-options k)
      (throw (IllegalArgumentException.
              (str k " is not a known option of weir.ring/header-priority-fn; known options are "
                   (str/join " " (sort known-options)) ", was " (pr-str (get options k)))))))
  (let [b (PriorityHeaders/builder)]
    (when (some? default-tier)
      (setting :default-tier default-tier
            #(if (int? default-tier) (.defaultTier b (int default-tier)) (throw (ClassCastException.)))))
    (when (some? cohorts)
      (setting :cohorts cohorts #(.cohorts b ^Cohorts cohorts)))
    (when (contains? options :user-header)
      (let [h (:user-header options)]
        (setting :user-header h #(if (or (nil? h) (and (string? h) (not (str/blank? h))))
                                (.userKeyHeader b ^String h)
                                (throw (ClassCastException.))))))
    (when (some? tier-header) (setting :tier-header tier-header #(.tierHeader b ^String tier-header)))
    (when (some? caller-header)
      (setting :caller-header caller-header #(.callerHeader b ^String caller-header)))
    (when (some? caller-tiers)
      (setting :caller-tiers caller-tiers
            #(if (map? caller-tiers)
               (doseq [[caller tier] caller-tiers]
                 (if (int? tier) (.callerTier b ^String caller (int tier)) (throw (ClassCastException.))))
               (throw (ClassCastException.)))))
    (when (some? max-header-length)
      (setting :max-header-length max-header-length
            #(if (int? max-header-length)
               (.maxHeaderLength b (int max-header-length))
               (throw (ClassCastException.)))))
    (when (some? baggage?)
      (setting :baggage? baggage? #(.readBaggage b (boolean (if (boolean? baggage?) baggage? (throw (ClassCastException.)))))))
    (let [longest (or max-header-length PriorityHeaders/DEFAULT_MAX_HEADER_LENGTH)]
      (when (some #(> (count (key %)) longest) caller-tiers)
        (bad :caller-tiers caller-tiers
             (IllegalArgumentException.
              (str "has a caller longer than :max-header-length (" longest
                   "), whose header is never read")))))
    (.build b)))

(defn header-priority-fn
  "A priority function, request -> packed dev.weir.Priority int, reading the same headers
  by the same rules as Weir's servlet filter (dev.weir.http.PriorityHeaders):

    x-weir-tier    \"t\" or \"t:c\": the tier (0..5) and, optionally, the cohort (0..127)
    baggage        W3C baggage members weir-tier=t and weir-cohort=c, for what
                   x-weir-tier does not give
    x-weir-caller  the calling service, looked up in :caller-tiers when no tier is given
    x-weir-user    a user key, hashed to a cohort by :cohorts when no cohort is given

  A value that is malformed, out of range, repeated or too long (over 256 characters;
  8192 for baggage) is ignored as a whole, as if absent; the request falls back to
  :default-tier and to the user's cohort or, with no user, a random cohort (so a tier can
  be shed in part). It never throws.

  Options, all optional: :default-tier (0..5, default 3), :cohorts (a dev.weir.Cohorts,
  default hourly rotation), :user-header (default \"x-weir-user\"; nil to ignore users),
  :tier-header (default \"x-weir-tier\"), :caller-header (default \"x-weir-caller\"),
  :caller-tiers (a map of caller name to tier, default {}), :max-header-length (1..8192,
  default 256), :baggage? (default true). A bad or unknown option throws
  IllegalArgumentException naming it."
  ([] (header-priority-fn {}))
  ([options]
   (let [headers (priority-headers options)]
     (fn [request] (.priority headers request ring-headers)))))
