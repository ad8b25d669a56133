# Shared helpers for the test-cluster scripts (sourced, not run).
# Pinned component versions and the binary-cache layout live here so build.sh, up.sh and the
# TypeScript helpers agree on one key per component.

TC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TC_GO="$TC_ROOT/go"
TC_CACHE="${AGENTPLANE_TEST_CLUSTER_CACHE:-$HOME/.cache/agentplane/test-cluster}"
# Run dir of one cluster (PKI, pids, logs, etcd data). A second cluster can run beside the default one with its own
# AGENTPLANE_TEST_CLUSTER_RUN (git-ignored: test-cluster/.run/ and test-cluster/.run-*/) and AGENTPLANE_TEST_CLUSTER_POD_NET.
TC_RUN="${AGENTPLANE_TEST_CLUSTER_RUN:-$TC_ROOT/.run}"
# Absolute from here on: the install and the runtime stand-in run with other working directories.
case "$TC_RUN" in /*) ;; *) TC_RUN="$PWD/$TC_RUN" ;; esac

K8S_VERSION=v1.36.3      # k8s.io/kubernetes; staging modules pinned to v0.36.3 in go/k8s/go.mod
ETCD_VERSION=v3.6.16     # go.etcd.io/etcd/server/v3
KWOK_VERSION=v0.8.0      # sigs.k8s.io/kwok
AS_RELEASES="v0.5.6 v0.4.6 v1.0.3"   # sigs.k8s.io/agent-sandbox
# The real node (kubelet beside the kwok nodes): kubelet comes from the same k8s.io/kubernetes pin as the control plane.
CONTAINERD_VERSION=v2.2.9                               # github.com/containerd/containerd/v2
GVISOR_VERSION=v0.0.0-20260905035102-160fafc42237       # gvisor.dev/gvisor (the proxy serves pseudo-versions only)
KUBE_ROUTER_VERSION=v2.1.0                              # github.com/cloudnativelabs/kube-router/v2 (netpol-only)
# Debian packages the real node uses as they are (runc, CNI plugins in /usr/lib/cni, iptables/ipset/conntrack for
# kube-router, iproute2 for the node netns; bash-static and busybox-static go into the sandboxd image, images.sh);
# build.sh installs the missing ones with apt-get.
NODE_DEBS="runc containernetworking-plugins iptables ipset conntrack iproute2 bash-static busybox-static"

# Components: name -> wrapper dir, version, binaries.
# kubectl: the client k8s-agent-sandbox shells out to `kubectl port-forward` in its tunnel mode (test/client).
tc_components() { echo "etcd kwok agent-sandbox-v0.5.6 agent-sandbox-v0.4.6 agent-sandbox-v1.0.3 k8s kubectl $(tc_node_components)"; }
tc_node_components() { echo "kubelet containerd gvisor kube-router pause"; }

tc_version() {
  case "$1" in
    k8s|kubelet|kubectl) echo "$K8S_VERSION" ;;
    containerd) echo "$CONTAINERD_VERSION" ;;
    gvisor) echo "$GVISOR_VERSION" ;;
    kube-router) echo "$KUBE_ROUTER_VERSION" ;;
    pause) echo "v1" ;;    # the project's own pause program (go/pause/main.go)
    etcd) echo "$ETCD_VERSION" ;;
    kwok) echo "$KWOK_VERSION" ;;
    agent-sandbox-*) echo "${1#agent-sandbox-}" ;;
    *) echo "unknown component '$1'" >&2; return 1 ;;
  esac
}

tc_binaries() {
  case "$1" in
    k8s) echo "kube-apiserver kube-scheduler kube-controller-manager" ;;
    kubelet) echo "kubelet" ;;
    kubectl) echo "kubectl" ;;
    containerd) echo "containerd containerd-shim-runc-v2 ctr" ;;
    gvisor) echo "runsc containerd-shim-runsc-v1" ;;
    kube-router) echo "kube-router" ;;
    pause) echo "pause" ;;
    etcd) echo "etcd" ;;
    kwok) echo "kwok" ;;
    agent-sandbox-v0.4.6|agent-sandbox-v0.5.0) echo "agent-sandbox-controller" ;;   # no Go router, no sandboxd before v0.5.1
    agent-sandbox-*) echo "agent-sandbox-controller sandbox-router sandboxd" ;;
  esac
}

# Go packages to build, in the same order as tc_binaries (router's main package dir is named `cmd`).
tc_packages() {
  case "$1" in
    k8s) echo "k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-controller-manager" ;;
    kubelet) echo "k8s.io/kubernetes/cmd/kubelet" ;;
    kubectl) echo "k8s.io/kubernetes/cmd/kubectl" ;;
    containerd) echo "github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 github.com/containerd/containerd/v2/cmd/ctr" ;;
    gvisor) echo "gvisor.dev/gvisor/runsc gvisor.dev/gvisor/shim" ;;
    kube-router) echo "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router" ;;
    pause) echo "agentplane.local/test-cluster/pause" ;;
    etcd) echo "go.etcd.io/etcd/server/v3" ;;
    kwok) echo "sigs.k8s.io/kwok/cmd/kwok" ;;
    agent-sandbox-v0.4.6|agent-sandbox-v0.5.0) echo "sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller" ;;
    agent-sandbox-*) echo "sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller sigs.k8s.io/agent-sandbox/sandbox-router/cmd sigs.k8s.io/agent-sandbox/packages/sandboxd/cmd/sandboxd" ;;
  esac
}

# Linker flags; deterministic (no wall-clock date) so they can be part of the cache key.
tc_ldflags() {
  local v; v="$(tc_version "$1")"
  case "$1" in
    k8s|kubelet|kubectl)
      local minor="${v#v1.}"; minor="${minor%%.*}"
      # buildDate = publication time of k8s.io/kubernetes@$v on the module proxy (stable, not "now").
      local date; date="$(cd "$TC_GO/k8s" && go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes 2>/dev/null || echo 1970-01-01T00:00:00Z)"
      local f="-s -w" p
      for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        f="$f -X $p.gitVersion=$v -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=$date"
      done
      echo "$f" ;;
    etcd) echo "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=$v" ;;
    kwok) echo "-s -w" ;;
    containerd) echo "-s -w -X github.com/containerd/containerd/v2/version.Version=${v#v}" ;;
    gvisor) echo "-s -w -X gvisor.dev/gvisor/runsc/version.version=$v" ;;
    kube-router) echo "-s -w -X github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=$v" ;;
    pause) echo "-s -w" ;;
    agent-sandbox-*) echo "-s -w -X sigs.k8s.io/agent-sandbox/internal/version.gitVersion=$v" ;;
  esac
}

# Build tags per component (containerd: no btrfs snapshotter, which needs cgo headers).
tc_tags() {
  case "$1" in
    containerd) echo "no_btrfs" ;;
    *) echo "" ;;
  esac
}

# Project files besides go.mod/go.sum that change a component's binaries (part of its cache key).
tc_extra_files() {
  case "$1" in
    gvisor) echo "$TC_GO/gvisor/shim-oom-score.patch" ;;
    pause) echo "$TC_GO/pause/main.go" ;;
  esac
}

tc_sha256() { sha256sum | cut -c1-12; }

# Cache directory for a component: bin/<component>/<version>-<go>-<os>-<arch>-<hash(go.mod+go.sum+ldflags)>
tc_key_dir() {
  local c="$1" v gv h
  v="$(tc_version "$c")" || return 1
  gv="$(go env GOVERSION)-$(go env GOOS)-$(go env GOARCH)"
  # Tags and extra files join the key only where a component has them (so adding them to one component leaves the others' cache keys alone).
  local tags extra; tags="$(tc_tags "$c")"; extra="$(tc_extra_files "$c")"
  # shellcheck disable=SC2086
  h="$( { cat "$TC_GO/$c/go.mod" "$TC_GO/$c/go.sum" $extra; tc_ldflags "$c"; [ -z "$tags" ] || echo "tags=$tags"; } | tc_sha256)"
  echo "$TC_CACHE/bin/$c/$v-$gv-$h"
}

# A cache hit: `.ok` present and every binary executable.
tc_is_built() {
  local d b; d="$(tc_key_dir "$1")" || return 1
  [ -f "$d/.ok" ] || return 1
  for b in $(tc_binaries "$1"); do [ -x "$d/$b" ] || return 1; done
}

tc_log() { printf '[test-cluster %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# --- What each release ships, and how its processes start (up.sh for a fresh cluster, upgrade.sh in place) ---------
# A Go sandbox-router and sandboxd from v0.5.1 on; a conversion webhook in the controller on v0.5.x only
# (`cmd/agent-sandbox-controller/main.go@v1.0.3` has no --webhook-* / --manage-webhook-certs flags: an unknown flag
# exits 2); sandboxd's --listen-host from v1.0.1 on (`packages/sandboxd/cmd/sandboxd/main.go@v1.0.3`).
tc_release_has_router() { case "$1" in v0.5.6|v1.0.3) echo 1 ;; *) echo 0 ;; esac; }
tc_release_sandboxd_listen_host() { case "$1" in v1.0.3) echo 1 ;; *) echo 0 ;; esac; }

# The agent-sandbox controller's arguments, one per line:
#   tc_controller_args RELEASE RUN METRICS_PORT PROBE_PORT WEBHOOK_PORT
# v0.4.6 and v1.0.3 get no webhook flags: they have no webhook server (v1.0.3 exits 2 on any --webhook-* flag).
tc_controller_args() {
  local release="$1" run="$2" metrics="$3" probe="$4" webhook="$5"
  printf '%s\n' --kubeconfig="$run/controller.kubeconfig" --extensions --leader-elect=false \
    --metrics-bind-address="127.0.0.1:$metrics" --health-probe-bind-address="127.0.0.1:$probe"
  case "$release" in
    v0.5.6) printf '%s\n' --webhook-port="$webhook" --webhook-cert-dir="$run/webhook-certs" --manage-webhook-certs=false ;;
    # no --manage-webhook-certs: it loads the pre-seeded Secret and patches the CRDs itself
    v0.5.0) printf '%s\n' --webhook-port="$webhook" --webhook-cert-dir="$run/webhook-certs" ;;
  esac
}

# The sandbox-router's command line, one word per line:
#   tc_router_command RUN ROUTER_BINARY HTTP_PORT METRICS_PORT PROBE_PORT
# The router falls back to DNS (<id>.<ns>.svc.<domain>) when its cache misses (`sandbox-router/proxy/resolve.go@v0.5.6`);
# the machine's resolver is off loopback, so the router gets a private /etc/resolv.conf naming 127.0.0.1 (mount
# namespace). It runs under the environment's router ServiceAccount (<run>/router.kubeconfig), else as admin.
tc_router_command() {
  local run="$1" bin="$2" http="$3" metrics="$4" probe="$5" kcfg
  echo "nameserver 127.0.0.1" >"$run/resolv.conf"
  if unshare -m true 2>/dev/null; then
    printf '%s\n' unshare -m sh -c 'mount --bind "$0" /etc/resolv.conf && exec "$@"' "$run/resolv.conf"
  else
    tc_log "warning: cannot unshare a mount namespace (not root?); the router's DNS fallback would use $(awk '/^nameserver/{print $2; exit}' /etc/resolv.conf)"
  fi
  kcfg="$run/router.kubeconfig"; [ -f "$kcfg" ] || kcfg="$run/kubeconfig"
  printf '%s\n' "$bin" --kubeconfig="$kcfg" --authz-mode=allow-all \
    --http-bind-address="127.0.0.1:$http" --metrics-bind-address="127.0.0.1:$metrics" \
    --health-probe-bind-address="127.0.0.1:$probe" --allow-loopback-pod-ip --cache-enabled \
    --upstream-max-retries=1 --proxy-timeout=30s
}
