(ns weir.junit
  "Runs clojure.test tests one var at a time for JUnit: see dev.weir.ring.ClojureTests."
  (:require [clojure.java.io :as io]
            [clojure.string :as str]
            [clojure.test :as t]))

(defn test-namespaces
  "The test namespaces under `dir` (a directory of .clj files): every *_test.clj file."
  [dir]
  (let [root (io/file dir)]
    (->> (file-seq root)
         (filter #(str/ends-with? (.getName ^java.io.File %) "_test.clj"))
         (map #(-> (.relativize (.toPath root) (.toPath ^java.io.File %))
                   str
                   (str/replace #"\.clj$" "")
                   (str/replace java.io.File/separator ".")
                   (str/replace "_" "-")
                   symbol))
         sort)))

(defn test-vars
  "Loads `ns-sym` and returns its deftest vars in source order."
  [ns-sym]
  (require ns-sym)
  (->> (vals (ns-interns ns-sym))
       (filter (comp :test meta))
       (sort-by (comp :line meta))))

(defn run-var!
  "Runs one deftest through clojure.test/test-vars (so fixtures apply) and throws an
  AssertionError describing every failure and error, so JUnit sees them."
  [v]
  (let [problems (atom [])
        report t/report]
    (binding [t/report (fn [m]
                         (when (#{:fail :error} (:type m))
                           (swap! problems conj (assoc m :testing (t/testing-contexts-str))))
                         (report m))]
      (t/test-vars [v]))
    (when-let [ps (seq @problems)]
      (let [msg (str/join
                 "\n"
                 (for [{:keys [type message expected actual testing file line]} ps]
                   (str (name type) " in " v " (" file ":" line ")"
                        (when (seq testing) (str " " testing))
                        (when message (str ": " message))
                        "\n  expected: " (pr-str expected)
                        "\n    actual: " (if (instance? Throwable actual)
                                           (str actual)
                                           (pr-str actual)))))
            cause (some #(when (instance? Throwable (:actual %)) (:actual %)) ps)]
        (throw (AssertionError. ^Object msg cause))))))
