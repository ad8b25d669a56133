#!/usr/bin/env bash
# Stops every process the test cluster started (pid files in test-cluster/.run/pids: control plane, controller,
# router, runtime stand-in and each sandboxd) and removes test-cluster/.run. SIGTERM, then SIGKILL after 5 s.
# A pid is signalled only while /proc/<pid> still shows the process that was started (guards against pid reuse).
# The real node (scripts/node.sh) goes last: processes left in its cgroups or netns, the netns, its cgroups.
#   bash test-cluster/scripts/down.sh [--keep-logs]    (--keep-logs: keep .run/logs for a failed start)
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/node.sh"
RUN="$TC_RUN"
KEEP_LOGS=0; [ "${1:-}" = --keep-logs ] && KEEP_LOGS=1
[ -d "$RUN" ] || { tc_log "no test cluster state in $RUN; nothing to stop"; exit 0; }

NODE_NETNS_INODE="$(stat -L -c %i "/run/netns/$NODE_NS" 2>/dev/null || true)"
ours() { # pid -> true when the process is still one this cluster started (its cmdline mentions the run dir or cache, or it lives in the node's netns)
  local cl; cl="$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline")" || return 1
  [[ "$cl" == *"$RUN"* || "$cl" == *"$TC_CACHE"* || "$cl" == *"$TC_ROOT"* ]] && return 0
  [ -n "$NODE_NETNS_INODE" ] && [ "$(stat -L -c %i "/proc/$1/ns/net" 2>/dev/null)" = "$NODE_NETNS_INODE" ]
}
# Stop in reverse dependency order: clients of the apiserver first, then the apiserver, then etcd (all at once
# leaves the apiserver and etcd waiting on each other past any grace period).
stopped=0
stop_group() { # pid-file basenames...
  local pids=() names=() f pid i
  for f in "$@"; do
    [ -f "$RUN/pids/$f.pid" ] || continue
    pid="$(cat "$RUN/pids/$f.pid" 2>/dev/null)" || continue  # the stand-in may remove its own pid files meanwhile
    if [[ "$pid" =~ ^[0-9]+$ ]] && ours "$pid"; then pids+=("$pid"); names+=("$f"); kill -TERM "$pid" 2>/dev/null; fi
  done
  local deadline=$(( $(date +%s) + 5 ))
  for i in "${!pids[@]}"; do
    pid="${pids[$i]}"
    while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.05; done
    if kill -0 "$pid" 2>/dev/null && ours "$pid"; then tc_log "${names[$i]} (pid $pid) still running 5 s after SIGTERM; SIGKILL"; kill -KILL "$pid" 2>/dev/null; fi
  done
  stopped=$(( stopped + ${#pids[@]} ))
}
clients=()
for f in "$RUN"/pids/*.pid; do
  [ -f "$f" ] || continue
  n="$(basename "$f" .pid)"
  case "$n" in kube-apiserver|etcd|containerd|node-ns|node-relay|node-relay-host) ;; *) clients+=("$n") ;; esac
done
stop_group "${clients[@]}"
# The node's containerd after kubelet (its shims keep running until node_down), then the relays and the mount-ns holder.
stop_group containerd
stop_group node-relay node-relay-host node-ns
stop_group kube-apiserver
stop_group etcd
# sandboxd processes the stand-in started after the pid list was read
for f in "$RUN"/pids/sandboxd-*.pid; do
  pid="$(cat "$f" 2>/dev/null)" || continue
  [[ "$pid" =~ ^[0-9]+$ ]] && ours "$pid" && kill -KILL "$pid" 2>/dev/null
done
node_down
tc_log "stopped $stopped process(es)"
if [ $KEEP_LOGS -eq 1 ]; then
  find "$RUN" -mindepth 1 -maxdepth 1 ! -name logs -exec rm -rf {} +
  tc_log "logs kept in $RUN/logs"
else
  rm -rf "$RUN"
fi
