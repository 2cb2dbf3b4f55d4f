#!/usr/bin/env bash
# The shards' Indexed Job on a real single-node Kubernetes, on this
# machine, end to end: it brings up etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, containerd and a kubelet
# (Debian's etcd-server, runc, CNI plugins and redis-server; the Kubernetes
# components and containerd built from the releases deploy/e2e/k8s and
# deploy/e2e/containerd pin), loads pacer's image and the pause image
# without a registry, renders the Job with deploy/kubernetes/render.sh,
# runs it against a redis-server on the node, collects the shards' results
# from the pods' logs as the README says, merges them with pacer merge and
# checks what the Job must reach; then a Job whose third pod cannot start
# in time. Then it takes everything down. Usage (as root, on a machine
# that is no Kubernetes node and no cluster's client):
#
#   deploy/e2e/run.sh [--shards N] [--rate RATE] [--duration D] [--start-in SECONDS]
#                     [--containerd built|debian]
#
# Defaults: 3 shards, 30k/s for the whole timeline (10k/s each), 10s, start
# 20 s after the Job is applied, containerd built from its pinned release
# (debian: Debian 12's 1.6.20, which cuts the end of a pod's log when the
# container exits right after writing it). Each step is logged with its
# duration; the logs, the shards' results and the merged one are kept in
# deploy/e2e/.cache/last-run (PACER_E2E_CACHE moves the cache;
# PACER_E2E_HOLD=1 keeps the cluster up at the end until SIGUSR1).
set -Eeuo pipefail
source "$(dirname "$0")/lib.sh"

SHARDS=3 RATE=30k DURATION=10s START_IN=20 CONTAINERD=built
while [ $# -gt 0 ]; do
  case "$1" in
    --containerd) CONTAINERD=${2:?}; shift 2 ;;
    --shards) SHARDS=${2:?}; shift 2 ;;
    --rate) RATE=${2:?}; shift 2 ;;
    --duration) DURATION=${2:?}; shift 2 ;;
    --start-in) START_IN=${2:?}; shift 2 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
case "$CONTAINERD" in built | debian) ;; *) echo "run.sh: --containerd built or debian" >&2; exit 2 ;; esac

# --interval 10ms makes each pod's result about 3 MB of JSON in its log:
# the size at which Debian's containerd 1.6.20 lost the end of one.
LOAD=(--rate "$RATE" --duration "$DURATION" -t get -r 100000 --interval 10ms)
KEEP=$CACHE/last-run
NS=pacer-e2e
JOB=pacer-e2e
REDIS_PORT=6379
PAUSE_IMAGE=localhost/pacer-e2e/pause:1
PACER_IMAGE=localhost/pacer-e2e/pacer:e2e
CTR=() # ctr, once containerd runs

trap cleanup EXIT
trap 'on_error $? $LINENO "$BASH_COMMAND"' ERR
trap 'exit 130' INT
trap 'exit 143' TERM

machine() {
  preflight
  local cg=v1
  [ ! -e /sys/fs/cgroup/cgroup.controllers ] || cg=v2
  log "kernel $(uname -r); cgroup $cg; overlay $(grep -qw overlay /proc/filesystems && echo yes || echo no); $(nproc) cores; Go $(go env GOVERSION); Kubernetes $K8S_VERSION"
}

packages() {
  local want=(etcd-server runc containernetworking-plugins redis-server) ctd=""
  if [ "$CONTAINERD" = debian ]; then
    want+=(containerd)
  fi
  ensure_packages "${want[@]}"
  [ "$CONTAINERD" != debian ] || ctd="containerd $(containerd --version | awk '{print $3}'), "
  log "etcd $(etcd --version | sed -n 's/^etcd Version: //p'), ${ctd}runc $(runc --version | awk 'NR==1 {print $3}'), CNI plugins $(dpkg-query -W -f '${Version}' containernetworking-plugins), redis-server $(redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')"
}

builds() {
  build_k8s kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl
  if [ "$CONTAINERD" = built ]; then
    local m=github.com/containerd/containerd/v2
    build_tools containerd "$E2E_HERE/containerd" "$CONTAINERD_VERSION" "-X $m/version.Version=$CONTAINERD_VERSION" \
      "$m/cmd/containerd" "$m/cmd/containerd-shim-runc-v2" "$m/cmd/ctr"
    CONTAINERD_BIN=$BIN
  fi
  mkdir -p "$CACHE/images"
  go_build "$REPO" "$CACHE/images/pacer" ./cmd/pacer
  go_build "$DEPLOY" "$CACHE/images/pause" ./e2e/pause
  go_build "$DEPLOY" "$CACHE/images/" ./e2e/imagetar ./e2e/check ./e2e/defaulted
  log "$("$CACHE/images/pacer" --version 2>&1 | head -1) built from the worktree ($(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo no git)$(git -C "$REPO" diff --quiet 2>/dev/null || echo ', with changes'))"
}

images() {
  "$CACHE/images/imagetar" -o "$STATE/pacer.tar" -name "$PACER_IMAGE" -user 65532:65532 -entrypoint /pacer "$CACHE/images/pacer=/pacer"
  "$CACHE/images/imagetar" -o "$STATE/pause.tar" -name "$PAUSE_IMAGE" -user 65535:65535 -entrypoint /pause "$CACHE/images/pause=/pause"
  log "images: $PACER_IMAGE ($(du -h "$STATE/pacer.tar" | cut -f1)), $PAUSE_IMAGE ($(du -h "$STATE/pause.tar" | cut -f1)): scratch, one static file each"
}

certificates() {
  pki "apiserver|/CN=kube-apiserver|IP:127.0.0.1,IP:$GW,IP:${SVC_CIDR%.0/24}.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:localhost" \
    "admin|/O=system:masters/CN=pacer-e2e-admin" \
    "apiserver-kubelet-client|/O=system:masters/CN=kube-apiserver-kubelet-client" \
    "kube-controller-manager|/CN=system:kube-controller-manager" \
    "kube-scheduler|/CN=system:kube-scheduler" \
    "kubelet|/O=system:nodes/CN=system:node:$NODE" \
    "kubelet-serving|/CN=$NODE|IP:$GW"
  kubeconfig kube-controller-manager
  kubeconfig kube-scheduler
  kubeconfig kubelet
}

control_plane() {
  note_new /usr/libexec/kubernetes # the flex volume plugins' directory, if a default is left
  start_etcd
  start_apiserver
  local d=$STATE/pki
  start kube-controller-manager "$K8S_BIN/kube-controller-manager" \
    --kubeconfig "$STATE/kube-controller-manager.kubeconfig" \
    --authentication-kubeconfig "$STATE/kube-controller-manager.kubeconfig" \
    --authorization-kubeconfig "$STATE/kube-controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials \
    --service-account-private-key-file "$d/sa.key" --root-ca-file "$d/ca.crt" \
    --cluster-name pacer-e2e --profiling=false --flex-volume-plugin-dir "$STATE/kcm-volume-plugins"
  start kube-scheduler "$K8S_BIN/kube-scheduler" \
    --kubeconfig "$STATE/kube-scheduler.kubeconfig" \
    --authentication-kubeconfig "$STATE/kube-scheduler.kubeconfig" \
    --authorization-kubeconfig "$STATE/kube-scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --profiling=false
  wait_for "kube-controller-manager healthy" 60 in_node curl -fsSk https://127.0.0.1:10257/healthz
  wait_for "kube-scheduler healthy" 60 in_node curl -fsSk https://127.0.0.1:10259/healthz
  log "kube-controller-manager and kube-scheduler healthy"
}

# namespace makes the Job's namespace, held to the restricted Pod Security
# Standard (enforced and warned).
namespace() {
  kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: $NS
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/warn: restricted
EOF
  log "namespace $NS (pod security: restricted, enforced)"
}

# render NAME CPU START_IN PACER_FLAGS... renders a Job of SHARDS pods
# against the node's redis-server (render.sh as a user runs it) into
# STATE/NAME.yaml.
render() {
  local name=$1 cpu=$2 start_in=$3
  shift 3
  "$DEPLOY/kubernetes/render.sh" -n "$SHARDS" -h "$GW" -p "$REDIS_PORT" --image "$PACER_IMAGE" --pull-policy Never \
    --name "$name" --cpu "$cpu" --start-in "$start_in" -- "$@" >"$STATE/$name.yaml"
}

# job_end NAME SECONDS waits for the Job to end, Complete or Failed; JOB_END
# is its conditions.
job_end() {
  local deadline=$((${EPOCHREALTIME%.*} + $2))
  while :; do
    JOB_END=$(kc -n "$NS" get job "$1" -o jsonpath='{.status.conditions[?(@.status=="True")].type}')
    case " $JOB_END " in *" Complete "* | *" Failed "*) return 0 ;; esac
    if [ "${EPOCHREALTIME%.*}" -ge "$deadline" ]; then
      log "Job $1 did not end in $2 s: conditions '$JOB_END'"
      kc -n "$NS" get pods -o wide >&2
      return 1
    fi
    sleep 1
  done
}

# exits NAME: each pod's completion index and exit code.
exits() {
  kc -n "$NS" get pods -l "job-name=$1" -o jsonpath='{range .items[*]}index {.metadata.labels.batch\.kubernetes\.io/job-completion-index} exit {.status.containerStatuses[0].state.terminated.exitCode}; {end}'
}

dry_run() {
  render "$JOB" 500m 600 "${LOAD[@]}"
  cp "$STATE/$JOB.yaml" "$STATE/logs/job-dry-run.yaml"
  kc -n "$NS" apply --dry-run=server --warnings-as-errors -f "$STATE/$JOB.yaml" -o yaml >"$STATE/logs/job-as-stored.yaml"
  log "server-side dry-run: the apiserver accepts the rendered Job with no warning (restricted pod security included)"
  "$CACHE/images/defaulted" "$STATE/$JOB.yaml" "$STATE/logs/job-as-stored.yaml" >"$STATE/logs/job-defaulted.txt"
  log "fields the apiserver set that the manifest leaves out:"
  sed 's/^/    /' "$STATE/logs/job-defaulted.txt" | tee -a "$LOG" >&2
}

network() {
  in_node ip link add "$BRIDGE" type bridge
  in_node ip addr add "$GW/24" dev "$BRIDGE"
  in_node ip link set "$BRIDGE" up
  mkdir -p "$STATE/cni/net.d"
  cat >"$STATE/cni/net.d/10-pacer-e2e.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "pacer-e2e",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$GW"}]],
        "dataDir": "$STATE/cni/ipam"
      }
    }
  ]
}
EOF
  log "the node's network: $BRIDGE $GW/24 (the pods' gateway and the node's IP), loopback; no route out"
}

# runtime starts containerd in the node's namespace, everything of it under
# STATE, and imports the two images: the containerd deploy/e2e/containerd
# builds, or with --containerd debian Debian's (1.6.20), which cuts the end
# of a pod's log when its container exits right after writing it.
runtime() {
  local c=$STATE/containerd bin
  mkdir -p "$c"
  # Whatever the config says, containerd puts its shims' sockets in
  # /run/containerd/s and the CNI library caches results in /var/lib/cni.
  note_new /run/containerd /var/lib/cni /opt/containerd
  if [ "$CONTAINERD" = debian ]; then
    bin=/usr/bin
    containerd_config_v2 >"$c/config.toml"
  else
    bin=$CONTAINERD_BIN
    containerd_config_v3 >"$c/config.toml"
  fi
  CTR=("$bin/ctr" --address "$c/containerd.sock" -n k8s.io)
  # On the PATH: the runc shim beside containerd, and runc.
  start containerd env PATH="$bin:$PATH" "$bin/containerd" --config "$c/config.toml"
  wait_for "containerd" 30 "${CTR[@]}" version
  # ctr's warnings (cgroup v1 is deprecated) go to its own log.
  "${CTR[@]}" images import "$STATE/pause.tar" >/dev/null 2>>"$STATE/logs/ctr.log"
  "${CTR[@]}" images import "$STATE/pacer.tar" >/dev/null 2>>"$STATE/logs/ctr.log"
  log "containerd $("$bin/containerd" --version | awk '{print $3}') ($CONTAINERD), runc $(runc --version | awk 'NR==1 {print $3}'); images imported: $("${CTR[@]}" images ls -q 2>>"$STATE/logs/ctr.log" | grep '^localhost/' | paste -sd' ')"
}

# In both configs: the pause container asks for oom_score_adj -998, which
# only a process with CAP_SYS_RESOURCE may set, so restrict_oom_score_adj
# keeps the runtime's own as the floor (where root lacks it, as in this VM
# or rootless); the pods' network namespaces stay under STATE.

# containerd_config_v3 is the config of containerd 2.
containerd_config_v3() {
  local c=$STATE/containerd
  cat <<EOF
version = 3
root = '$c/root'
state = '$c/state'
disabled_plugins = ['io.containerd.snapshotter.v1.btrfs', 'io.containerd.snapshotter.v1.devmapper', 'io.containerd.snapshotter.v1.zfs', 'io.containerd.snapshotter.v1.erofs', 'io.containerd.nri.v1.nri']
[grpc]
  address = '$c/containerd.sock'
[plugins.'io.containerd.internal.v1.opt']
  path = '$c/opt'
[plugins.'io.containerd.cri.v1.images']
  snapshotter = 'overlayfs'
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = '$PAUSE_IMAGE'
[plugins.'io.containerd.cri.v1.runtime']
  netns_mounts_under_state_dir = true
  restrict_oom_score_adj = true
  cdi_spec_dirs = ['$c/cdi']
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = 'runc'
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = 'io.containerd.runc.v2'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        Root = '$c/runc'
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ['/usr/lib/cni']
    conf_dir = '$STATE/cni/net.d'
EOF
}

# containerd_config_v2 is the config of containerd 1.6.
containerd_config_v2() {
  local c=$STATE/containerd
  cat <<EOF
version = 2
root = "$c/root"
state = "$c/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]
[grpc]
  address = "$c/containerd.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$c/opt"
[plugins."io.containerd.runtime.v1.linux"]
  runtime_root = "$c/runc-v1"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  netns_mounts_under_state_dir = true
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$c/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
EOF
}

node() {
  local d=$STATE/pki f
  for f in /proc/sys/vm/overcommit_memory /proc/sys/vm/panic_on_oom /proc/sys/kernel/panic /proc/sys/kernel/panic_on_oops \
    /proc/sys/kernel/keys/root_maxkeys /proc/sys/kernel/keys/root_maxbytes; do
    SYSCTLS_SAVED+=("$f $(cat "$f")")
  done
  [ -e /var/log/containers ] || VAR_LOG_CONTAINERS_CREATED=1
  # The device plugin manager's socket is /var/lib/kubelet/device-plugins
  # whatever --root-dir says.
  note_new /var/lib/kubelet
  cat >"$STATE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $GW
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $d/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $d/kubelet-serving.crt
tlsPrivateKeyFile: $d/kubelet-serving.key
containerRuntimeEndpoint: unix://$STATE/containerd/containerd.sock
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
podLogsDir: $STATE/pod-logs
volumePluginDir: $STATE/kubelet/volume-plugins
resolvConf: /etc/resolv.conf
oomScoreAdj: 0
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
EOF
  start kubelet "$K8S_BIN/kubelet" --config "$STATE/kubelet.yaml" --kubeconfig "$STATE/kubelet.kubeconfig" \
    --root-dir "$STATE/kubelet" --hostname-override "$NODE" --node-ip "$GW"
  wait_for "node $NODE registered" 90 kc get node "$NODE"
  kc wait --for=condition=Ready "node/$NODE" --timeout=120s >/dev/null || { alive kubelet; return 1; }
  wait_for "node $NODE untainted" 60 untainted
  log "node $NODE Ready: $(kc get node "$NODE" -o jsonpath='kubelet {.status.nodeInfo.kubeletVersion}, {.status.nodeInfo.containerRuntimeVersion}, allocatable cpu {.status.allocatable.cpu} memory {.status.allocatable.memory}, address {.status.addresses[0].address}')"
}

untainted() { [ -z "$(kc get node "$NODE" -o jsonpath='{.spec.taints}')" ]; }

redis() {
  mkdir -p "$STATE/redis"
  # Protected mode refuses every client but loopback's when there is no
  # password; the pods come over the bridge of a namespace nothing else
  # reaches.
  start redis redis-server --bind 127.0.0.1 "$GW" --port "$REDIS_PORT" --protected-mode no --save "" --appendonly no \
    --dir "$STATE/redis" --maxclients 10000
  wait_for "redis-server" 20 in_node redis-cli -p "$REDIS_PORT" ping
  log "redis-server $(in_node redis-cli -p "$REDIS_PORT" info server | sed -n 's/^redis_version://p' | tr -d '\r') on $GW:$REDIS_PORT (the bridge) and the node's loopback"
}

pods_running() { [ "$(kc -n "$NS" get pods -l "job-name=$JOB" --field-selector=status.phase=Running -o name | wc -l)" = "$SHARDS" ]; }

# run_job applies the Job START_IN seconds before its start, records the
# server's first request from each pod (redis MONITOR, until it saw one
# from each) and waits for the Job to end.
run_job() {
  # The ServiceAccount admission refuses pods before the namespace's
  # default service account exists, and the Job controller would retry
  # them with a backoff, past the start.
  wait_for "service account default in $NS" 60 kc -n "$NS" get serviceaccount default
  render "$JOB" 500m "$START_IN" "${LOAD[@]}"
  cp "$STATE/$JOB.yaml" "$STATE/logs/job.yaml"
  START_AT=$(sed -n 's/.*"--start-at", "\([^"]*\)".*/\1/p' "$STATE/$JOB.yaml")
  (trap - ERR; exec setsid nsenter --net="$NETNS" timeout $((START_IN + 60)) redis-cli -p "$REDIS_PORT" monitor 2>>"$STATE/logs/monitor.err") > >(
    trap - ERR
    awk -v want="$SHARDS" '$4 == "\"GET\"" { ip = $3; sub(/:[0-9]+\]$/, "", ip); if (!(ip in seen)) { seen[ip] = $1; print ip, $1; fflush(); if (++n == want) exit } }' \
      >"$STATE/logs/monitor-first-get.txt"
  ) &
  PIDS[monitor]=$!
  kc -n "$NS" apply -f "$STATE/$JOB.yaml" >/dev/null
  log "Job applied: $SHARDS pods, start_at $START_AT"
  wait_for "the Job's pods running" "$START_IN" pods_running ||
    { kc -n "$NS" get pods -o wide >&2; kc -n "$NS" get events >&2; return 1; }
  kc -n "$NS" get pods -l "job-name=$JOB" -o jsonpath='{range .items[*]}{.status.podIP} {.metadata.labels.batch\.kubernetes\.io/job-completion-index}{"\n"}{end}' >"$STATE/logs/pod-ips.txt"
  local started last
  started=$(kc -n "$NS" get pods -l "job-name=$JOB" -o jsonpath='{range .items[*]}{.status.containerStatuses[0].state.running.startedAt}{"\n"}{end}')
  last=$(sort <<<"$started" | tail -1)
  log "all $SHARDS pods running $(($(date -d "$START_AT" +%s) - $(date -d "$last" +%s))) s before start_at (the last container started at $last): $(kc -n "$NS" get pods -l "job-name=$JOB" -o jsonpath='{range .items[*]}{.metadata.name} on {.status.podIP}; {end}')"
  [ -z "$(kc -n "$NS" get pods -l "job-name=$JOB" -o jsonpath='{.items[*].spec.volumes}')" ] || die "the pods have volumes: $(kc -n "$NS" get pods -l "job-name=$JOB" -o jsonpath='{.items[0].spec.volumes}')"
  log "no volume in the pods: no service account token (automountServiceAccountToken: false)"
  job_end "$JOB" $((START_IN + 120))
  stop monitor
  kc -n "$NS" get pods -l "job-name=$JOB" -o wide >"$STATE/logs/pods.txt"
  kc -n "$NS" get job "$JOB" -o yaml >"$STATE/logs/job-status.yaml"
  log "the Job ended $JOB_END: $(exits "$JOB")"
}

# collect does what deploy/kubernetes/README.md tells a user: each pod's
# log, the JSON in it, pacer merge. Beside it, from the node: how big the
# log is there (kubelet's containerLogMaxSize counts that file, in the CRI
# format) and how long the JSON took to reach it (a rotation in that
# window would cut it).
collect() {
  local k pod cri span
  mkdir -p "$STATE/logs/results"
  for ((k = 0; k < SHARDS; k++)); do
    pod=$(kc -n "$NS" get pods -l "job-name=$JOB,batch.kubernetes.io/job-completion-index=$k" -o name)
    kc -n "$NS" logs "$pod" >"$STATE/logs/results/pod-$k.log"
    sed -n '/^{$/,/^}$/p' "$STATE/logs/results/pod-$k.log" >"$STATE/logs/results/shard-$k.json"
    cri=$(echo "$STATE"/pod-logs/"${NS}_${pod#pod/}"_*/pacer/0.log)
    span=$(awk '$4 == "{" && !a { a = $1 } $4 == "}" { b = $1 } END { print a, b }' "$cri" | {
      read -r a b
      echo $((($(date -d "$b" +%s%N) - $(date -d "$a" +%s%N)) / 1000000))
    })
    log "$pod: $(wc -c <"$STATE/logs/results/pod-$k.log") bytes of log, $(wc -c <"$STATE/logs/results/shard-$k.json") of JSON ($(grep -c '' "$STATE/logs/results/shard-$k.json") lines, the longest $(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$STATE/logs/results/shard-$k.json") bytes); on the node $(wc -c <"$cri") bytes of CRI log, the JSON written in $span ms"
  done
  local rc=0
  "$CACHE/images/pacer" merge "$STATE"/logs/results/shard-*.json -o "$STATE/logs/results/merged.json" 2>&1 | tee -a "$LOG" >&2 || rc=$?
  log "pacer merge exited $rc"
  "$CACHE/images/pacer" report "$STATE/logs/results/merged.json" >"$STATE/logs/results/merged.txt" 2>&1 || true
}

acceptance() {
  local ip k
  : >"$STATE/logs/results/monitor.txt"
  while read -r ip k; do
    awk -v ip="$ip" -v k="$k" '$1 == ip { print k, $2 }' "$STATE/logs/monitor-first-get.txt" >>"$STATE/logs/results/monitor.txt"
  done <"$STATE/logs/pod-ips.txt"
  local requests
  requests=$(awk -v r="$RATE" -v d="$DURATION" 'BEGIN {
    m = 1; if (r ~ /k$/) m = 1e3; if (r ~ /m$/) m = 1e6; sub(/[km]$/, "", r)
    sub(/s$/, "", d); printf "%d", r * m * d }')
  "$CACHE/images/check" -merged "$STATE/logs/results/merged.json" -requests "$requests" -first-send 50ms \
    -monitor "$STATE/logs/results/monitor.txt" "$STATE"/logs/results/shard-*.json | tee "$STATE/logs/results/check.txt" | tee -a "$LOG" >&2
}

# late_shard shows on the cluster what a shard that cannot start in time
# does. Each pod requests half the node's CPUs, so two of the three run and
# the third waits, Pending, until one has ended: it starts after its start
# instant and must refuse to send (exit 2, why in its status); the Job
# ends Failed with that index, and pacer merge refuses the other two
# results unless --partial.
late_shard() {
  local name=$JOB-late cpu=$(($(nproc) * 500))m
  render "$name" "$cpu" 10 --rate 3k --duration 2s -t get --drain 1s
  kc -n "$NS" apply -f "$STATE/$name.yaml" >/dev/null
  log "Job $name applied: $SHARDS pods requesting cpu $cpu each on a node of $(kc get node "$NODE" -o jsonpath='{.status.allocatable.cpu}')"
  job_end "$name" 120
  local ends late k pod msg
  ends=$(exits "$name")
  log "Job $name ended $JOB_END: $ends"
  late=$(tr ';' '\n' <<<"$ends" | awk '$4 == 2 { print $2 }')
  [ "$(wc -w <<<"$late")" = 1 ] || die "want exactly one shard to exit 2 (its start had passed), got: $ends"
  pod=$(kc -n "$NS" get pods -l "job-name=$name,batch.kubernetes.io/job-completion-index=$late" -o name)
  msg=$(kc -n "$NS" get "$pod" -o jsonpath='{.status.containerStatuses[0].state.terminated.message}')
  [[ "$msg" == *"has passed"* ]] || die "$pod: its status says '$msg', not why it refused"
  log "index $late: $(kc -n "$NS" get events --field-selector "involvedObject.name=${pod#pod/},reason=FailedScheduling" -o jsonpath='{.items[0].message}' | head -c 120); then, in its status: $msg"
  log "the Job's failed indexes: $(kc -n "$NS" get job "$name" -o jsonpath='{.status.failedIndexes}')"
  local dir=$STATE/logs/late files=() rc
  mkdir -p "$dir"
  for ((k = 0; k < SHARDS; k++)); do
    pod=$(kc -n "$NS" get pods -l "job-name=$name,batch.kubernetes.io/job-completion-index=$k" -o name)
    kc -n "$NS" logs "$pod" | sed -n '/^{$/,/^}$/p' >"$dir/shard-$k.json"
    [ "$k" = "$late" ] || files+=("$dir/shard-$k.json")
  done
  [ ! -s "$dir/shard-$late.json" ] || die "the late shard printed a result"
  rc=0
  "$CACHE/images/pacer" merge "$dir"/shard-*.json -o "$dir/merged.json" 2>"$dir/merge-all.err" || rc=$?
  [ "$rc" = 2 ] || die "pacer merge of the $SHARDS files, one empty, exited $rc, want 2"
  log "pacer merge of the $SHARDS files as the README collects them (the late one empty): exit 2, $(cat "$dir/merge-all.err")"
  rc=0
  "$CACHE/images/pacer" merge "${files[@]}" -o "$dir/merged.json" 2>"$dir/merge.err" || rc=$?
  [ "$rc" = 2 ] || die "pacer merge of $((SHARDS - 1)) of $SHARDS shards exited $rc, want 2"
  log "pacer merge of the $((SHARDS - 1)) results: exit 2, $(cat "$dir/merge.err")"
  rc=0
  "$CACHE/images/pacer" merge --partial "${files[@]}" -o "$dir/merged.json" >/dev/null 2>"$dir/merge-partial.err" || rc=$?
  case "$rc" in 0 | 3 | 4) ;; *) die "pacer merge --partial exited $rc: $(cat "$dir/merge-partial.err")" ;; esac
  log "pacer merge --partial: exit $rc, $(tr -d ' \n' <"$dir/merged.json" | grep -o '"merged":\[[0-9,]*\]' | head -1), $(grep -m1 -o '"scheduled": [0-9]*' "$dir/merged.json") of the timeline's 6000"
}

# cleanup_node takes the node down before the control plane: the pods'
# namespace (the kubelet stops their containers, the CNI plugin frees their
# addresses), the kubelet, any container left, containerd and its shims,
# the kubelet's cgroups.
cleanup_node() {
  if [ -n "${PIDS[kubelet]:-}" ] && [ -n "${PIDS[kube-apiserver]:-}" ]; then
    local t0=$EPOCHREALTIME
    if kc delete namespace "$NS" --wait --timeout=60s >/dev/null 2>&1; then
      log "namespace $NS deleted, its pods with it ($(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')s)"
    else
      log "namespace $NS not deleted in 60 s; its containers are killed below"
    fi
  fi
  stop kubelet
  local id
  if [ -n "${PIDS[containerd]:-}" ] && [ ${#CTR[@]} -gt 0 ]; then
    for id in $("${CTR[@]}" tasks ls -q 2>/dev/null); do
      "${CTR[@]}" tasks kill -s SIGKILL "$id" >/dev/null 2>&1
      "${CTR[@]}" tasks delete -f "$id" >/dev/null 2>&1
    done
    for id in $("${CTR[@]}" containers ls -q 2>/dev/null); do
      "${CTR[@]}" containers rm "$id" >/dev/null 2>&1
    done
  fi
  stop containerd
  local pid
  for pid in $(pgrep -f -- "$STATE/containerd/containerd.sock"); do
    log "containerd shim $pid still runs: SIGKILL"
    kill -KILL "$pid" 2>/dev/null
  done
  local cg
  for cg in /sys/fs/cgroup/*/kubepods; do
    [ -d "$cg" ] || continue
    for pid in $(find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null); do
      log "process $pid left in $cg: SIGKILL"
      kill -KILL "$pid" 2>/dev/null
    done
    find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || log "could not remove $cg"
  done
}

main() {
  rm -rf "$KEEP"
  mkdir -p "$KEEP"
  LOG=$KEEP/e2e.log
  step "the machine" machine
  new_state
  step "Debian packages" packages
  step "builds (Kubernetes $K8S_VERSION, pacer, pause, imagetar)" builds
  step "images (no registry)" images
  step "certificates" certificates
  step "control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler" control_plane
  step "namespace" namespace
  step "server-side dry-run of the rendered Job" dry_run
  step "node network" network
  step "containerd and the images" runtime
  step "kubelet and a Ready node" node
  step "redis-server on the node" redis
  step "the Job: $SHARDS shards, $RATE for $DURATION" run_job
  step "collect and merge" collect
  step "acceptance" acceptance
  step "a shard that starts after its start instant" late_shard
}

main
