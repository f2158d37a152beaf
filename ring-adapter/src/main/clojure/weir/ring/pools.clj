(ns weir.ring.pools
  "The middleware's threads: the worker pool admitted handlers run on, and the answer pool
  that writes answers decided on Weir's timer thread (queue timeouts, deadlines), so that
  a slow client never stalls the timer every shedder shares."
  (:import (dev.weir WorkerPool)
           (java.time Duration)
           (java.util.concurrent Executor)
           (java.util.logging Level Logger)))

(set! *warn-on-reflection* true)

(def ^:private ^Logger log (Logger/getLogger "weir.ring"))

(def core-threads
  "Threads each pool keeps when idle."
  2)

(def keep-alive
  "How long a thread above the core waits idle before it ends."
  (Duration/ofSeconds 60))

(def shared-max-threads
  "The shared worker pool's maximum: beyond it admitted work waits for a thread (the
  deadline still answers on time)."
  4096)

(defn worker-pool
  "An elastic pool of at most `max-threads`, for one wrapped handler's :worker-threads."
  ^WorkerPool [^String name max-threads]
  (WorkerPool/elastic name (int (min core-threads max-threads)) (int max-threads) keep-alive))

(def ^:private shared
  (delay (WorkerPool/elastic "weir-ring-worker" (int core-threads) (int shared-max-threads)
                             keep-alive)))

(defn shared-worker-pool
  "The worker pool every wrapped handler without :executor or :worker-threads shares: it
  grows to what their limits use, and keeps idle threads for `keep-alive`. Never closed."
  ^WorkerPool []
  @shared)

(def ^:private answers
  ;; A slow reader blocks one thread here; the pool grows rather than queue other answers.
  (delay (WorkerPool/elastic "weir-ring-answer" 1 256 keep-alive)))

(defn answer-pool
  "The shared pool for answers decided off the server's thread. Never closed."
  ^WorkerPool []
  @answers)

(defn hand-off
  "Runs `f` on the answer pool; on the calling thread only if the pool refuses it."
  [f]
  (try
    (.execute ^Executor (answer-pool) ^Runnable f)
    (catch Throwable t
      (.log log Level/WARNING "weir.ring: the answer pool refused an answer; answering inline" t)
      (f))))
