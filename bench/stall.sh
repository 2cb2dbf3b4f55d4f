#!/usr/bin/env bash
# Coordinated omission, side by side: one redis-server frozen for 200 ms every
# 2 s (SIGSTOP/SIGCONT), measured by redis-benchmark (closed loop) and by
# `pacer run` at 10k req/s (open model). Prints the p99 each reports.
#   bench/stall.sh [path/to/pacer]
set -euo pipefail
cd "$(dirname "$0")/.."
pacer=${1:-}
tmp=$(mktemp -d)
if [ -z "$pacer" ]; then go build -o "$tmp/pacer" ./cmd/pacer; pacer=$tmp/pacer; fi
port=$((20000 + RANDOM % 20000))
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" --logfile "$tmp/log" &
rpid=$!
spid=
trap '[ -n "$spid" ] && kill $spid 2>/dev/null; kill -CONT $rpid 2>/dev/null; kill $rpid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
sleep 0.3
( while sleep 2; do kill -STOP $rpid; sleep 0.2; kill -CONT $rpid; done ) &
spid=$!

echo "redis-benchmark -t get -c 50 -n 400000 (closed loop, ~10 s):"
redis-benchmark -p "$port" -t get -c 50 -n 400000 -r 100000 --csv | sed -n 2p |
  awk -F'"' '{printf "  rps %s  p50 %s ms  p99 %s ms  max %s ms\n", $4, $10, $14, $16}'
echo "pacer run --rate 10k --duration 10s (open model):"
"$pacer" run -p "$port" --rate 10k --duration 10s -t get -r 100000 -q | sed 's/^/  /'
