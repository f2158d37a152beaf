#!/usr/bin/env bash
# Measures Weir's servlet filter in a Spring Boot 3.5 service, as a new user deploys it:
# examples/spring-boot/overload.sh [server=tomcat|undertow|jetty] [guard=weir|none] [rate=600] [runs=1]
#   [extra server arguments, e.g. --server.jetty.threads.max=24]
# Each run starts a fresh server JVM on 127.0.0.1 (GET /work holds a thread for 500 ms; Boot's
# defaults: Tomcat's and Jetty's 200 threads, a capacity of 400 req/s; Undertow's 8 workers per
# I/O thread, 16 on 2 cores, 32 req/s), drives it open-loop for 10 s of warm-up and 30 s measured
# at RATE req/s with the examples' LoadGenerator (load/BootLoad.java), prints one line (with Weir,
# also what its route holds and queues once the load is over, from /weir/status) and stops it.
set -euo pipefail
cd "$(dirname "$0")/../.."
server=${1:-tomcat}; guard=${2:-weir}; rate=${3:-600}; runs=${4:-1}; shift $(( $# > 4 ? 4 : $# ))
case "$server" in tomcat) profile=();; undertow|jetty) profile=(-P"$server");;
  *) echo "server: tomcat, undertow or jetty, not $server" >&2; exit 2;; esac
case "$guard" in weir|none) ;; *) echo "guard: weir or none, not $guard" >&2; exit 2;; esac
mvn -B -q install -pl servlet-filter,examples -am -DskipTests
mvn -B -q -f examples/spring-boot/pom.xml "${profile[@]}" clean package
mvn -B -q -pl examples dependency:build-classpath -Dmdep.outputFile=target/cp.txt
load_cp="examples/target/classes:$(cat examples/target/cp.txt)"
. examples/spring-boot/load/measure.sh
port=18480
for i in $(seq 1 "$runs"); do
  java -jar examples/spring-boot/target/weir-example-spring-boot-0.1.0-SNAPSHOT.jar \
    --server.port=$port --server.address=127.0.0.1 --guard="$guard" \
    --logging.level.root=WARN "$@" > "examples/spring-boot/target/server.$i.log" 2>&1 &
  app=$!
  trap 'kill $app 2>/dev/null || true' EXIT
  measure "$server $guard $rate req/s, run $i" "http://127.0.0.1:$port/work" \
    "http://127.0.0.1:$port/weir/status" "GET /" "$rate" $((41 + i)) "$guard"
  kill "$app"; wait "$app" 2>/dev/null || true
  trap - EXIT
done
