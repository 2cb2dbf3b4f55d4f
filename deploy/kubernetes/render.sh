#!/usr/bin/env bash
# Renders job.yaml: an Indexed Job of N pacer shards that start one timeline
# together. Usage:
#
#   render.sh -n N -h HOST [-p PORT] [--image IMAGE] [--pull-policy POLICY]
#             [--name NAME] [--cpu CPU] [--start-in SECONDS | --start-at RFC3339]
#             [--args] -- PACER_RUN_FLAGS...
#
# PACER_RUN_FLAGS are pacer run's load and workload flags (--rate 100k
# --duration 5m -t get -r 1000000 ...); render.sh adds the target, --shard
# auto/N, --start-at, --seed (a random one unless given), and --json - -q
# (the JSON alone on stdout, so kubectl logs collects it). --pull-policy
# is the container's imagePullPolicy (IfNotPresent; Never for an image
# loaded on the nodes beforehand, as deploy/e2e does). --args prints
# the pod's arguments one per line instead of the manifest: deploy's
# local-shards.sh runs them as the Job would.
set -euo pipefail
shopt -u patsub_replacement 2>/dev/null || true # & in a value stays &

here=$(cd "$(dirname "$0")" && pwd)
shards="" host="" port=6379 image="pacer:latest" pull_policy="IfNotPresent" name="pacer" cpu="1" start_in=60 start_at="" print_args=""

die() { echo "render.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    -n) shards=${2:?}; shift 2 ;;
    -h) host=${2:?}; shift 2 ;;
    -p) port=${2:?}; shift 2 ;;
    --image) image=${2:?}; shift 2 ;;
    --pull-policy) pull_policy=${2:?}; shift 2 ;;
    --name) name=${2:?}; shift 2 ;;
    --cpu) cpu=${2:?}; shift 2 ;;
    --start-in) start_in=${2:?}; shift 2 ;;
    --start-at) start_at=${2:?}; shift 2 ;;
    --args) print_args=1; shift ;;
    --) shift; break ;;
    *) die "unknown option $1 (pacer's own flags go after --)" ;;
  esac
done

[[ "$shards" =~ ^[1-9][0-9]*$ ]] || die "-n N: the number of shards (pods), 1 or more"
[ -n "$host" ] || die "-h HOST: the target every shard sends to"
[[ "$port" =~ ^[0-9]+$ ]] || die "-p $port: want a port number"
case "$pull_policy" in Always | IfNotPresent | Never) ;; *) die "--pull-policy $pull_policy: want Always, IfNotPresent or Never" ;; esac
[[ "$name" =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] || die "--name $name: want a Kubernetes name (lower case, digits, -)"
[[ "$start_in" =~ ^[0-9]+$ ]] || die "--start-in $start_in: want whole seconds"
for a in "$@"; do
  case "$a" in
    --shard|--shard=*|--start-at|--start-at=*|--start-in|--start-in=*|--json|--json=*|-h|-p|-s|-u)
      die "$a is set by render.sh: leave it out" ;;
  esac
done

if [ -z "$start_at" ]; then
  # GNU date, else BSD date (macOS).
  start_at=$(date -u -d "+${start_in} seconds" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null) ||
    start_at=$(date -u -v+"${start_in}"S +%Y-%m-%dT%H:%M:%SZ)
fi

args=(run -h "$host" -p "$port" "$@")
seeded=""
for a in "$@"; do
  case "$a" in --seed|--seed=*) seeded=1 ;; esac
done
if [ -z "$seeded" ]; then
  args+=(--seed "$(( (RANDOM << 30) | (RANDOM << 15) | RANDOM ))")
fi
args+=(--shard "auto/$shards" --start-at "$start_at" --json - -q)

if [ -n "$print_args" ]; then
  printf '%s\n' "${args[@]}"
  exit 0
fi

# The arguments as a YAML flow sequence of double-quoted strings.
yaml_args="["
sep=""
for a in "${args[@]}"; do
  a=${a//\\/\\\\}
  a=${a//\"/\\\"}
  yaml_args+="$sep\"$a\""
  sep=", "
done
yaml_args+="]"

# Fill the template; the values go in as they are (no sed expressions).
# Its leading comment is about the template: the manifest gets its own.
echo "# Rendered by render.sh: $shards pacer shards of one timeline, starting at $start_at."
header=1
while IFS= read -r line || [ -n "$line" ]; do
  if [ -n "$header" ] && [[ "$line" == "#"* ]]; then
    continue
  fi
  header=""
  line=${line//'${NAME}'/$name}
  line=${line//'${SHARDS}'/$shards}
  line=${line//'${IMAGE}'/$image}
  line=${line//'${PULL_POLICY}'/$pull_policy}
  line=${line//'${CPU}'/$cpu}
  line=${line//'${ARGS}'/$yaml_args}
  printf '%s\n' "$line"
done < "$here/job.yaml"
