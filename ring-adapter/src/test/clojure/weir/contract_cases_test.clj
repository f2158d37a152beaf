(ns weir.contract-cases-test
  "The core contract's table (core/src/test/resources/dev/weir/http/contract-cases.tsv)
  through the Ring middleware: priorities through its header lookup, answers through its
  default responses, statuses through a real shedder's counters."
  (:require [clojure.java.io :as io]
            [clojure.string :as str]
            [clojure.test :refer [deftest is testing]]
            [weir.ring :as wr])
  (:import (dev.weir Cohorts LoadShedder Priority Snapshot$Counter)
           (dev.weir.control Limits Rejectors)
           (java.time Duration)
           (java.util.function Supplier)))

(set! *warn-on-reflection* true)

(def ^:private table "../core/src/test/resources/dev/weir/http/contract-cases.tsv")
(def ^:private ^Cohorts cohorts (Cohorts/rotating (Duration/ofDays 3650)))

(defn- rows [kind]
  (with-open [r (io/reader table)]
    (->> (line-seq r)
         (filter #(str/starts-with? % (str kind "\t")))
         (mapv #(str/split % #"\t" -1)))))

(defn- expand
  "{N*text} stands for text repeated N times."
  [s]
  (str/replace s #"\{(\d+)\*([^}]*)\}" (fn [[_ n text]] (apply str (repeat (parse-long n) text)))))

(defn- ring-headers
  "The header cell as a Ring :headers map: names in lower case, repeated headers joined
  with commas, as Ring's adapters present them."
  [cell]
  (if (= cell "-")
    {}
    (reduce (fn [m pair]
              (let [i (str/index-of pair ":")
                    k (str/lower-case (str/trim (subs pair 0 i)))
                    v (str/trim (expand (subs pair (inc i))))]
                (update m k #(if % (str % "," v) v))))
            {}
            (str/split cell #" \| "))))

(deftest priorities-through-the-header-priority-fn
  (let [priority-of (wr/header-priority-fn {:caller-tiers {"checkout" 0 "batch" 5}
                                            :cohorts cohorts})
        cases (rows "priority")]
    (is (< 40 (count cases)))
    (doseq [[_ cell tier cohort why] cases]
      (let [p (priority-of {:headers (ring-headers cell)})
            what (str (subs cell 0 (min 80 (count cell))) " (" why ")")]
        (is (Priority/isValid p) what)
        (is (= (parse-long tier) (Priority/tier p)) what)
        (cond
          (= cohort "*") nil
          (str/starts-with? cohort "user:")
          (is (= (.cohort cohorts ^String (subs cohort 5)) (Priority/cohort p)) what)
          :else (is (= (parse-long cohort) (Priority/cohort p)) what))))))

(def ^:private reason-keyword
  {"SHED" :shed "QUEUE_FULL" :queue-full "QUEUE_TIMEOUT" :queue-timeout
   "SHUTTING_DOWN" :shutting-down "CANCELLED" :cancelled})

(deftest answers-through-the-default-responses
  (doseq [[_ reason status outcome retry-after] (rows "answer")]
    (let [r (if (= reason "DEADLINE")
              (wr/default-deadline-response {})
              (wr/default-rejected-response {} (reason-keyword reason)))]
      (is (= (parse-long status) (:status r)) reason)
      (is (= outcome (get-in r [:headers "X-Weir-Outcome"])) reason)
      (is (= retry-after (get-in r [:headers "Retry-After"])) reason)
      (is (= "no-store" (get-in r [:headers "Cache-Control"])) reason))))

(deftest shutting-down-through-the-middleware
  (let [h (wr/wrap-load-shedding (fn [_] {:status 200}) {:limit 1 :worker-threads 1})]
    (wr/close! h)
    (let [r (h {:uri "/"})]
      (is (= 503 (:status r)))
      (is (= "shutting-down" (get-in r [:headers "X-Weir-Outcome"]))))))

(deftest application-statuses-through-the-middleware
  (let [shedder (-> (LoadShedder/builder)
                    (.limit (reify Supplier (get [_] (Limits/fixed 4))))
                    (.rejector (reify Supplier (get [_] (Rejectors/none))))
                    (.build))
        h (wr/wrap-load-shedding (fn [{:keys [status]}] {:status status})
                                 {:shedder shedder :worker-threads 1})
        counter {"SUCCESS" Snapshot$Counter/SUCCEEDED "ERROR" Snapshot$Counter/FAILED
                 "DROPPED" Snapshot$Counter/DROPPED}]
    (try
      (doseq [[_ status outcome] (rows "outcome")]
        (let [^Snapshot$Counter c (counter outcome)
              before (.count shedder c 2)]
          (is (= (parse-long status)
                 (:status (h {:status (parse-long status) :headers {"x-weir-tier" "2"}}))))
          ;; The permit is released right after the answer; poll briefly for the count.
          (is (loop [n 0]
                (cond (= (inc before) (.count shedder c 2)) true
                      (< n 2000) (do (Thread/sleep 5) (recur (inc n)))
                      :else false))
              (str "status " status " should count as " outcome))))
      (finally (wr/close! h) (.close shedder)))))
