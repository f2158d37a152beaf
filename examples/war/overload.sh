#!/usr/bin/env bash
# Measures Weir's servlet filter in a WAR on a standalone container, as a user deploys it there:
# examples/war/overload.sh [server=tomcat|jetty] [guard=weir|none] [rate=600] [runs=1]
# The WAR (web.xml as servlet-filter/README.md shows; WEB-INF/lib holds weir-servlet and
# weir-core) is deployed exploded at /app on Tomcat 10.1 or on Jetty 12.1 (its ee10 environment),
# each unpacked from its distribution on Maven Central into examples/war/target on first use.
# There the filter runs in the webapp's class loader: Jetty hides its own classes from it, Tomcat
# shows some. Each run starts a fresh server on 127.0.0.1 (GET /app/work holds one of the default
# 200 threads for 500 ms: a capacity of 400 req/s), drives it open-loop for 10 s of warm-up and
# 30 s measured at RATE req/s with the examples' LoadGenerator (spring-boot/load/BootLoad.java),
# prints one line (with Weir, also what its route holds and queues once the load is over, from
# /app/weir/status) and stops it. guard=none deploys the same WAR without the filter.
set -euo pipefail
cd "$(dirname "$0")/../.."
server=${1:-tomcat}; guard=${2:-weir}; rate=${3:-600}; runs=${4:-1}
tomcat_version=10.1.48
jetty_version=12.1.4
case "$server" in tomcat|jetty) ;; *) echo "server: tomcat or jetty, not $server" >&2; exit 2;; esac
case "$guard" in weir|none) ;; *) echo "guard: weir or none, not $guard" >&2; exit 2;; esac
mvn -B -q install -pl examples,examples/war -am -DskipTests
mvn -B -q -pl examples dependency:build-classpath -Dmdep.outputFile=target/cp.txt
load_cp="examples/target/classes:$(cat examples/target/cp.txt)"
. examples/spring-boot/load/measure.sh
target=$PWD/examples/war/target
port=18481

# The container, unpacked once.
if [ "$server" = tomcat ]; then
  dist=org.apache.tomcat:tomcat:$tomcat_version:tar.gz; home=$target/apache-tomcat-$tomcat_version
else
  dist=org.eclipse.jetty:jetty-home:$jetty_version:tar.gz; home=$target/jetty-home-$jetty_version
fi
if [ ! -d "$home" ]; then
  mvn -B -q -pl examples/war dependency:copy -Dartifact="$dist" -DoutputDirectory="$target/dist"
  tar xzf "$target"/dist/*"${home##*-}".tar.gz -C "$target"
fi

# The webapp, exploded; without the filter and its status page for guard=none.
if [ "$server" = tomcat ]; then
  webapps=$home/webapps
  # Only this app, on 127.0.0.1:$port, and no shutdown port.
  rm -rf "$webapps" && mkdir -p "$webapps"
  sed -i -e "s/port=\"8080\"/port=\"$port\" address=\"127.0.0.1\"/" \
    -e 's/<Server port="8005"/<Server port="-1"/' "$home/conf/server.xml"
else
  base=$target/jetty-base
  if [ ! -d "$base" ]; then
    mkdir -p "$base"
    (cd "$base" && java -jar "$home/start.jar" --add-modules=server,http,ee10-deploy >/dev/null 2>&1)
  fi
  webapps=$base/webapps
  rm -rf "${webapps:?}"/*
fi
cp -r "$target/weir-example" "$webapps/app"
if [ "$guard" = none ]; then
  sed -i '/<!-- weir:/,/<!-- \/weir -->/d' "$webapps/app/WEB-INF/web.xml"
fi

for i in $(seq 1 "$runs"); do
  log=$target/server.$i.log
  if [ "$server" = tomcat ]; then
    "$home/bin/catalina.sh" run > "$log" 2>&1 &
  else
    (cd "$base" && exec java -jar "$home/start.jar" jetty.http.host=127.0.0.1 \
      jetty.http.port=$port) > "$log" 2>&1 &
  fi
  app=$!
  trap 'kill $app 2>/dev/null || true' EXIT
  measure "$server $guard $rate req/s, run $i" "http://127.0.0.1:$port/app/work" \
    "http://127.0.0.1:$port/app/weir/status" "GET /work" "$rate" $((41 + i)) "$guard"
  kill "$app"; wait "$app" 2>/dev/null || true
  trap - EXIT
done
