# The real node (sourced by up.sh and down.sh, not run): kubelet + containerd (runc and gVisor runsc handlers) +
# a CNI bridge + kube-router (NetworkPolicy only), all inside a network namespace and a private mount namespace
# the run creates. Forced settings and why: test-cluster/README.md, "The real node".
#
# Layout (nothing in the host's default netns but 127.0.0.1 listeners):
#   netns NODE_NS:   lo; veth `node0` NODE_IP/24 (its peer in the same netns) (the Node's InternalIP); bridge `cni0` POD_GW (pods in POD_CIDR);
#                    no default route, so nothing leaves the namespace.
#   mount ns:        held by a `sleep` (pid file node-ns); /run, /var/lib and /var/log are tmpfs inside it, so what kubelet
#                    and containerd write to hard-coded host paths (device-plugins/kubelet.sock, /var/log/containers, ...) stays
#                    in it. Every node process joins it with nsenter; it dies with its last process, taking its mounts along.
#   apiserver -> kubelet: the apiserver's `cluster` egress (EgressSelectorConfiguration) is an HTTP CONNECT proxy on
#                    a unix socket (relay.ts in the node netns), which dials only NODE_IP and POD_CIDR.
#   node netns -> apiserver: relay.ts listens on 0.0.0.0:API_PORT in the node netns and pipes to a unix socket served
#                    by relay.ts in the host netns, which dials 127.0.0.1:API_PORT. kubelet and kube-router use
#                    https://127.0.0.1:API_PORT; pods dial the `kubernetes` Service 10.96.0.1:443, DNATed to NODE_IP:API_PORT.
#   cgroups:         cgroupfs under /NODE_CGROUP in every v1 hierarchy; removed on down.

NODE_NAME=agentplane-node
NODE_IP=10.87.0.2
NODE_CIDR=10.87.0.0/24
POD_CIDR=10.88.0.0/24
POD_GW=10.88.0.1
SERVICE_IP=10.96.0.1
PAUSE_IMAGE=agentplane.local/test-cluster/pause:v1
# gVisor's network: `host` (the Sentry uses the pod netns' kernel stack) by default, because containerd's CRI
# port-forward dials localhost inside the pod netns, where gVisor's own netstack (`sandbox`) listens nowhere: with it,
# port-forward to a gVisor pod is refused (seen here). `sandbox` is kept for tests that want gVisor's netstack.
RUNSC_NETWORK="${AGENTPLANE_TEST_CLUSTER_RUNSC_NETWORK:-host}"
# Netns name and cgroup root follow from the run dir, so clusters of different run dirs do not collide.
NODE_TAG="$(printf '%s' "$TC_RUN" | tc_sha256 | cut -c1-8)"
NODE_NS="agentplane-$NODE_TAG"
NODE_CGROUP="agentplane-$NODE_TAG"
NODE_DIR="$TC_RUN/node"

node_cgroup_dirs() { # the node's cgroup root in every hierarchy: each v1 controller, and the hybrid `unified` one runc also uses
  local d
  for d in /sys/fs/cgroup/*/; do
    [ -f "$d/cgroup.procs" ] && echo "${d%/}/$NODE_CGROUP"
  done
}

# --- down ----------------------------------------------------------------------------------------------------------
# Called by down.sh after the node's processes got SIGTERM/SIGKILL via their pid files.
node_down() {
  local pid f
  # Processes still inside the node's cgroups (shims, runsc sandboxes and gofers, pod processes): kill them.
  for f in $(node_cgroup_dirs); do
    [ -d "$f" ] || continue
    while read -r pid; do [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; done < <(find "$f" -name cgroup.procs -exec cat {} + 2>/dev/null)
  done
  # Processes left in the node netns (a shim or relay that escaped the cgroups).
  if [ -e "/run/netns/$NODE_NS" ]; then
    for pid in $(ip netns pids "$NODE_NS" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
    sleep 0.2
    ip netns del "$NODE_NS" 2>/dev/null || tc_log "warning: could not delete netns $NODE_NS"
  fi
  # Cgroups, deepest first (a cgroup can be removed once it has no processes).
  local tries
  for f in $(node_cgroup_dirs); do
    [ -d "$f" ] || continue
    for tries in 1 2 3 4 5 6 7 8 9 10; do
      find "$f" -depth -type d -exec rmdir {} + 2>/dev/null
      [ -d "$f" ] || break
      sleep 0.2
    done
    [ -d "$f" ] && tc_log "warning: cgroup $f is still there"
  done
  # Mounts under the run dir that leaked into the host mount namespace (should be none: the node has its own).
  local m
  while read -r m; do umount -l "$m" 2>/dev/null; done < <(awk -v r="$TC_RUN/" 'index($5, r) == 1 {print $5}' /proc/self/mountinfo | sort -r)
  return 0
}

# --- up ------------------------------------------------------------------------------------------------------------
# Needs from up.sh: start, wait_for, alive, RUN, P, KCFG, API_PORT, ADMIN_TOKEN, TSX_LOADER, REPO.
node_in() { nsenter --target "$(cat "$RUN/pids/node-ns.pid")" --net --mount -- "$@"; }

# The containerd config schema this node writes, and the CRI runtime plugin ID it reads runtime tables from
# (version 3: io.containerd.cri.v1.runtime; version 2: io.containerd.grpc.v1.cri). containerd ignores tables under the
# other ID without a word (case test-node-runsc-registration), so the ID follows from the version, never typed twice.
CONTAINERD_SCHEMA=3
cri_runtime_plugin_id() { if [ "$1" -ge 3 ]; then echo io.containerd.cri.v1.runtime; else echo io.containerd.grpc.v1.cri; fi; }
CRI_RT="$(cri_runtime_plugin_id "$CONTAINERD_SCHEMA")"

# Test-only faults (test/cluster/cases/test-node-runsc-registration.test.ts), so the node's own check can be seen to
# fail: AGENTPLANE_TEST_CLUSTER_NODE_FAULT=runsc-v2-table writes runsc under the v2 plugin ID in this version-3 config;
# =runsc-as-runc maps the runsc handler to runc's shim.
NODE_FAULT="${AGENTPLANE_TEST_CLUSTER_NODE_FAULT:-}"

# The runsc handler's tables (runtime type, shim, options with the runsc.toml ConfigPath), or a fault's.
node_runsc_table() {
  local id="$CRI_RT"
  [ "$NODE_FAULT" = runsc-v2-table ] && id="$(cri_runtime_plugin_id 2)"
  if [ "$NODE_FAULT" = runsc-as-runc ]; then
    cat <<TOML
    [plugins."$id".containerd.runtimes.runsc]
      runtime_type = "io.containerd.runc.v2"
      runtime_path = "$CONTAINERD_BIN/containerd-shim-runc-v2"
      [plugins."$id".containerd.runtimes.runsc.options]
        BinaryName = "$(command -v runc)"
        Root = "$NODE_DIR/runc"
TOML
    return
  fi
  cat <<TOML
    [plugins."$id".containerd.runtimes.runsc]
      runtime_type = "io.containerd.runsc.v1"
      runtime_path = "$GVISOR_BIN/containerd-shim-runsc-v1"
      [plugins."$id".containerd.runtimes.runsc.options]
        TypeUrl = "io.containerd.runsc.v1.options"
        ConfigPath = "$NODE_DIR/runsc.toml"
TOML
}

node_prepare() {
  local b
  for b in ip nsenter iptables ipset conntrack runc /usr/lib/cni/bridge /usr/lib/cni/host-local /usr/lib/cni/loopback /usr/lib/cni/portmap; do
    command -v "$b" >/dev/null 2>&1 || [ -x "$b" ] || { echo "test-cluster up: the real node needs '$b' (bash test-cluster/scripts/build.sh installs the Debian packages; or start kwok nodes only: up.sh --kwok-only)" >&2; exit 1; }
  done
  KUBELET_BIN="$(tc_key_dir kubelet)"; CONTAINERD_BIN="$(tc_key_dir containerd)"; GVISOR_BIN="$(tc_key_dir gvisor)"
  KUBE_ROUTER_BIN="$(tc_key_dir kube-router)"; PAUSE_BIN="$(tc_key_dir pause)"
  mkdir -p "$NODE_DIR"/{kubelet,containerd/root,containerd/state,cni,cni-state,runsc,volume-plugins,pod-logs,sock,opt} "$RUN/logs/runsc"

  # Network namespace and its interfaces.
  ip netns add "$NODE_NS"
  ip -n "$NODE_NS" link set lo up
  # This kernel has no dummy driver: node0 is one end of a veth pair whose both ends stay in the node netns.
  ip -n "$NODE_NS" link add node0 type veth peer name node0-peer
  ip -n "$NODE_NS" addr add "$NODE_IP/24" dev node0
  ip -n "$NODE_NS" link set node0-peer up
  ip -n "$NODE_NS" link set node0 up
  # bridge-nf-call-iptables makes kube-router's rules see bridged pod-to-pod traffic (br_netfilter, per netns).
  ip netns exec "$NODE_NS" sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward; [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] && echo 1 >/proc/sys/net/bridge/bridge-nf-call-iptables; true'
  # Pods reach the API server at the `kubernetes` Service address; it is DNATed to the relay in this netns.
  ip netns exec "$NODE_NS" iptables -w -t nat -A PREROUTING -d "$SERVICE_IP/32" -p tcp --dport 443 -j DNAT --to-destination "$NODE_IP:$API_PORT"
  ip netns exec "$NODE_NS" iptables -w -t nat -A OUTPUT -d "$SERVICE_IP/32" -p tcp --dport 443 -j DNAT --to-destination "$NODE_IP:$API_PORT"

  # Cgroup root for kubelet (cgroupfs driver), in every v1 hierarchy; cpuset needs its cpus/mems set first.
  local d
  for d in $(node_cgroup_dirs); do
    mkdir -p "$d"
    if [ -f "$d/cpuset.cpus" ]; then cat "$(dirname "$d")/cpuset.cpus" >"$d/cpuset.cpus"; cat "$(dirname "$d")/cpuset.mems" >"$d/cpuset.mems"; fi
  done

  # The node's mount namespace: a holder process whose /run and /var/lib are private tmpfs mounts.
  setsid nsenter --net="/run/netns/$NODE_NS" -- unshare --mount --propagation private -- sh -c \
    'mount -t tmpfs -o mode=755 tmpfs /run && mount -t tmpfs -o mode=755 tmpfs /var/lib && mount -t tmpfs -o mode=755 tmpfs /var/log && exec sleep infinity' \
    </dev/null >"$RUN/logs/node-ns.log" 2>&1 8>&- &
  echo $! >"$RUN/pids/node-ns.pid"
  local i; for i in $(seq 1 50); do
    [ "$(readlink "/proc/$(cat "$RUN/pids/node-ns.pid")/exe" 2>/dev/null)" = "$(readlink -f "$(command -v sleep)")" ] && break; sleep 0.05
  done
  node_in test -d /run || fail_with_log "the node's mount namespace did not come up" node-ns

  cat >"$NODE_DIR/cni/10-agentplane.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "agentplane-pods",
  "plugins": [
    { "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": { "type": "host-local", "dataDir": "$NODE_DIR/cni-state", "ranges": [[{ "subnet": "$POD_CIDR", "gateway": "$POD_GW" }]],
                "routes": [{ "dst": "0.0.0.0/0" }] } },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
JSON
  cat >"$NODE_DIR/runsc.toml" <<TOML
binary_name = "$GVISOR_BIN/runsc"
root = "$NODE_DIR/runsc"
[runsc_config]
  platform = "systrap"
  network = "$RUNSC_NETWORK"
  debug-log = "$RUN/logs/runsc/"
TOML
  cat >"$NODE_DIR/containerd.toml" <<TOML
version = $CONTAINERD_SCHEMA
root = "$NODE_DIR/containerd/root"
state = "$NODE_DIR/containerd/state"
disabled_plugins = ["io.containerd.nri.v1.nri", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.blockfile", "io.containerd.snapshotter.v1.erofs", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$NODE_DIR/sock/containerd.sock"
[ttrpc]
  address = "$NODE_DIR/sock/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$NODE_DIR/opt"
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "$PAUSE_IMAGE"
[plugins."$CRI_RT"]
  enable_selinux = false
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_cdi = false
  [plugins."$CRI_RT".cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "$NODE_DIR/cni"
    max_conf_num = 1
  [plugins."$CRI_RT".containerd]
    default_runtime_name = "runc"
    [plugins."$CRI_RT".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      runtime_path = "$CONTAINERD_BIN/containerd-shim-runc-v2"
      [plugins."$CRI_RT".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        Root = "$NODE_DIR/runc"
        SystemdCgroup = false
$(node_runsc_table)
[plugins."io.containerd.grpc.v1.cri"]
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
TOML

  # Kubelet: the forced settings of the real node (cgroup v1, no CAP_SYS_RESOURCE, no KUBE-* chains, no DNS).
  cat >"$NODE_DIR/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: $P/ca.crt }
authorization: { mode: Webhook }
containerRuntimeEndpoint: unix://$NODE_DIR/sock/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: /$NODE_CGROUP
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
makeIPTablesUtilChains: false
resolvConf: ""
volumePluginDir: $NODE_DIR/volume-plugins
podLogsDir: $NODE_DIR/pod-logs
$([ "${REAL_NODE_TAINT:-1}" = 1 ] && printf 'registerWithTaints:\n- { key: agentplane.io/real-node, value: "true", effect: NoSchedule }\n')
evictionHard: { memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%" }
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
maxPods: 30
YAML
}

node_start() {
  # Host side of the relays first: the node's API relay pipes into it.
  start node-relay-host node --import "$TSX_LOADER" "$TC_ROOT/relay.ts" "unix:$NODE_DIR/sock/api.sock=tcp:127.0.0.1:$API_PORT"
  start node-relay env RELAY_READY="$NODE_DIR/relay.ready" nsenter --target "$(cat "$RUN/pids/node-ns.pid")" --net --mount -- \
    node --import "$TSX_LOADER" "$TC_ROOT/relay.ts" "tcp:0.0.0.0:$API_PORT=unix:$NODE_DIR/sock/api.sock" \
    "connect:$NODE_DIR/sock/egress.sock=$NODE_CIDR,$POD_CIDR"
  start containerd nsenter --target "$(cat "$RUN/pids/node-ns.pid")" --net --mount -- \
    env PATH="$CONTAINERD_BIN:$GVISOR_BIN:/usr/sbin:/usr/bin:/sbin:/bin" GVISOR_SIDECAR_BINARIES_DIR="$GVISOR_BIN/sidecars" \
    "$CONTAINERD_BIN/containerd" --config "$NODE_DIR/containerd.toml"
  wait_for containerd 30 test -S "$NODE_DIR/sock/containerd.sock"
  # The import runs while kubelet starts and registers; node_wait_ready waits for it.
  start images-import bash "$TC_ROOT/scripts/images.sh" import "$NODE_DIR/sock/containerd.sock"
  wait_for node-relay 30 test -f "$NODE_DIR/relay.ready"
  start kubelet nsenter --target "$(cat "$RUN/pids/node-ns.pid")" --net --mount -- \
    env PATH="/usr/sbin:/usr/bin:/sbin:/bin" "$KUBELET_BIN/kubelet" --config="$NODE_DIR/kubelet.yaml" --kubeconfig="$KCFG" \
    --root-dir="$NODE_DIR/kubelet" --cert-dir="$NODE_DIR/kubelet/pki" --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" \
    --node-labels="agentplane.io/runtime=real,agentplane.io/node=real" --v=1
}

# kube-router: NetworkPolicy enforcement only (no routing, no service proxy), iptables/ipset in the node netns.
node_start_kube_router() {
  start kube-router nsenter --target "$(cat "$RUN/pids/node-ns.pid")" --net --mount -- \
    env PATH="/usr/sbin:/usr/bin:/sbin:/bin" "$KUBE_ROUTER_BIN/kube-router" --kubeconfig="$KCFG" --hostname-override="$NODE_NAME" \
    --run-firewall=true --run-router=false --run-service-proxy=false --run-loadbalancer=false \
    --service-cluster-ip-range=10.96.0.0/24 --metrics-port=0 --health-port=0 --v=1
}

# After the control plane is up: images imported, the Node Ready, then kube-router (it needs the Node object).
node_wait_ready() {
  local pid; pid="$(cat "$RUN/pids/images-import.pid")"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  wait "$pid" 2>/dev/null || { grep -q 'images imported' "$RUN/logs/images-import.log" || fail_with_log "importing the node's images failed" images-import; }
  rm -f "$RUN/pids/images-import.pid"
  node_ready() { api_get "/api/v1/nodes/$NODE_NAME" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const n=JSON.parse(s);process.exit((n.status?.conditions??[]).some(c=>c.type==="Ready"&&c.status==="True")?0:1)})'; }
  wait_for kubelet 90 node_ready
  node_start_kube_router
  wait_for kube-router 30 node_in iptables -w -S KUBE-ROUTER-FORWARD
}

# The node proves itself (test-cluster/node-check.ts): the CRI lists runc and runsc with their options, a runsc and a
# runc canary pod made through the API server show the kernel evidence, runsc's boot log names the platform and its
# sidecars were used. A failure names the first failed check and up.sh exits non-zero. AGENTPLANE_TEST_CLUSTER_NODE_CHECK=0
# skips it (test-only: a test that measures the verifier on a node misregistered on purpose).
node_verify() {
  local out
  if [ "${AGENTPLANE_TEST_CLUSTER_NODE_CHECK:-1}" = 0 ]; then tc_log "warning: the node's own check is skipped (AGENTPLANE_TEST_CLUSTER_NODE_CHECK=0)"; return 0; fi
  if ! out="$(node --import "$TSX_LOADER" "$TC_ROOT/node-check.ts" "$NODE_DIR/containerd.toml" "$NODE_DIR/sock/containerd.sock" \
      "$KCFG" "$NODE_NAME" "$NODE_DIR/runsc.toml" "$RUN/logs/runsc/" registry.local/agentplane-test/sandboxd:v0.5.6 2>&1)"; then
    echo "test-cluster up: the real node failed its own check: $out" >&2
    exit 1
  fi
  tc_log "$out"
}
