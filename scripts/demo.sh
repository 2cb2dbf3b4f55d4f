#!/usr/bin/env bash
# Demo of pacer's main job until the embedded target lands: start a
# throwaway redis-server on a free loopback port, freeze it (SIGSTOP) for
# 200 ms every 2 s, and measure it with `pacer run` at 10k requests/s.
# The response-time p99 shows the freezes (~180 ms); a closed-loop tool
# would report a few milliseconds. Needs redis-server (apt install redis-server).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v redis-server >/dev/null || { echo "demo: redis-server not found (apt-get install -y redis-server)" >&2; exit 1; }
tmp=$(mktemp -d)
go build -o "$tmp/pacer" ./cmd/pacer

port=
for _ in $(seq 1 50); do
  p=$((20000 + RANDOM % 20000))
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
done
[ -n "$port" ] || { echo "demo: no free port" >&2; exit 1; }

redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
  --dir "$tmp" --logfile "$tmp/redis.log" &
redis_pid=$!
stall_pid=
cleanup() {
  [ -n "$stall_pid" ] && kill "$stall_pid" 2>/dev/null || true
  kill -CONT "$redis_pid" 2>/dev/null || true
  kill "$redis_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.05
done

( while sleep 2; do kill -STOP "$redis_pid"; sleep 0.2; kill -CONT "$redis_pid"; done ) &
stall_pid=$!

echo "redis-server on 127.0.0.1:$port, frozen for 200 ms every 2 s" >&2
"$tmp/pacer" run -p "$port" --rate 10k --duration 10s -t get -r 100000 "$@"
