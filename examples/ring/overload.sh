#!/usr/bin/env bash
# Measures the Ring middleware at 1.5x capacity on run-jetty's default thread pool:
# examples/ring/overload.sh [runs=10] [mode=sync|async] [extra server args, e.g. :max-threads 400]
# Each run starts a fresh server JVM (weir.example.overload: 8 connections x 20 ms = 400 req/s
# downstream) on 127.0.0.1, drives it for 3 s warm-up + 10 s at 600 req/s with the examples'
# LoadGenerator (examples/ring/load/RingLoad.java), prints tier-1 success and P99 (and how tier 1's
# failures split: 429, 503, late, other), and stops it. With WEIR_TRACE=PREFIX set, the server
# prints its shedders' state every 250 ms, kept in PREFIX.N for run N. With WEIR_PIN=1, the server
# runs on CPU 0 and the load generator on CPU 1 (taskset), so that neither starves the other. With
# WEIR_JVM_WARMUP=S, each fresh server first serves S s (after 3 s unmeasured) at 0.5x, 200 req/s,
# so that its JIT has compiled the request path before the overload starts.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-10}; mode=${2:-sync}; shift $(( $# > 2 ? 2 : $# )) || true
mvn -B -q install -pl ring-adapter,examples -am -DskipTests
mvn -B -q -f examples/ring/pom.xml compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt
mvn -B -q -pl examples dependency:build-classpath -Dmdep.outputFile=target/cp.txt
server_cp="examples/ring/target/classes:$(cat examples/ring/target/cp.txt)"
load_cp="examples/target/classes:$(cat examples/target/cp.txt)"
for i in $(seq 1 "$runs"); do
  fifo=$(mktemp -u); mkfifo "$fifo"
  pin_server=(); pin_load=()
  if [ -n "${WEIR_PIN:-}" ]; then pin_server=(taskset -c 0); pin_load=(taskset -c 1); fi
  "${pin_server[@]}" java -cp "$server_cp" clojure.main -m weir.example.overload 0 "$mode" "$@" < "$fifo" > "$fifo.out" 2>&1 &
  server=$!
  exec 3> "$fifo"                                   # the server stops when this closes
  for _ in $(seq 1 600); do grep -q '^listening' "$fifo.out" 2>/dev/null && break; sleep 0.1; done
  port=$(awk '/^listening/ {print $2}' "$fifo.out")
  [ -n "$port" ] || { cat "$fifo.out"; kill "$server"; exit 1; }
  if [ -n "${WEIR_JVM_WARMUP:-}" ]; then
    "${pin_load[@]}" java -cp "$load_cp" examples/ring/load/RingLoad.java "http://127.0.0.1:$port/" 200 "$WEIR_JVM_WARMUP" "$i" > /dev/null
  fi
  load_before=$(cut -d' ' -f1 /proc/loadavg)
  line=$("${pin_load[@]}" java -cp "$load_cp" examples/ring/load/RingLoad.java "http://127.0.0.1:$port/" 600 10 "$i" "${WEIR_LOAD_WARMUP:-5}")
  # The machine's load average around the run: above the core count, other work competed.
  printf 'run %2d: %s | loadavg %s -> %s\n' "$i" "$line" "$load_before" "$(cut -d' ' -f1 /proc/loadavg)"
  exec 3>&-
  wait "$server" || true
  if [ -n "${WEIR_TRACE:-}" ]; then cp "$fifo.out" "$WEIR_TRACE.$i"; fi
  rm -f "$fifo" "$fifo.out"
done
