#!/usr/bin/env bash
# Runs the shards of kubernetes/job.yaml on this machine, as the Job runs
# them: the same arguments (kubernetes/render.sh --args), one process per
# completion index with JOB_COMPLETION_INDEX set, stdout and stderr in one
# log as kubectl logs shows them; then collects each log's JSON as the
# README's workflow does and merges them with pacer merge. Usage:
#
#   local-shards.sh -n N -h HOST [-p PORT] [--start-in SECONDS] [-o OUT.json] -- PACER_RUN_FLAGS...
#
# PACER names the pacer binary (default: pacer on the PATH); the logs and
# the shards' JSON are kept in a new directory under TMPDIR, printed at the
# end. Only loopback targets are meant here: it is a rehearsal of the Job.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
pacer=${PACER:-pacer}
shards="" host="" port=6379 start_in=3 out="merged.json"

die() { echo "local-shards.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    -n) shards=${2:?}; shift 2 ;;
    -h) host=${2:?}; shift 2 ;;
    -p) port=${2:?}; shift 2 ;;
    --start-in) start_in=${2:?}; shift 2 ;;
    -o) out=${2:?}; shift 2 ;;
    --) shift; break ;;
    *) die "unknown option $1 (pacer's own flags go after --)" ;;
  esac
done
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || die "-n N: the number of shards, 1 or more"
[ -n "$host" ] || die "-h HOST: the target"

mapfile -t args < <("$here/kubernetes/render.sh" -n "$shards" -h "$host" -p "$port" --start-in "$start_in" --args -- "$@")
[ "${#args[@]}" -gt 0 ] || die "render.sh printed no arguments"

dir=$(mktemp -d "${TMPDIR:-/tmp}/pacer-shards.XXXXXX")
pids=()
for ((i = 0; i < shards; i++)); do
  JOB_COMPLETION_INDEX=$i "$pacer" "${args[@]}" >"$dir/shard-$i.log" 2>&1 &
  pids+=($!)
done
failed=0
jsons=()
for ((i = 0; i < shards; i++)); do
  code=0
  wait "${pids[$i]}" || code=$?
  # 3 (an --slo missed) and 4 (the generator fell behind) still print the
  # result; anything else is a failed shard.
  case "$code" in
    0 | 3 | 4) ;;
    *) echo "local-shards.sh: shard index $i exited $code; its log:" >&2; cat "$dir/shard-$i.log" >&2; failed=1 ;;
  esac
  # The JSON is the last thing a shard prints: from a line "{" to a line "}".
  sed -n '/^{$/,/^}$/p' "$dir/shard-$i.log" >"$dir/shard-$i.json"
  jsons+=("$dir/shard-$i.json")
done
[ "$failed" = 0 ] || exit 1
"$pacer" merge "${jsons[@]}" -o "$out"
echo "shard logs and results in $dir"
