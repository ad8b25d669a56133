#!/usr/bin/env bash
# Starts (or reuses) the loopback-only test cluster and prints the path of its admin kubeconfig on stdout.
#
#   bash test-cluster/scripts/up.sh [--release v0.5.6|v1.0.3|v0.4.6|v0.5.0] [--nodes N] [--kwok-only]
#                                   [--node-labels k=v,...] [--node-taints k=v:Effect,...] [--workloads]
#   default (env AGENTPLANE_TEST_CLUSTER_REAL_NODE=1): kwok nodes + the real node (kubelet + containerd), tainted
#     agentplane.io/real-node.
#   --kwok-only (env AGENTPLANE_TEST_CLUSTER_REAL_NODE=0): kwok nodes alone, no real node (cheaper: no kubelet,
#     containerd, kube-router, no image import).
#   --real-node-only: the real node alone, untainted (no kwok nodes): every pod runs for real, e.g. an environment
#     applied unchanged (examples/dev-gvisor).
#   --workloads (env AGENTPLANE_TEST_CLUSTER_WORKLOADS=1): Deployments run their pods and pods get ServiceAccount
#     tokens, as on a full cluster: the deployment, replicaset, serviceaccount and root-CA publisher controllers, and
#     the ServiceAccount admission plugin (off by default: many tests install Deployments whose images cannot run).
#   env: AGENTPLANE_TEST_CLUSTER_RELEASE, AGENTPLANE_TEST_CLUSTER_NODES, AGENTPLANE_TEST_CLUSTER_NODE_LABELS,
#        AGENTPLANE_TEST_CLUSTER_NODE_TAINTS, AGENTPLANE_TEST_CLUSTER_CACHE (binary cache, see build.sh),
#        AGENTPLANE_TEST_CLUSTER_RUN (run dir, default test-cluster/.run), AGENTPLANE_TEST_CLUSTER_POD_NET (default: 20..219 from the run dir),
#        AGENTPLANE_TEST_CLUSTER_KCM_CONTROLLERS (more kube-controller-manager controllers, e.g.
#        deployment-controller,replicaset-controller for a Deployment that must run its pods).
#
# Processes (bound to 127.0.0.1 — except the v0.5.6 and v0.5.0 controllers' webhook server, which has no host flag; pid files in .run/pids): etcd, kube-apiserver, kube-scheduler,
# kube-controller-manager (GC, namespace deletion, Jobs), kwok, agent-sandbox-controller (under a TokenRequest token of the
# install's own ServiceAccount), sandbox-router (v0.5.6, v1.0.3), the runtime stand-in (starts sandboxd per sandbox pod) and
# the real node `agentplane-node` (scripts/node.sh: kubelet, containerd with runc + gVisor, CNI bridge, kube-router,
# in a network namespace of its own; tainted agentplane.io/real-node=true:NoSchedule).
# Cluster facts for tests: test-cluster/.run/cluster.json. Stop with down.sh. Progress goes to stderr.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
REPO="$(cd "$TC_ROOT/.." && pwd)"
RUN="$TC_RUN"

ORIG_ARGS=("$@")
RELEASE="${AGENTPLANE_TEST_CLUSTER_RELEASE:-v0.5.6}"
NODES="${AGENTPLANE_TEST_CLUSTER_NODES:-1}"
NODE_LABELS="${AGENTPLANE_TEST_CLUSTER_NODE_LABELS:-}"
NODE_TAINTS="${AGENTPLANE_TEST_CLUSTER_NODE_TAINTS:-}"
REAL_NODE="${AGENTPLANE_TEST_CLUSTER_REAL_NODE:-1}"
REAL_NODE_TAINT=1
WORKLOADS="${AGENTPLANE_TEST_CLUSTER_WORKLOADS:-0}"
# Node i gets podCIDR 127.<POD_NET>.<i>.0/24. Default: derived from the run dir path (20..219), so clusters of different
# work trees / clones on one machine do not hand out the same pod IPs (the runtime stand-in binds them).
POD_NET="${AGENTPLANE_TEST_CLUSTER_POD_NET:-$(( 20 + $(printf '%s' "$RUN" | cksum | cut -d' ' -f1) % 200 ))}"
while [ $# -gt 0 ]; do
  case "$1" in
    --release) RELEASE="$2"; shift 2 ;;
    --release=*) RELEASE="${1#*=}"; shift ;;
    --nodes) NODES="$2"; shift 2 ;;
    --nodes=*) NODES="${1#*=}"; shift ;;
    --node-labels) NODE_LABELS="$2"; shift 2 ;;
    --node-labels=*) NODE_LABELS="${1#*=}"; shift ;;
    --node-taints) NODE_TAINTS="$2"; shift 2 ;;
    --node-taints=*) NODE_TAINTS="${1#*=}"; shift ;;
    --kwok-only) REAL_NODE=0; shift ;;
    --real-node-only) REAL_NODE=1; REAL_NODE_TAINT=0; NODES=0; shift ;;
    --workloads) WORKLOADS=1; shift ;;
    -h|--help) sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test-cluster up: unknown option '$1' (see --help)" >&2; exit 64 ;;
  esac
done
case "$REAL_NODE" in 0|1) ;; *) echo "test-cluster up: AGENTPLANE_TEST_CLUSTER_REAL_NODE must be 0 or 1, got '$REAL_NODE'" >&2; exit 64 ;; esac
case "$WORKLOADS" in 0|1) ;; *) echo "test-cluster up: AGENTPLANE_TEST_CLUSTER_WORKLOADS must be 0 or 1, got '$WORKLOADS'" >&2; exit 64 ;; esac
case "$RELEASE" in v0.5.6|v1.0.3|v0.4.6|v0.5.0) ;; *) echo "test-cluster up: release '$RELEASE' is not built here; use v0.5.6, v1.0.3, v0.4.6 or v0.5.0" >&2; exit 64 ;; esac
# What the release ships (per tag): a Go sandbox-router and sandboxd from v0.5.1 on; a conversion webhook in the
# controller on v0.5.x only (`cmd/agent-sandbox-controller/main.go@v1.0.3` has no --webhook-* / --manage-webhook-certs
# flags: an unknown flag exits 2); sandboxd's --listen-host from v1.0.1 on (`packages/sandboxd/cmd/sandboxd/main.go@v1.0.3`).
HAS_ROUTER="$(tc_release_has_router "$RELEASE")"; SANDBOXD_LISTEN_HOST="$(tc_release_sandboxd_listen_host "$RELEASE")"
[[ "$POD_NET" =~ ^[0-9]+$ ]] && [ "$POD_NET" -ge 1 ] && [ "$POD_NET" -le 254 ] || { echo "test-cluster up: AGENTPLANE_TEST_CLUSTER_POD_NET must be 1..254, got '$POD_NET'" >&2; exit 64; }
[[ "$NODES" =~ ^[1-9][0-9]?$ ]] || { [ "$NODES" = 0 ] && [ "$REAL_NODE_TAINT" = 0 ]; } || { echo "test-cluster up: --nodes must be 1..99, got '$NODES'" >&2; exit 64; }

t0=$(date +%s.%N)
elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1fs", b-a}'; }

# --- one up.sh per run dir at a time; reuse -----------------------------------------------------------
mkdir -p "$TC_CACHE/locks"
exec 8>"$TC_CACHE/locks/up-$(printf '%s' "$RUN" | tc_sha256).lock"
flock 8
alive() { local f="$RUN/pids/$1.pid"; [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; }
if [ -f "$RUN/cluster.env" ]; then
  . "$RUN/cluster.env"
  if alive kube-apiserver && curl -fsS --max-time 2 --cacert "$RUN/pki/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" "https://127.0.0.1:$API_PORT/readyz" >/dev/null 2>&1; then
    if [ "$CLUSTER_RELEASE" != "$RELEASE" ]; then
      echo "test-cluster up: a cluster with release $CLUSTER_RELEASE is already up; run 'npm run cluster:down' first to switch to $RELEASE" >&2; exit 65
    fi
    tc_log "reusing the running cluster (release $CLUSTER_RELEASE, apiserver 127.0.0.1:$API_PORT); node options apply only to a new cluster"
    echo "$RUN/kubeconfig"; exit 0
  fi
  tc_log "stale state in $RUN (apiserver not answering); cleaning it up"
  bash "$TC_ROOT/scripts/down.sh" >&2
fi

# --- binaries ----------------------------------------------------------------------------------------
AS_COMP="agent-sandbox-$RELEASE"
NEEDED=(etcd k8s kwok "$AS_COMP")
[ "$REAL_NODE" = 1 ] && NEEDED+=($(tc_node_components) agent-sandbox-v0.5.6)   # the node's images carry v0.5.6's sandboxd/router
for c in "${NEEDED[@]}"; do
  tc_is_built "$c" || { tc_log "binaries for $c are not cached; building (bash test-cluster/scripts/build.sh $c)"; bash "$TC_ROOT/scripts/build.sh" "$c" >&2; }
done
ETCD_BIN="$(tc_key_dir etcd)"; K8S_BIN="$(tc_key_dir k8s)"; KWOK_BIN="$(tc_key_dir kwok)"; AS_BIN="$(tc_key_dir "$AS_COMP")"
# The runtime stand-in runs the release's own sandboxd when it has --listen-host (v1.0.3: it binds the pod IP itself),
# else v0.5.6's (loopback only; the stand-in forwards the pod IP's ports to it) for every other release.
if [ "$SANDBOXD_LISTEN_HOST" = 1 ]; then SANDBOXD_BIN="$AS_BIN/sandboxd"; else SANDBOXD_BIN="$(tc_key_dir agent-sandbox-v0.5.6)/sandboxd"; fi
[ -x "$SANDBOXD_BIN" ] || SANDBOXD_BIN=""

# --- run dir, PKI, ports ------------------------------------------------------------------------------
rm -rf "$RUN"; mkdir -p "$RUN/pids" "$RUN/logs" "$RUN/pki" "$RUN/webhook-certs" "$RUN/sandboxd"
on_exit() {
  local rc=$?
  [ $rc -eq 0 ] && return
  tc_log "cluster:up failed (exit $rc); stopping what was started"
  bash "$TC_ROOT/scripts/down.sh" --keep-logs >&2 || true
  # Ports are picked free and released just before the processes bind them; another process may win one. Retry once.
  if [ -z "${AGENTPLANE_TEST_CLUSTER_UP_RETRY:-}" ] && grep -qs "address already in use" "$RUN"/logs/*.log; then
    tc_log "a port was taken meanwhile (address already in use); starting once more with new ports"
    exec 8>&-
    AGENTPLANE_TEST_CLUSTER_UP_RETRY=1 exec bash "${BASH_SOURCE[0]}" "${ORIG_ARGS[@]}"
  fi
}
trap on_exit EXIT

P="$RUN/pki"
openssl_q() { openssl "$@" >/dev/null 2>&1 || { echo "test-cluster up: openssl $1 failed" >&2; openssl "$@" >&2; exit 1; }; }
openssl_q req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 -subj /CN=agentplane-test-cluster-ca \
  -keyout "$P/ca.key" -out "$P/ca.crt" -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
serving() {
  openssl_q req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" -keyout "$P/$1.key" -out "$P/$1.csr"
  printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$2" >"$P/$1.ext"
  openssl_q x509 -req -in "$P/$1.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial -days 3650 -out "$P/$1.crt" -extfile "$P/$1.ext"
}
WH_SVC=agent-sandbox-webhook-service; WH_NS=agent-sandbox-system
# 10.96.0.1 = the `kubernetes` Service, which pods on the real node dial (DNATed to a relay inside the node netns).
serving apiserver 'IP:127.0.0.1,DNS:localhost,IP:10.96.0.1,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local'
serving webhook "IP:127.0.0.1,DNS:localhost,DNS:$WH_SVC,DNS:$WH_SVC.$WH_NS,DNS:$WH_SVC.$WH_NS.svc,DNS:$WH_SVC.$WH_NS.svc.cluster.local"
openssl_q genrsa -out "$P/sa.key" 2048
# The apiserver's client certificate towards kubelets (x509 authn on the real node's kubelet; system:masters for its webhook authz).
openssl_q req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/O=system:masters/CN=kube-apiserver-kubelet-client" \
  -keyout "$P/kubelet-client.key" -out "$P/kubelet-client.csr"
printf 'extendedKeyUsage=clientAuth\n' >"$P/kubelet-client.ext"
openssl_q x509 -req -in "$P/kubelet-client.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial -days 3650 -out "$P/kubelet-client.crt" -extfile "$P/kubelet-client.ext"
cp "$P/webhook.crt" "$RUN/webhook-certs/tls.crt"; cp "$P/webhook.key" "$RUN/webhook-certs/tls.key"
ADMIN_TOKEN="agentplane-admin-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
echo "$ADMIN_TOKEN,agentplane-admin,agentplane-admin,\"system:masters\"" >"$RUN/tokens.csv"

# 13 free loopback ports (bound to 127.0.0.1:0 and released just before the processes start).
read -r ETCD_PORT ETCD_PEER_PORT API_PORT SCHED_PORT KCM_PORT CTRL_METRICS_PORT CTRL_PROBE_PORT WEBHOOK_PORT \
  ROUTER_HTTP_PORT ROUTER_METRICS_PORT ROUTER_PROBE_PORT KWOK_PORT SPARE_PORT < <(node -e '
  const net = require("net"); const n = 13; const servers = []; const ports = [];
  (async () => { for (let i = 0; i < n; i++) { const s = net.createServer(); await new Promise((r) => s.listen(0, "127.0.0.1", r));
    servers.push(s); ports.push(s.address().port); } servers.forEach((s) => s.close()); console.log(ports.join(" ")); })();')

cat >"$RUN/kubeconfig" <<KCFG
apiVersion: v1
kind: Config
clusters:
- name: agentplane-test
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $P/ca.crt
users:
- name: agentplane-admin
  user:
    token: $ADMIN_TOKEN
contexts:
- name: agentplane-test
  context:
    cluster: agentplane-test
    user: agentplane-admin
current-context: agentplane-test
KCFG
KCFG="$RUN/kubeconfig"

# --- process helpers -----------------------------------------------------------------------------------
start() { # name binary args...
  local name="$1"; shift
  setsid "$@" >"$RUN/logs/$name.log" 2>&1 </dev/null 8>&- &   # fd 8 = the up.sh lock; daemons must not hold it
  echo $! >"$RUN/pids/$name.pid"
}
fail_with_log() { echo "test-cluster up: $1; last lines of $RUN/logs/$2.log:" >&2; tail -n 25 "$RUN/logs/$2.log" >&2 || true; exit 1; }
wait_for() { # name timeout-seconds command...
  local name="$1" limit="$2"; shift 2
  local deadline=$(( $(date +%s) + limit ))
  until "$@" >/dev/null 2>&1; do
    alive "$name" || fail_with_log "$name exited during start-up" "$name"
    [ "$(date +%s)" -lt "$deadline" ] || fail_with_log "$name not ready after ${limit}s" "$name"
    sleep 0.1
  done
  tc_log "$name ready ($(elapsed))"
}
api_get() { curl -fsS --max-time 2 --cacert "$P/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" "https://127.0.0.1:$API_PORT$1"; }
secure_health() { curl -fsSk --max-time 2 "https://127.0.0.1:$1/healthz"; }

# --- Agent Sandbox install (through AgentPlane): synthesizes while the control plane boots, applies once it is ready
. "$REPO/scripts/upstream-data.sh"
TSX_LOADER="file://$REPO/node_modules/tsx/dist/loader.mjs"   # node --import: one process (the tsx CLI would fork)
(cd "$REPO" && exec node --import "$TSX_LOADER" test-cluster/install.ts --run "$RUN" --release "$RELEASE" --webhook-port "$WEBHOOK_PORT" \
  --nodes "$NODES" --pod-net "$POD_NET" --node-labels "$NODE_LABELS" --node-taints "$NODE_TAINTS") >"$RUN/logs/install.log" 2>&1 </dev/null 8>&- &
INSTALL_PID=$!; echo "$INSTALL_PID" >"$RUN/pids/install.pid"

# --- control plane -------------------------------------------------------------------------------------
start etcd "$ETCD_BIN/etcd" --name=agentplane --data-dir="$RUN/etcd" \
  --listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster="agentplane=http://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-state=new \
  --listen-metrics-urls="http://127.0.0.1:$SPARE_PORT" \
  --unsafe-no-fsync=true --auto-compaction-retention=1 --log-level=warn
wait_for etcd 30 curl -fsS --max-time 1 "http://127.0.0.1:$ETCD_PORT/readyz"

APISERVER_NODE_ARGS=()
if [ "$REAL_NODE" = 1 ]; then
  . "$TC_ROOT/scripts/node.sh"
  # apiserver -> kubelet (exec, port-forward, logs) goes as HTTP CONNECT over a unix socket into the node netns.
  mkdir -p "$NODE_DIR/sock"
  cat >"$RUN/egress-selector.yaml" <<YAML
apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: $NODE_DIR/sock/egress.sock
YAML
  APISERVER_NODE_ARGS=(--egress-selector-config-file="$RUN/egress-selector.yaml" --kubelet-preferred-address-types=InternalIP
    --kubelet-client-certificate="$P/kubelet-client.crt" --kubelet-client-key="$P/kubelet-client.key")
fi
# PodTemplates (used by no component here) bypass the watch cache (size 0): their watches go to etcd, so a watch from a
# compacted resourceVersion gets etcd's real 410 Gone (the client-node-watch-reconnect case test compacts etcd; the cache answers 200 from its window).
# --workloads: the ServiceAccount admission plugin gives every pod its ServiceAccount's token volume (with the CA from
# ConfigMap kube-root-ca.crt, which the root-CA publisher writes into each namespace).
SA_ADMISSION=ServiceAccount,; [ "$WORKLOADS" = 0 ] || SA_ADMISSION=""
start kube-apiserver "$K8S_BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD_PORT" --watch-cache-sizes=podtemplates#0 \
  --bind-address=127.0.0.1 --secure-port="$API_PORT" --advertise-address=127.0.0.1 --endpoint-reconciler-type=none \
  --tls-cert-file="$P/apiserver.crt" --tls-private-key-file="$P/apiserver.key" --client-ca-file="$P/ca.crt" \
  --token-auth-file="$RUN/tokens.csv" --service-account-issuer="https://127.0.0.1:$API_PORT" \
  --service-account-key-file="$P/sa.key" --service-account-signing-key-file="$P/sa.key" \
  --authorization-mode=RBAC --disable-admission-plugins=${SA_ADMISSION}TaintNodesByCondition \
  --service-cluster-ip-range=10.96.0.0/24 --allow-privileged=true --cert-dir="$RUN/apiserver-certs" \
  --enable-priority-and-fairness=false --profiling=false --v=1 "${APISERVER_NODE_ARGS[@]}"
wait_for kube-apiserver 90 api_get /readyz
if [ "$REAL_NODE" = 1 ]; then
  node_prepare
  node_start
fi

COMMON_K=(--kubeconfig="$KCFG" --leader-elect=false --bind-address=127.0.0.1 --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics)
start kube-scheduler "$K8S_BIN/kube-scheduler" "${COMMON_K[@]}" --secure-port="$SCHED_PORT"

# kwok stages come from the module cache (go:embed'ded YAML of sigs.k8s.io/kwok@v0.8.0, kustomize/stage/**).
KW="$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK_VERSION/kustomize/stage"
[ -d "$KW" ] || (cd "$TC_GO/kwok" && go mod download sigs.k8s.io/kwok >&2)
{ for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
           pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do cat "$KW/$f"; echo; echo ---; done; } >"$RUN/kwok-stages.yaml"
start kwok "$KWOK_BIN/kwok" --kubeconfig="$KCFG" --config="$RUN/kwok-stages.yaml" \
  --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --cidr="127.$POD_NET.255.0/24" --node-ip=127.0.0.1 --node-lease-duration-seconds=40 --server-address="127.0.0.1:$KWOK_PORT"

cat >"$RUN/cluster.env" <<ENV
CLUSTER_RELEASE=$RELEASE
API_PORT=$API_PORT
ADMIN_TOKEN=$ADMIN_TOKEN
ENV

if [ -n "$SANDBOXD_BIN" ]; then
  start runtime-standin env AGENTPLANE_TEST_CLUSTER_RUN="$RUN" AGENTPLANE_SANDBOXD_BIN="$SANDBOXD_BIN" \
    AGENTPLANE_SANDBOXD_LISTEN_HOST="$SANDBOXD_LISTEN_HOST" AGENTPLANE_TEST_CLUSTER_RELEASE="$RELEASE" \
    node --import "$TSX_LOADER" "$TC_ROOT/runtime-standin.ts"
else
  tc_log "no sandboxd binary ($([ "$SANDBOXD_LISTEN_HOST" = 1 ] && echo "$AS_COMP" || echo agent-sandbox-v0.5.6) not built): runtime stand-in not started"
fi

if ! wait "$INSTALL_PID"; then
  echo "test-cluster up: installing Agent Sandbox $RELEASE failed:" >&2; sed 's/^/  /' "$RUN/logs/install.log" >&2; exit 1
fi
rm -f "$RUN/pids/install.pid"
sed 's/^/  /' "$RUN/logs/install.log" >&2
tc_log "Agent Sandbox $RELEASE installed; nodes created ($(elapsed))"
# kube-controller-manager only now: its garbage collector discovers resources at start and re-syncs discovery only every
# 30 s, so the Sandbox CRDs must exist first or deleting a Sandbox leaves its Pod for up to that long. The job controller
# runs the VerifierJob's pods (test/cluster/verifier-job-real-node.test.ts).
KCM_CONTROLLERS="garbage-collector-controller,namespace-controller,job-controller"
KCM_WORKLOAD_ARGS=()
if [ "$WORKLOADS" = 1 ]; then
  KCM_CONTROLLERS+=",deployment-controller,replicaset-controller,serviceaccount-controller,root-ca-certificate-publisher-controller"
  KCM_WORKLOAD_ARGS=(--root-ca-file="$P/ca.crt")
fi
start kube-controller-manager "$K8S_BIN/kube-controller-manager" "${COMMON_K[@]}" --secure-port="$KCM_PORT" \
  --controllers="$KCM_CONTROLLERS${AGENTPLANE_TEST_CLUSTER_KCM_CONTROLLERS:+,$AGENTPLANE_TEST_CLUSTER_KCM_CONTROLLERS}" \
  --use-service-account-credentials=false "${KCM_WORKLOAD_ARGS[@]}"

# --- agent-sandbox controller, router, runtime stand-in ---------------------------------------------
mapfile -t CTRL_ARGS < <(tc_controller_args "$RELEASE" "$RUN" "$CTRL_METRICS_PORT" "$CTRL_PROBE_PORT" "$WEBHOOK_PORT")
start agent-sandbox-controller "$AS_BIN/agent-sandbox-controller" "${CTRL_ARGS[@]}"
wait_for agent-sandbox-controller 60 curl -fsS --max-time 1 "http://127.0.0.1:$CTRL_PROBE_PORT/readyz"
if [ "$RELEASE" = v0.5.0 ]; then
  # v0.5.0 merge-patched each CRD to the Service form + caBundle before its manager (and /readyz) started
  # (`patchCRDs`, cmd/agent-sandbox-controller/tls.go@v0.5.0). Repoint them at the loopback url; the `test` op makes the
  # patch fail unless the caBundle is the run's CA, i.e. the controller used the Secret install.ts pre-seeded.
  CA_B64="$(base64 -w0 "$P/ca.crt")"
  for crd in sandboxes.agents.x-k8s.io sandboxclaims.extensions.agents.x-k8s.io sandboxtemplates.extensions.agents.x-k8s.io \
             sandboxwarmpools.extensions.agents.x-k8s.io; do
    curl -fsS --max-time 5 --cacert "$P/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" -X PATCH -o /dev/null \
      -H 'Content-Type: application/json-patch+json' "https://127.0.0.1:$API_PORT/apis/apiextensions.k8s.io/v1/customresourcedefinitions/$crd" \
      --data "[{\"op\":\"test\",\"path\":\"/spec/conversion/webhook/clientConfig/caBundle\",\"value\":\"$CA_B64\"},
               {\"op\":\"replace\",\"path\":\"/spec/conversion/webhook/clientConfig\",
                \"value\":{\"url\":\"https://127.0.0.1:$WEBHOOK_PORT/convert\",\"caBundle\":\"$CA_B64\"}}]" \
      || fail_with_log "repointing CRD $crd's conversion webhook at 127.0.0.1:$WEBHOOK_PORT failed" agent-sandbox-controller
  done
  tc_log "v0.5.0: conversion webhooks repointed from the Service to https://127.0.0.1:$WEBHOOK_PORT/convert"
  wait_for agent-sandbox-controller 30 curl -sk --max-time 1 -o /dev/null "https://127.0.0.1:$WEBHOOK_PORT/tls-ready"
fi
if [ "$RELEASE" = v0.5.6 ]; then
  wait_for agent-sandbox-controller 30 curl -sk --max-time 1 -o /dev/null "https://127.0.0.1:$WEBHOOK_PORT/tls-ready"   # any TLS answer (404)
fi
# v1.0.3: no webhook server (nothing to wait for) and CRDs without spec.conversion (nothing to repoint).
if [ "$HAS_ROUTER" = 1 ]; then
  mapfile -t ROUTER_CMD < <(tc_router_command "$RUN" "$AS_BIN/sandbox-router" "$ROUTER_HTTP_PORT" "$ROUTER_METRICS_PORT" "$ROUTER_PROBE_PORT")
  start sandbox-router "${ROUTER_CMD[@]}"
fi
wait_for kube-scheduler 30 secure_health "$SCHED_PORT"
wait_for kube-controller-manager 30 secure_health "$KCM_PORT"
[ "$HAS_ROUTER" = 1 ] && wait_for sandbox-router 60 curl -fsS --max-time 1 "http://127.0.0.1:$ROUTER_PROBE_PORT/readyz"

[ -n "$SANDBOXD_BIN" ] && wait_for runtime-standin 30 test -f "$RUN/runtime-standin.ready"
REAL_NODE_FACTS=()
if [ "$REAL_NODE" = 1 ]; then
  node_wait_ready
  node_verify
  REAL_NODE_FACTS=("$NODE_NAME" "$NODE_NS" "$NODE_IP" "$POD_CIDR" "$NODE_DIR/sock/containerd.sock" "$REAL_NODE_TAINT")
fi

node -e '
  const [run, release, hasRouter, ...p] = process.argv.slice(1); const n = (i) => Number(p[i]); const r = hasRouter === "1";
  const info = { release, kubeconfig: run + "/kubeconfig", controllerKubeconfig: run + "/controller.kubeconfig", runDir: run,
    caFile: run + "/pki/ca.crt", apiServer: "https://127.0.0.1:" + p[0],
    ports: { etcd: n(1), apiserver: n(0), scheduler: n(2), controllerManager: n(3), controllerMetrics: n(4), controllerProbe: n(5),
             webhook: n(6), routerHttp: r ? n(7) : null, routerMetrics: r ? n(8) : null, routerProbe: r ? n(9) : null },
    podNet: n(11), runtimeStandin: p[10] === "yes",
    realNode: p[12] ? { name: p[12], netns: p[13], nodeIP: p[14], podCIDR: p[15], containerdSocket: p[16], taint: p[17] === "1" ? "agentplane.io/real-node=true:NoSchedule" : null } : null,
    startedAt: new Date().toISOString() };
  require("fs").writeFileSync(run + "/cluster.json", JSON.stringify(info, null, 2) + "\n");' \
  "$RUN" "$RELEASE" "$HAS_ROUTER" "$API_PORT" "$ETCD_PORT" "$SCHED_PORT" "$KCM_PORT" "$CTRL_METRICS_PORT" "$CTRL_PROBE_PORT" "$WEBHOOK_PORT" \
  "$ROUTER_HTTP_PORT" "$ROUTER_METRICS_PORT" "$ROUTER_PROBE_PORT" "$([ -n "$SANDBOXD_BIN" ] && echo yes || echo no)" "$POD_NET" \
  "${REAL_NODE_FACTS[@]}"

tc_log "cluster up in $(elapsed): release $RELEASE, apiserver https://127.0.0.1:$API_PORT"
trap - EXIT
echo "$KCFG"
