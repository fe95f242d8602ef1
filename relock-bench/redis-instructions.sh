#!/usr/bin/env bash
# Redis instructions per uncontended lock + unlock cycle, for Relock and its peers: a redis-server
# under valgrind's callgrind, and io.relock.bench.RedisInstructions against it (see its Javadoc).
# Needs valgrind (callgrind_control comes with it) and redis-server on PATH. From the repository
# root: relock-bench/redis-instructions.sh [cycles, default 2000]. About a minute.
set -euo pipefail
cycles="${1:-2000}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT

mvn -q -B -f "$root/pom.xml" -pl relock-bench -am -DskipTests package \
    org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath -Dmdep.outputFile="$work/classpath"
port=$((20000 + RANDOM % 30000))  # if taken, the server exits and the PING below says so
valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out.%p" \
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no >"$work/valgrind.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.2
done
redis-cli -p "$port" ping >/dev/null
echo "redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/') under callgrind, $cycles cycles per library"
java -cp "$root/relock-bench/target/classes:$(cat "$work/classpath")" io.relock.bench.RedisInstructions \
    "$port" "$server" "$work" "$cycles"
