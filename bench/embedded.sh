#!/usr/bin/env bash
# Throughput of the embedded target on this machine, two ways:
#  1. in-process, sharing the CPU with the generator: pacer bench --embedded
#  2. standalone (pacer serve) driven by redis-benchmark, when installed
#   bench/embedded.sh [path/to/pacer]
set -euo pipefail
cd "$(dirname "$0")/.."
pacer=${1:-}
tmp=$(mktemp -d)
trap '[ -n "${spid:-}" ] && kill "$spid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
if [ -z "$pacer" ]; then go build -o "$tmp/pacer" ./cmd/pacer; pacer=$tmp/pacer; fi

for p in 1 16; do
  echo "pacer bench --embedded -P $p:"
  "$pacer" bench --embedded -n 500000 -P "$p" -q -t get,set 2>/dev/null | awk -F'\r' 'NF && $NF != "" {print "  " $NF}'
done
if command -v redis-benchmark >/dev/null; then
  port=$((20000 + RANDOM % 20000))
  "$pacer" serve --port "$port" > "$tmp/serve.log" &
  spid=$!
  sleep 0.3
  for p in 1 16; do
    echo "redis-benchmark -P $p against pacer serve:"
    redis-benchmark -p "$port" -n 500000 -P "$p" -q -t get,set | awk -F'\r' 'NF && $NF != "" {print "  " $NF}'
  done
fi
