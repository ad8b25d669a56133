#!/usr/bin/env bash
# Moves a running test cluster to another Agent Sandbox release in place, the order an upgrade takes on a real cluster,
# and prints the path of its admin kubeconfig on stdout:
#
#   bash test-cluster/scripts/upgrade.sh --release v0.5.6|v1.0.3 [--restart-controller-manager]
#   (env AGENTPLANE_TEST_CLUSTER_RUN picks the cluster)
#
#   1. the new release's install through AgentPlane (test-cluster/install.ts --upgrade: test-cluster/env/<release>.ts,
#      server-side apply), CRDs first and Established, then RBAC and the rest; the users' templates, pools, claims and
#      sandboxes are left alone. The API server has the last word: it refuses a v1.0.x CRD while the CRD's
#      status.storedVersions still lists v1alpha1, and then nothing else changes (exit 1).
#   2. the old controller is stopped and the new release's controller started (webhook flags on v0.5.x, none on v1.0.x;
#      lib.sh tc_controller_args); on v0.5.6 it waits for the conversion webhook to answer.
#   3. the router (where the release has one) is restarted from the new release, on the cluster's router ports (new free
#      ports when the old release had no router); the runtime stand-in is restarted when the new release's sandboxd differs
#      (v1.0.3: its own sandboxd, which binds the pod IP itself).
#   4. --restart-controller-manager: kube-controller-manager is restarted with the same arguments. Its garbage collector
#      keeps each object under the apiVersion it first saw it at, and when that version is no longer served it retries
#      forever instead of collecting (kubernetes/kubernetes#102641, open; `pkg/controller/garbagecollector/
#      garbagecollector.go@v1.36.3`): after v1alpha1 is gone (v1.0.x), a restart rebuilds its graph from what is served.
#   5. cluster.env and cluster.json name the new release.
# Nothing is migrated or deleted here: storage migration (`agentplane migrate-storage`), the conversion stanza and the
# objects the new release no longer ships are the steps `agentplane plan-upgrade` names; test/cluster/upgrade-path.test.ts
# follows them. The control plane, nodes, pods and the real node keep running. Progress goes to stderr.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
REPO="$(cd "$TC_ROOT/.." && pwd)"
RUN="$TC_RUN"
RELEASE=""; RESTART_KCM=0
while [ $# -gt 0 ]; do
  case "$1" in
    --release) RELEASE="$2"; shift 2 ;;
    --release=*) RELEASE="${1#*=}"; shift ;;
    --restart-controller-manager) RESTART_KCM=1; shift ;;
    -h|--help) sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test-cluster upgrade: unknown option '$1' (see --help)" >&2; exit 64 ;;
  esac
done
case "$RELEASE" in
  v0.5.6|v1.0.3) ;;
  *) echo "test-cluster upgrade: --release must be v0.5.6 or v1.0.3, got '${RELEASE}'" >&2; exit 64 ;;
esac
[ -f "$RUN/cluster.env" ] && [ -f "$RUN/cluster.json" ] || { echo "test-cluster upgrade: no running cluster in $RUN (start one with up.sh)" >&2; exit 65; }
. "$RUN/cluster.env"
FROM="$CLUSTER_RELEASE"
[ "$FROM" != "$RELEASE" ] || { echo "test-cluster upgrade: the cluster in $RUN already runs $RELEASE" >&2; exit 65; }

t0=$(date +%s.%N)
elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1fs", b-a}'; }
# one up.sh / upgrade.sh per run dir at a time (the lock up.sh takes)
mkdir -p "$TC_CACHE/locks"
exec 8>"$TC_CACHE/locks/up-$(printf '%s' "$RUN" | tc_sha256).lock"
flock 8

P="$RUN/pki"
alive() { local f="$RUN/pids/$1.pid"; [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; }
alive kube-apiserver && curl -fsS --max-time 2 --cacert "$P/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" "https://127.0.0.1:$API_PORT/readyz" >/dev/null 2>&1 \
  || { echo "test-cluster upgrade: the apiserver of $RUN does not answer" >&2; exit 65; }
start() { # name binary args...
  local name="$1"; shift
  setsid "$@" >>"$RUN/logs/$name.log" 2>&1 </dev/null 8>&- &
  echo $! >"$RUN/pids/$name.pid"
}
stop() { # name: SIGTERM, SIGKILL after 10 s; the pid file goes
  local f="$RUN/pids/$1.pid" pid
  [ -f "$f" ] || return 0
  pid="$(cat "$f")"
  if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$(( $(date +%s) + 10 ))
    while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.05; done
    if kill -0 "$pid" 2>/dev/null; then tc_log "$1 (pid $pid) still running 10 s after SIGTERM; SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; fi
  fi
  rm -f "$f"
  tc_log "$1 ($FROM) stopped"
}
fail_with_log() { echo "test-cluster upgrade: $1; last lines of $RUN/logs/$2.log:" >&2; tail -n 25 "$RUN/logs/$2.log" >&2 || true; exit 1; }
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
port() { node -e 'const c=require(process.argv[1]); const v=c.ports[process.argv[2]]; process.stdout.write(v==null?"":String(v))' "$RUN/cluster.json" "$1"; }
free_ports() { node -e '
  const net = require("net"); const n = Number(process.argv[1]); const servers = []; const ports = [];
  (async () => { for (let i = 0; i < n; i++) { const s = net.createServer(); await new Promise((r) => s.listen(0, "127.0.0.1", r));
    servers.push(s); ports.push(s.address().port); } servers.forEach((s) => s.close()); console.log(ports.join(" ")); })();' "$1"; }

tc_log "upgrading the cluster in $RUN from $FROM to $RELEASE"
AS_COMP="agent-sandbox-$RELEASE"
tc_is_built "$AS_COMP" || { tc_log "binaries for $AS_COMP are not cached; building (bash test-cluster/scripts/build.sh $AS_COMP)"; bash "$TC_ROOT/scripts/build.sh" "$AS_COMP" >&2; }
AS_BIN="$(tc_key_dir "$AS_COMP")"
WEBHOOK_PORT="$(port webhook)"; CTRL_METRICS_PORT="$(port controllerMetrics)"; CTRL_PROBE_PORT="$(port controllerProbe)"
POD_NET="$(node -e 'process.stdout.write(String(require(process.argv[1]).podNet))' "$RUN/cluster.json")"

# --- 1. the new release's install, CRDs first -----------------------------------------------------------------------
. "$REPO/scripts/upstream-data.sh"
TSX_LOADER="file://$REPO/node_modules/tsx/dist/loader.mjs"
if ! (cd "$REPO" && node --import "$TSX_LOADER" test-cluster/install.ts --upgrade --run "$RUN" --release "$RELEASE" \
      --webhook-port "$WEBHOOK_PORT" --nodes 0 --pod-net "$POD_NET") >"$RUN/logs/upgrade-$RELEASE.log" 2>&1 </dev/null 8>&-; then
  echo "test-cluster upgrade: installing Agent Sandbox $RELEASE over $FROM failed; the $FROM controller keeps running:" >&2
  sed 's/^/  /' "$RUN/logs/upgrade-$RELEASE.log" >&2; exit 1
fi
sed 's/^/  /' "$RUN/logs/upgrade-$RELEASE.log" >&2
tc_log "Agent Sandbox $RELEASE install applied over $FROM ($(elapsed))"

# --- 2. controller ---------------------------------------------------------------------------------------------------
stop agent-sandbox-controller
mapfile -t CTRL_ARGS < <(tc_controller_args "$RELEASE" "$RUN" "$CTRL_METRICS_PORT" "$CTRL_PROBE_PORT" "$WEBHOOK_PORT")
start agent-sandbox-controller "$AS_BIN/agent-sandbox-controller" "${CTRL_ARGS[@]}"
wait_for agent-sandbox-controller 60 curl -fsS --max-time 1 "http://127.0.0.1:$CTRL_PROBE_PORT/readyz"
[ "$RELEASE" = v0.5.6 ] && wait_for agent-sandbox-controller 30 curl -sk --max-time 1 -o /dev/null "https://127.0.0.1:$WEBHOOK_PORT/tls-ready"
# The API server re-initializes each CRD's storage when the CRD changes; while the conversion webhook did not answer
# yet it answers 429 "storage is (re)initializing" and retries with a back-off. Done when every Agent Sandbox kind
# lists at v1beta1 (the storage version of v0.5.6 and v1.0.3).
api_lists() {
  local p
  for p in agents.x-k8s.io/v1beta1/sandboxes extensions.agents.x-k8s.io/v1beta1/sandboxclaims \
           extensions.agents.x-k8s.io/v1beta1/sandboxtemplates extensions.agents.x-k8s.io/v1beta1/sandboxwarmpools; do
    curl -fsS --max-time 5 --cacert "$P/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" -o /dev/null \
      "https://127.0.0.1:$API_PORT/apis/$p?limit=1" || return 1
  done
}
wait_for kube-apiserver 60 api_lists

# --- 3. router, runtime stand-in -------------------------------------------------------------------------------------
HAS_ROUTER="$(tc_release_has_router "$RELEASE")"
ROUTER_HTTP_PORT="$(port routerHttp)"; ROUTER_METRICS_PORT="$(port routerMetrics)"; ROUTER_PROBE_PORT="$(port routerProbe)"
stop sandbox-router
if [ "$HAS_ROUTER" = 1 ]; then
  [ -n "$ROUTER_HTTP_PORT" ] || read -r ROUTER_HTTP_PORT ROUTER_METRICS_PORT ROUTER_PROBE_PORT < <(free_ports 3)
  mapfile -t ROUTER_CMD < <(tc_router_command "$RUN" "$AS_BIN/sandbox-router" "$ROUTER_HTTP_PORT" "$ROUTER_METRICS_PORT" "$ROUTER_PROBE_PORT")
  start sandbox-router "${ROUTER_CMD[@]}"
  wait_for sandbox-router 60 curl -fsS --max-time 1 "http://127.0.0.1:$ROUTER_PROBE_PORT/readyz"
else
  ROUTER_HTTP_PORT=""; ROUTER_METRICS_PORT=""; ROUTER_PROBE_PORT=""
fi
LISTEN_HOST="$(tc_release_sandboxd_listen_host "$RELEASE")"
if [ "$LISTEN_HOST" != "$(tc_release_sandboxd_listen_host "$FROM")" ] && [ -f "$RUN/pids/runtime-standin.pid" ]; then
  if [ "$LISTEN_HOST" = 1 ]; then SANDBOXD_BIN="$AS_BIN/sandboxd"; else SANDBOXD_BIN="$(tc_key_dir agent-sandbox-v0.5.6)/sandboxd"; fi
  stop runtime-standin
  rm -f "$RUN/runtime-standin.ready"
  start runtime-standin env AGENTPLANE_TEST_CLUSTER_RUN="$RUN" AGENTPLANE_SANDBOXD_BIN="$SANDBOXD_BIN" \
    AGENTPLANE_SANDBOXD_LISTEN_HOST="$LISTEN_HOST" node --import "$TSX_LOADER" "$TC_ROOT/runtime-standin.ts"
  wait_for runtime-standin 30 test -f "$RUN/runtime-standin.ready"
fi

# --- 4. kube-controller-manager's garbage collector ------------------------------------------------------------------
if [ "$RESTART_KCM" = 1 ]; then
  [ -f "$RUN/pids/kube-controller-manager.pid" ] || { echo "test-cluster upgrade: no kube-controller-manager pid file in $RUN" >&2; exit 1; }
  mapfile -d '' -t KCM_CMD <"/proc/$(cat "$RUN/pids/kube-controller-manager.pid")/cmdline"
  KCM_PORT="$(printf '%s\n' "${KCM_CMD[@]}" | sed -n 's/^--secure-port=//p')"
  FROM=running stop kube-controller-manager
  start kube-controller-manager "${KCM_CMD[@]}"
  wait_for kube-controller-manager 30 curl -fsSk --max-time 2 "https://127.0.0.1:$KCM_PORT/healthz"
fi

# --- 5. the cluster's facts ------------------------------------------------------------------------------------------
sed -i "s/^CLUSTER_RELEASE=.*/CLUSTER_RELEASE=$RELEASE/" "$RUN/cluster.env"
node -e '
  const [file, release, http, metrics, probe] = process.argv.slice(1); const fs = require("fs");
  const info = JSON.parse(fs.readFileSync(file, "utf8")); const n = (v) => (v === "" ? null : Number(v));
  info.release = release;
  Object.assign(info.ports, { routerHttp: n(http), routerMetrics: n(metrics), routerProbe: n(probe) });
  info.upgradedAt = new Date().toISOString();
  fs.writeFileSync(file + ".tmp", JSON.stringify(info, null, 2) + "\n"); fs.renameSync(file + ".tmp", file);' \
  "$RUN/cluster.json" "$RELEASE" "$ROUTER_HTTP_PORT" "$ROUTER_METRICS_PORT" "$ROUTER_PROBE_PORT"
tc_log "cluster in $RUN upgraded from $FROM to $RELEASE in $(elapsed)"
echo "$RUN/kubeconfig"
