(ns weir.status-test
  "weir.ring/status-handler: the servlet filter's status JSON and live page, for a wrapped
  handler's shedders, in both arities."
  (:require [clojure.string :as str]
            [clojure.test :refer [deftest is]]
            [weir.ring :as wr])
  (:import (java.io InputStream)
           (java.nio.charset StandardCharsets)))

(set! *warn-on-reflection* true)

(defn- async [handler request]
  (let [p (promise)]
    (handler request #(deliver p [:respond %]) #(deliver p [:raise %]))
    (deref p 10000 [:timeout])))

(deftest status-handler-serves-json-and-the-page
  (let [h (wr/wrap-load-shedding (fn [_] {:status 200 :body "ok"}) {:route-key-fn :uri})
        status (wr/status-handler h)]
    (try
      (dotimes [_ 2]
        (is (= 200 (:status (h {:uri "/a" :request-method :get :headers {"x-weir-tier" "1"}})))))
      (let [{:keys [status headers body]} (status {:uri "/weir/status" :request-method :get})]
        (is (= 200 status))
        (is (= "application/json" (get headers "Content-Type")))
        (is (str/starts-with? body "{\"shedders\":{\"/a\":{\"limit\":") body)
        ;; Admissions are counted before the handler runs; a release may follow the response
        ;; on the worker, so "succeeded" could still read 1 here.
        (is (str/includes? body "\"admitted\":[0,2,0,0,0,0]") body)
        (is (str/includes? body "\"queueWaitNanos\":[") body))
      (let [[kind {:keys [headers body]}] (async status {:uri "/weir/status"
                                                         :query-string "view=html"})]
        (is (= :respond kind))
        (is (str/starts-with? (get headers "Content-Type") "text/html"))
        (is (str/starts-with? (String. (.readAllBytes ^InputStream body) StandardCharsets/UTF_8)
                              "<!DOCTYPE html>")))
      (let [[kind {:keys [body]}] (async status {:uri "/weir/status" :query-string "view=json"})]
        (is (= :respond kind))
        (is (str/includes? body "\"/a\":{") body))
      (finally (wr/close! h)))))

(deftest status-handler-names-an-unkeyed-shedder-by-its-name
  (let [h (wr/wrap-load-shedding (fn [_] {:status 200 :body "ok"}) {:name "api"})]
    (try
      (h {:uri "/" :request-method :get})
      (is (str/starts-with? (:body ((wr/status-handler h) {:uri "/s"}))
                            "{\"shedders\":{\"api\":{\"limit\":"))
      (finally (wr/close! h)))))

(deftest status-handler-refuses-a-handler-it-did-not-wrap
  (is (thrown? IllegalArgumentException (wr/status-handler (fn [_] {:status 200})))))
