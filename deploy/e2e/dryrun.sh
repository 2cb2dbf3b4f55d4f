#!/usr/bin/env bash
# The rendered Job against a real kube-apiserver (with etcd), without a
# node: a server-side dry-run, as CI can afford it. It starts Debian's
# etcd and kube-apiserver (built and cached as run.sh builds it) in a
# private network namespace, makes a namespace that enforces the
# restricted Pod Security Standard, and holds deploy/kubernetes/render.sh's
# Job to what the apiserver says about it:
#
#   - accepted by kubectl apply --dry-run=server --warnings-as-errors:
#     strict field validation, the Job's own validation (Indexed,
#     backoffLimitPerIndex), and no pod security warning;
#   - and, so the check can fail: a misspelt field, and the pod template
#     without runAsNonRoot, are refused.
#
# It prints the fields the apiserver defaulted. Run as root; it starts
# nothing outside its namespace and removes all it made. Usage:
#
#   deploy/e2e/dryrun.sh
set -Eeuo pipefail
source "$(dirname "$0")/lib.sh"

trap cleanup EXIT
trap 'on_error $? $LINENO "$BASH_COMMAND"' ERR
trap 'exit 130' INT
trap 'exit 143' TERM
unset KUBECONFIG # every kubectl here is given the run's own

machine() {
  [ "$(id -u)" = 0 ] || die "run as root: it needs a network namespace of its own"
  local p missing=()
  for p in unshare nsenter openssl curl go; do
    command -v "$p" >/dev/null || missing+=("$p")
  done
  [ ${#missing[@]} = 0 ] || die "missing: ${missing[*]}"
}

NS=pacer-e2e

control_plane() {
  ensure_packages etcd-server
  pki "apiserver|/CN=kube-apiserver|IP:127.0.0.1,DNS:localhost" \
    "admin|/O=system:masters/CN=pacer-e2e-admin" \
    "apiserver-kubelet-client|/O=system:masters/CN=kube-apiserver-kubelet-client"
  start_etcd
  start_apiserver
  kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: $NS
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/warn: restricted
EOF
}

# dry_run DESCRIPTION FILE: kubectl apply --dry-run=server, warnings as errors.
dry_run() {
  kc -n "$NS" apply --dry-run=server --warnings-as-errors -f "$2" -o yaml >"$2.stored" 2>"$2.err"
}

checks() {
  local job=$STATE/job.yaml
  "$DEPLOY/kubernetes/render.sh" -n 3 -h redis.pacer-e2e.svc -p 6379 --image localhost/pacer-e2e/pacer:e2e \
    --pull-policy Never --name pacer-e2e --cpu 500m --start-in 600 -- --rate 30k --duration 10s -t get -r 100000 >"$job"
  if ! dry_run "the rendered Job" "$job"; then
    cat "$job.err" >&2
    die "the apiserver refuses the rendered Job"
  fi
  log "accepted: the rendered Job (strict field validation, restricted pod security, no warning)"
  go_build "$DEPLOY" "$CACHE/images/" ./e2e/defaulted
  log "fields the apiserver set that the manifest leaves out:"
  "$CACHE/images/defaulted" "$job" "$job.stored" | sed 's/^/    /' | tee -a "${LOG:-/dev/null}" >&2
  sed 's/parallelism:/paralellism:/' "$job" >"$STATE/misspelt.yaml"
  if dry_run "a misspelt field" "$STATE/misspelt.yaml"; then
    die "the apiserver accepted a misspelt field: the check cannot fail"
  fi
  log "refused, as it must be: a misspelt field ($(grep -o 'unknown field[^,]*' "$STATE/misspelt.yaml.err" | head -1))"
  grep -v 'runAsNonRoot: true' "$job" >"$STATE/root.yaml"
  if dry_run "runAsNonRoot left out" "$STATE/root.yaml"; then
    die "the apiserver accepted a pod that may run as root in a restricted namespace: the check cannot fail"
  fi
  log "refused, as it must be: runAsNonRoot left out ($(grep -o 'violate.*' "$STATE/root.yaml.err" | head -1))"
}

main() {
  step "the machine" machine
  new_state
  step "build (kube-apiserver, kubectl $K8S_VERSION)" build_k8s kube-apiserver kubectl
  step "etcd and kube-apiserver" control_plane
  step "dry-runs of the rendered Job" checks
}

main
