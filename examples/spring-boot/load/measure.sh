# Sourced by examples/spring-boot/overload.sh and examples/war/overload.sh: one measured run
# against a server just started, with $load_cp the examples module's class path.
#
#   measure LABEL URL STATUS_URL ROUTE RATE SEED GUARD
#
# waits until URL answers (at most a minute), offers it RATE req/s with BootLoad.java (10 s of
# warm-up, 30 s measured) and prints "LABEL: " and BootLoad's line; with GUARD=weir, also what the
# route named ROUTE on STATUS_URL holds and queues once the load is over.
measure() {
  local label=$1 url=$2 status=$3 route=$4 rate=$5 seed=$6 guard=$7 line held=""
  for _ in $(seq 1 300); do curl -s -o /dev/null "$url" && break; sleep 0.2; done
  line=$(java -cp "$load_cp" examples/spring-boot/load/BootLoad.java "$url" "$rate" 30 "$seed")
  if [ "$guard" = weir ]; then
    # Every request answered, nothing left holding a permit or waiting: both 0 once the load ends.
    held=$(curl -s "$status" \
      | grep -o "\"$route\":{\"limit\":[0-9]*,\"inflight\":[0-9]*,\"queued\":[0-9]*" \
      | sed 's/.*"inflight":\([0-9]*\),"queued":\([0-9]*\)/ | after: inflight \1, queued \2/')
  fi
  printf '%s: %s%s\n' "$label" "$line" "$held"
}
