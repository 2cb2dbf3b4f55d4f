# shellcheck shell=bash
# What run.sh and dryrun.sh share: the layout, timed steps, the safety
# checks, the builds, certificates, and starting and stopping what they
# start. Sourced, not run.
#
# Everything the cluster runs lives in one private network namespace (the
# node's, as kind gives each node a container): its loopback, and a bridge
# for the pods. Nothing listens on the machine's own interfaces and nothing
# in it can reach another host; the machine's ports, iptables rules and
# net.* settings stay as they were. What cannot be kept inside (cgroups,
# mounts, the kernel settings kubelet changes, /run/containerd) is recorded
# before and put back by cleanup.

E2E_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DEPLOY=$(cd "$E2E_HERE/.." && pwd)
REPO=$(cd "$DEPLOY/.." && pwd)
CACHE=${PACER_E2E_CACHE:-$E2E_HERE/.cache}
K8S_VERSION=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2 }' "$E2E_HERE/k8s/go.mod")
CONTAINERD_VERSION=$(awk '$1 == "github.com/containerd/containerd/v2" && $2 ~ /^v/ { print $2 }' "$E2E_HERE/containerd/go.mod")

NODE=pacer-e2e
BRIDGE=pacere2e0
GW=10.233.77.1          # the bridge's address: the node's IP and the pods' gateway
POD_CIDR=10.233.77.0/24
SVC_CIDR=10.233.78.0/24 # the apiserver allocates from it; nothing routes it
API=https://127.0.0.1:6443
ETCD=http://127.0.0.1:2379

STATE=""   # the run's directory: certificates, data, logs; removed at the end
NETNS=""   # the node's network namespace, bound to a file under STATE
declare -A PIDS=() # name -> pid of what this script started
SYSCTLS_SAVED=()   # "path value" of kernel settings to put back
MADE=()           # system paths that did not exist before the run
VAR_LOG_CONTAINERS_CREATED=""
STEP="" STEP_T0="" T_START=$EPOCHREALTIME
STEP_LINES=()

# log prints a line with the time since the start, to stderr and the log.
log() {
  local t
  t=$(awk -v a="$T_START" -v b="$EPOCHREALTIME" 'BEGIN { printf "%7.1f", b - a }')
  printf '[%ss] %s\n' "$t" "$*" | tee -a "${LOG:-/dev/null}" >&2
}

# short is a path under the repository relative to it.
short() { printf '%s' "${1#"$REPO"/}"; }

# on_error logs the command that failed, where.
on_error() { log "error: exit $1 at line $2: $3"; }

die() {
  log "FAIL: $*"
  exit 1
}

# step NAME CMD... runs CMD as one timed step of the run.
step() {
  STEP=$1 STEP_T0=$EPOCHREALTIME
  shift
  log "--> $STEP"
  "$@"
  local dt
  dt=$(awk -v a="$STEP_T0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%6.1f", b - a }')
  STEP_LINES+=("$(printf '%6ss  %s' "$dt" "$STEP")")
  log "<-- $STEP: ${dt}s"
  STEP=""
}

# summary prints each step's duration and the total.
summary() {
  local total
  total=$(awk -v a="$T_START" -v b="$EPOCHREALTIME" 'BEGIN { printf "%6.1f", b - a }')
  {
    echo "steps:"
    printf '  %s\n' "${STEP_LINES[@]}"
    printf '  %6ss  total\n' "$total"
  } | tee -a "${LOG:-/dev/null}" >&2
}

# preflight refuses to run where the run could touch a real cluster or
# find the machine in a state it would change: a kubeconfig other than its
# own, Kubernetes or containerd already there, a node's cgroups.
preflight() {
  [ "$(id -u)" = 0 ] || die "run as root: the node needs namespaces, mounts and cgroups"
  [ "$(uname -s)" = Linux ] || die "Linux only"
  if [ -n "${KUBECONFIG:-}" ]; then
    die "KUBECONFIG is set ($KUBECONFIG): this machine is a cluster's client; the e2e uses no kubeconfig but its own. Unset it to go on"
  fi
  if [ -e "${HOME:-/root}/.kube/config" ]; then
    die "${HOME:-/root}/.kube/config exists: this machine is a cluster's client; the e2e refuses to run beside it"
  fi
  local p
  for p in /etc/kubernetes /var/lib/kubelet /run/containerd/containerd.sock /var/run/containerd/containerd.sock; do
    [ ! -e "$p" ] || die "$p exists: this machine looks like a Kubernetes node or runs containerd; the e2e runs only where neither is"
  done
  for p in kubelet kube-apiserver containerd etcd dockerd; do
    if pgrep -x "$p" >/dev/null; then
      die "a $p process is running: the e2e runs only where no cluster component is"
    fi
  done
  for p in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods /sys/fs/cgroup/kubepods.slice; do
    [ ! -e "$p" ] || die "$p exists: a kubelet's cgroups are on this machine"
  done
  local missing=()
  for p in unshare nsenter openssl curl ip findmnt go; do
    command -v "$p" >/dev/null || missing+=("$p")
  done
  [ ${#missing[@]} = 0 ] || die "missing: ${missing[*]}"
}

# note_new PATH... records which of the paths do not exist yet: cleanup
# removes those (the places containerd, the CNI library and the kubelet
# use whatever their configuration says).
note_new() {
  local p
  for p in "$@"; do
    [ -e "$p" ] || MADE+=("$p")
  done
}

# new_state makes the run's directory and the node's network namespace: a
# loopback and nothing else yet.
new_state() {
  STATE=$(mktemp -d "${TMPDIR:-/tmp}/pacer-e2e.XXXXXX")
  chmod 711 "$STATE" # the pods' user reads nothing here, but may cross it
  mkdir -p "$STATE/logs" "$STATE/pki" "$STATE/ns"
  LOG=${LOG:-$STATE/logs/e2e.log}
  NETNS=$STATE/ns/net
  touch "$NETNS"
  unshare --net="$NETNS" true
  in_node ip link set lo up
  log "state in $STATE; the node's network namespace has: $(in_node ip -br link | awk '{printf "%s ", $1}')"
}

# in_node runs a command in the node's network namespace.
in_node() { nsenter --net="$NETNS" "$@"; }

# start NAME CMD... starts a daemon in the node's network namespace, its
# output in logs/NAME.log, in a session of its own: a Ctrl-C at the
# terminal reaches this script alone, which stops the daemons in order
# (Go programs would catch it and each stop on its own).
start() {
  local name=$1
  shift
  setsid nsenter --net="$NETNS" "$@" >"$STATE/logs/$name.log" 2>&1 &
  PIDS[$name]=$!
  log "started $name (pid ${PIDS[$name]})"
}

# alive NAME: the daemon still runs (or its log says why not).
alive() {
  if ! kill -0 "${PIDS[$1]}" 2>/dev/null; then
    log "$1 exited; the end of its log:"
    tail -n 30 "$STATE/logs/$1.log" >&2
    return 1
  fi
}

# wait_for WHAT SECONDS CMD... retries CMD every 0.2 s until it succeeds;
# it gives up at once when a daemon it started has exited.
wait_for() {
  local what=$1 secs=$2 deadline name
  shift 2
  deadline=$(awk -v n="$EPOCHREALTIME" -v s="$secs" 'BEGIN { printf "%d", n + s }')
  until "$@" >/dev/null 2>&1; do
    if [ "${EPOCHREALTIME%.*}" -ge "$deadline" ]; then
      log "$what: not within ${secs}s"
      return 1
    fi
    for name in "${!PIDS[@]}"; do
      [ "$name" = monitor ] || alive "$name" || { log "$what: given up"; return 1; }
    done
    sleep 0.2
  done
}

# stop NAME: SIGTERM, then SIGKILL after 15 s.
stop() {
  local name=$1 pid=${PIDS[$1]:-} i t0=$EPOCHREALTIME
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 75; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "$name did not stop on SIGTERM in 15 s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null
    fi
  fi
  wait "$pid" 2>/dev/null || true
  unset "PIDS[$name]"
  [ "$name" = monitor ] || log "stopped $name ($(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')s)"
}

# ensure_packages PKG... installs the Debian packages missing, without
# starting their services (the e2e starts its own).
ensure_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  log "installing ${missing[*]}"
  local policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    policy=1
  fi
  local rc=0
  DEBIAN_FRONTEND=noninteractive nice -n 10 apt-get install -y --no-install-recommends "${missing[@]}" >"$STATE/logs/apt.log" 2>&1 || rc=$?
  [ -z "$policy" ] || rm -f /usr/sbin/policy-rc.d
  [ "$rc" = 0 ] || { tail -20 "$STATE/logs/apt.log" >&2; return 1; }
}

# go_build DIR OUT PKG... builds into OUT (a file, or a directory ending
# in /) with the e2e's own build cache, at low priority.
go_build() {
  local dir=$1 out=$2
  shift 2
  (cd "$dir" && GOCACHE="$CACHE/go-build" CGO_ENABLED=0 nice -n 10 go build -trimpath -ldflags "-s -w ${LDFLAGS:-}" -o "$out" "$@")
}

# build_tools NAME DIR VERSION LDFLAGS PKG... builds the commands PKG of
# the module in DIR, which pins them at VERSION, into
# CACHE/bin/NAME-VERSION-KEY once per go.mod, go.sum and Go (KEY): BIN is
# that directory.
build_tools() {
  local name=$1 dir=$2 version=$3 ldflags=$4 key missing=() p
  shift 4
  key=$(cat "$dir/go.mod" "$dir/go.sum" <(go version) | sha256sum | cut -c1-12)
  BIN=$CACHE/bin/$name-$version-$key
  for p in "$@"; do
    [ -x "$BIN/${p##*/}" ] || missing+=("$p")
  done
  if [ ${#missing[@]} = 0 ]; then
    log "cached: $name $version ($(for p in "$@"; do printf '%s ' "${p##*/}"; done)) in $(short "$BIN")"
    return
  fi
  log "building $name $version: $(for p in "${missing[@]}"; do printf '%s ' "${p##*/}"; done)(the first build takes many minutes)"
  mkdir -p "$BIN"
  local t0=$EPOCHREALTIME cpu0
  cpu0=$(cpu_children)
  LDFLAGS=$ldflags go_build "$dir" "$BIN/" "${missing[@]}"
  log "built $name $version in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s, $(awk -v a="$cpu0" -v b="$(cpu_children)" 'BEGIN { printf "%.0f", b - a }') s of CPU (user and system)"
}

# cpu_children prints the CPU seconds (user and system) of this shell's
# finished children so far. times runs in this shell (in a pipe or $(...)
# it would count a subshell's children).
cpu_children() {
  local f
  f=$(mktemp)
  times >"$f"
  awk 'NR == 2 {
    for (i = 1; i <= 2; i++) { m = $i; sub(/m.*/, "", m); s = $i; sub(/^[0-9]+m/, "", s); sub(/s$/, "", s); t += m * 60 + s }
    printf "%.3f", t }' "$f"
  rm -f "$f"
}

# build_k8s NAME... builds the Kubernetes components named (kube-apiserver,
# kubectl, ...) at the release deploy/e2e/k8s/go.mod pins: K8S_BIN.
build_k8s() {
  local v=k8s.io/component-base/version minor=${K8S_VERSION#v1.}
  minor=${minor%%.*}
  build_tools kubernetes "$E2E_HERE/k8s" "$K8S_VERSION" \
    "-X $v.gitVersion=$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean" \
    "${@/#/k8s.io/kubernetes/cmd/}"
  K8S_BIN=$BIN
}

# pki makes a CA and, signed by it, a key and certificate per
# NAME|SUBJECT[|SANS] (ECDSA P-256, valid a day), and the service
# accounts' signing key.
pki() {
  local d=$STATE/pki spec name subj sans
  openssl ecparam -name prime256v1 -genkey -noout -out "$d/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$d/ca.key" -subj "/CN=pacer-e2e-ca" -days 1 -out "$d/ca.crt" 2>/dev/null
  openssl ecparam -name prime256v1 -genkey -noout -out "$d/sa.key" 2>/dev/null
  openssl ec -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
  for spec in "$@"; do
    IFS='|' read -r name subj sans <<<"$spec"
    openssl ecparam -name prime256v1 -genkey -noout -out "$d/$name.key" 2>/dev/null
    openssl req -new -key "$d/$name.key" -subj "$subj" -out "$d/$name.csr" 2>/dev/null
    {
      echo "basicConstraints=CA:FALSE"
      echo "keyUsage=critical,digitalSignature,keyEncipherment"
      if [ -n "$sans" ]; then
        echo "extendedKeyUsage=serverAuth"
        echo "subjectAltName=$sans"
      else
        echo "extendedKeyUsage=clientAuth"
      fi
    } >"$d/$name.ext"
    openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
      -days 1 -extfile "$d/$name.ext" -out "$d/$name.crt" 2>/dev/null
  done
  log "certificates: ca ${*%%|*}"
}

# kubeconfig NAME writes STATE/NAME.kubeconfig: the apiserver with the
# client certificate NAME.
kubeconfig() {
  local d=$STATE/pki
  cat >"$STATE/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: pacer-e2e
    cluster:
      server: $API
      certificate-authority: $d/ca.crt
users:
  - name: $1
    user:
      client-certificate: $d/$1.crt
      client-key: $d/$1.key
contexts:
  - name: pacer-e2e
    context: {cluster: pacer-e2e, user: $1}
current-context: pacer-e2e
EOF
}

# kc is kubectl against the e2e's apiserver, as its admin.
kc() { nsenter --net="$NETNS" "$K8S_BIN/kubectl" --kubeconfig "$STATE/admin.kubeconfig" "$@"; }

# start_etcd starts Debian's etcd-server on the node's loopback.
start_etcd() {
  start etcd etcd --name pacer-e2e --data-dir "$STATE/etcd" \
    --listen-client-urls "$ETCD" --advertise-client-urls "$ETCD" \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster pacer-e2e=http://127.0.0.1:2380
  wait_for "etcd healthy" 30 in_node curl -fsS "$ETCD/health"
  log "etcd $(in_node curl -fsS "$ETCD/version")"
}

# start_apiserver starts kube-apiserver on the node's loopback, with the
# admission plugins a cluster runs by default (PodSecurity among them)
# and Node,RBAC authorization.
start_apiserver() {
  local d=$STATE/pki
  start kube-apiserver "$K8S_BIN/kube-apiserver" \
    --etcd-servers "$ETCD" \
    --bind-address 127.0.0.1 --secure-port 6443 --advertise-address "$GW" \
    --tls-cert-file "$d/apiserver.crt" --tls-private-key-file "$d/apiserver.key" \
    --client-ca-file "$d/ca.crt" \
    --kubelet-client-certificate "$d/apiserver-kubelet-client.crt" --kubelet-client-key "$d/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$d/ca.crt" --kubelet-preferred-address-types InternalIP \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$d/sa.pub" --service-account-signing-key-file "$d/sa.key" \
    --service-cluster-ip-range "$SVC_CIDR" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --profiling=false
  wait_for "kube-apiserver ready" 90 in_node curl -fsS --cacert "$d/ca.crt" "$API/readyz"
  kubeconfig admin
  log "kube-apiserver $(kc version -o json | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p' | tail -1) ready"
}

# cleanup stops what this script started, newest first, and puts the
# machine back: mounts under STATE, cgroups the kubelet made, the kernel
# settings it changed, links and directories it left.
cleanup() {
  local rc=$?
  set +e
  trap - EXIT INT TERM ERR
  if [ -n "$STEP" ]; then
    log "FAILED in step '$STEP' after $(awk -v a="$STEP_T0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')s (exit $rc)"
  fi
  [ -n "$STATE" ] || exit "$rc"
  if [ -n "${PACER_E2E_HOLD:-}" ]; then
    # For a look inside before it goes: kc is kubectl, in_node a shell in
    # the node's namespace.
    log "PACER_E2E_HOLD: holding the cluster (state $STATE, kubeconfig $STATE/admin.kubeconfig, network namespace $NETNS) until SIGUSR1"
    trap 'true' USR1
    sleep infinity &
    wait $! || true
    kill $! 2>/dev/null
  fi
  log "--> cleanup"
  if declare -F cleanup_node >/dev/null; then
    cleanup_node
  fi
  local name
  for name in redis kube-scheduler kube-controller-manager kube-apiserver etcd; do
    stop "$name"
  done
  for name in "${!PIDS[@]}"; do
    stop "$name"
  done
  # Mounts under the state directory (containers' root filesystems, the
  # pods' network namespaces, the node's), deepest first.
  local m
  for m in $(findmnt -rn -o TARGET | grep -F "$STATE/" | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m"
  done
  local entry
  for entry in "${SYSCTLS_SAVED[@]}"; do
    echo "${entry#* }" >"${entry%% *}" 2>/dev/null || log "could not restore ${entry%% *} to ${entry#* }"
  done
  if [ -d /var/log/containers ]; then
    find /var/log/containers -maxdepth 1 -type l -lname "$STATE/*" -delete
    [ -z "$VAR_LOG_CONTAINERS_CREATED" ] || rmdir /var/log/containers
  fi
  [ ! -d /var/lib/cni/results ] || find /var/lib/cni/results -name 'pacer-e2e-*' -delete
  for m in "${MADE[@]}"; do
    rm -rf "$m"
  done
  if [ -n "${KEEP:-}" ]; then
    cp -r "$STATE/logs/." "$KEEP/" 2>/dev/null
  fi
  rm -rf "$STATE"
  [ "${LOG#"$STATE"/}" = "${LOG:-}" ] || LOG=""
  local left=""
  ! findmnt -rn -o TARGET | grep -qF "$STATE" || left+=" mounts"
  ! pgrep -f -- "$STATE" >/dev/null || left+=" processes($(pgrep -f -- "$STATE" | paste -sd,))"
  ! compgen -G '/sys/fs/cgroup/*/kubepods' >/dev/null || left+=" cgroups"
  for m in "${MADE[@]}"; do
    [ ! -e "$m" ] || left+=" $m"
  done
  [ ! -e "$STATE" ] || left+=" files"
  if [ -n "$left" ]; then
    log "<-- cleanup: LEFT BEHIND:$left"
    [ "$rc" != 0 ] || rc=1
  else
    log "<-- cleanup: nothing of the run is left (no process, mount, cgroup or file)${KEEP:+; its logs and results are in $(short "$KEEP")}"
  fi
  summary
  exit "$rc"
}
