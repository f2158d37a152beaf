(ns weir.ring.seats
  "The synchronous arity's bound on server threads.

  A synchronous Ring server gives each request a thread until the handler returns, so a
  request waiting in Weir's queue holds a server thread as surely as a running one. Let
  them take every thread and the server queues new requests in its own first-come
  first-served queue, out of Weir's sight: a tier-1 request then waits there behind tier-5
  work, and times out. So at most `cap` synchronous requests are inside the middleware at
  once (running or queued), a few threads below the server's maximum. A request that finds
  every seat taken takes the seat of the least important request still waiting in the
  queue, if it is more important than that one (which is withdrawn and answered
  :queue-full), or is answered :queue-full at once: either way the server thread goes back
  at once, and the server's own queue stays empty. A waiter becomes evictable when its thread
  registers its ticket, just after the shedder queued it: a more important request arriving in
  that instant finds no one to evict and is answered :queue-full.

  The seats also cap the limits (`share!`): each shedder that serves a synchronous request, a
  :limit or :shedder of the caller's own too, joins the seats' dev.weir.ConcurrencyBudget of
  `cap`, so one busy route may run up to `cap` requests and several routes share them. A limit
  above the seats could never be reached, so cutting it toward them would cut nothing, latency
  could not follow, and the limit would take the queue at the seats for the service's own
  latency and stay there, every seat running and none left to queue by priority."
  (:import (dev.weir ConcurrencyBudget LoadShedder Ticket)
           (java.util Map$Entry)
           (java.util.concurrent ConcurrentSkipListMap)
           (java.util.concurrent.atomic AtomicBoolean AtomicInteger AtomicLong)))

(set! *warn-on-reflection* true)

(def default-server-threads
  "run-jetty's default :max-threads."
  50)

(defn cap
  "The most synchronous requests inside the middleware for a server of `threads` threads:
  a quarter of them, and at least 8, are left for the server's acceptors and selectors
  (up to 4 each in Jetty) and for new requests to be answered at once."
  ^long [threads]
  (max 1 (- (long threads) (max 8 (quot (+ (long threads) 3) 4)))))

(defn seats
  "Seats for a server of `threads` threads."
  [threads]
  (let [cap (cap threads)]
    {:cap cap
     :budget (ConcurrencyBudget. (int cap))
     :inside (AtomicInteger.)
     ;; key: priority * 2^40 + arrival sequence, so the last entry is the least important
     ;; waiter (the newest among equals); value: [Ticket evicted-flag].
     :waiting (ConcurrentSkipListMap.)
     :seq (AtomicLong.)}))

(defn- evict-for!
  "Withdraws the least important waiter if it is less important than `priority`; true if one
  was withdrawn."
  [{:keys [^ConcurrentSkipListMap waiting]} priority]
  (loop []
    (let [^Map$Entry e (.lastEntry waiting)]
      (if (and e (> (bit-shift-right (long (.getKey e)) 40) (long priority)))
        (if (.remove waiting (.getKey e) (.getValue e))
          (let [[^Ticket ticket ^AtomicBoolean evicted] (.getValue e)]
            (.set evicted true)
            ;; false: it was admitted or rejected meanwhile; look again.
            (if (.cancel ticket) true (recur)))
          (recur))
        false))))

(defn take!
  "Takes a seat for a request of `priority`: true if one was free or was taken from a less
  important waiter, false if the request must be answered at once."
  [{:keys [^AtomicInteger inside ^long cap] :as s} priority]
  (loop []
    (let [n (.get inside)]
      (cond
        (< n cap) (if (.compareAndSet inside n (inc n)) true (recur))
        ;; The evicted request leaves as soon as its answer wakes its thread.
        (evict-for! s priority) (do (.incrementAndGet inside) true)
        :else false))))

(defn leave!
  "Gives a seat back."
  [{:keys [^AtomicInteger inside]}]
  (.decrementAndGet inside))

(defn share!
  "Caps `shedder`'s limit by the seats' budget, shared with every other shedder serving
  synchronous requests through these seats, unless it is capped already (a volatile read): a
  :shedder of the caller's own shared by two wrapped handlers keeps the first one's budget,
  rather than moving between the two at every request."
  [{:keys [^ConcurrencyBudget budget]} ^LoadShedder shedder]
  (when (nil? (.concurrencyBudget shedder))
    (.capConcurrency shedder budget)))

(defn waiter
  "Hooks for one seated request: :queued (called with its Ticket after submit) registers it
  as a waiter unless it already left the queue; :left (called when it is admitted or
  rejected) unregisters it; :evicted says whether it was withdrawn for a more important one."
  [{:keys [^ConcurrentSkipListMap waiting ^AtomicLong seq]} priority]
  (let [k (+ (bit-shift-left (long priority) 40) (bit-and (.incrementAndGet seq) 0xFFFFFFFFFF))
        left (AtomicBoolean.)
        evicted (AtomicBoolean.)]
    {:evicted evicted
     :queued (fn [^Ticket ticket]
               (when-not (.get left)
                 (.put waiting k [ticket evicted])
                 ;; Left while being registered: one of the two removes always sees the other.
                 (when (.get left) (.remove waiting k))))
     :left (fn []
             (.set left true)
             (.remove waiting k))}))
