#!/usr/bin/env bash
# Runs the Ring example: installs weir-ring (tests skipped), then starts the app on
# 127.0.0.1 (port $1, default 8080; 0 picks a free one). Stop it with Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin/setup
mvn -B -q install -pl ring-adapter -am -DskipTests
exec mvn -B -q -f examples/ring/pom.xml compile exec:java -Dexec.args="-m weir.example.app ${1:-8080}"
