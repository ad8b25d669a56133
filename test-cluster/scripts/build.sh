#!/usr/bin/env bash
# Builds the test cluster's binaries from the pinned Go wrapper modules in test-cluster/go/<component>
# into a cache keyed by component, version, Go toolchain and sha256(go.mod + go.sum + ldflags).
#
#   bash test-cluster/scripts/build.sh [component ...]     # default: every component
#   components: etcd kwok agent-sandbox-v0.5.6 agent-sandbox-v0.4.6 agent-sandbox-v1.0.3 k8s kubectl kubelet containerd gvisor kube-router pause (the default);
#   agent-sandbox-v0.5.0 only when named. Any of the real node's components (kubelet containerd gvisor kube-router) also
#   installs the Debian packages it runs with (lib.sh NODE_DEBS) via apt-get when they are missing.
#
# gvisor: the containerd shim of gvisor.dev/gvisor is built with one local patch, test-cluster/go/gvisor/shim-oom-score.patch
# (a failure to lower the shim's OOM score for lack of CAP_SYS_RESOURCE is ignored instead of fatal; this machine's root
# has no CAP_SYS_RESOURCE). The module is first checked against the wrapper's go.sum (`go mod verify`), then copied out
# of the module cache, patched, and built through a temporary go.mod (`-modfile`) that replaces gvisor.dev/gvisor with
# the patched copy (go refuses overlays of files in GOMODCACHE). The patch is part of the cache key.
#
# Env: AGENTPLANE_TEST_CLUSTER_CACHE (default ~/.cache/agentplane/test-cluster),
#      AGENTPLANE_BUILD_JOBS (go build -p, default 2), AGENTPLANE_BUILD_NICE (default 10).
# Idempotent: a component whose cache dir holds `.ok` is skipped. Builds into a temp dir, renames it into
# place and writes `.ok` last; a flock per component keeps parallel runs from building twice.
# Exit 0 when every requested component is cached; 1 on a build failure; 2 when a module cannot be fetched.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v go >/dev/null || { echo "test-cluster: 'go' is not on PATH; the test cluster is built from Go modules (Go >= 1.26 needed)." >&2; exit 2; }
command -v flock >/dev/null || { echo "test-cluster: 'flock' (util-linux) is missing." >&2; exit 2; }

JOBS="${AGENTPLANE_BUILD_JOBS:-2}"
NICE="${AGENTPLANE_BUILD_NICE:-10}"
COMPONENTS=("$@"); [ ${#COMPONENTS[@]} -gt 0 ] || read -r -a COMPONENTS <<<"$(tc_components)"
mkdir -p "$TC_CACHE/locks" "$TC_CACHE/bin"

# Fetch every module of the wrapper's graph; on failure name the modules that could not be fetched
# (`go mod download -json` reports an "Error" per module).
fetch_modules() {
  local c="$1" out
  if ! out="$(cd "$TC_GO/$c" && go mod download -json all 2>&1)"; then
    echo "test-cluster: cannot fetch the Go modules of component '$c' (wrapper $TC_GO/$c)." >&2
    printf '%s\n' "$out" | node -e '
      let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
        const failed = []; let depth = 0, start = -1;
        for (let i = 0; i < s.length; i++) {           // split the stream of JSON objects
          if (s[i] === "{") { if (depth++ === 0) start = i; } else if (s[i] === "}" && --depth === 0) {
            try { const m = JSON.parse(s.slice(start, i + 1)); if (m.Error) failed.push(`${m.Path}@${m.Version}: ${m.Error}`); } catch {}
          }
        }
        const other = s.split("\n").filter((l) => l.startsWith("go: ")).slice(0, 5);
        if (failed.length) console.error(`  ${failed.length} module(s) not obtained:\n` + failed.slice(0, 20).map((f) => "    " + f).join("\n")
          + (failed.length > 20 ? `\n    … and ${failed.length - 20} more` : ""));
        if (other.length) console.error("  go said:\n" + other.map((l) => "    " + l).join("\n"));
      });' >&2
    echo "  GOPROXY=$(go env GOPROXY). Check access to the Go module proxy, then re-run: bash test-cluster/scripts/build.sh $c" >&2
    return 2
  fi
}

# The Debian packages the real node runs with (runc, CNI plugins, iptables, ipset, conntrack, iproute2).
ensure_node_debs() {
  local p missing=()
  for p in $NODE_DEBS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && { tc_log "node packages: installed ($NODE_DEBS)"; return 0; }
  command -v apt-get >/dev/null || { echo "test-cluster: the real node needs the Debian packages ${missing[*]} and there is no apt-get" >&2; return 2; }
  tc_log "node packages: installing ${missing[*]} (apt-get)"
  local start; start=$(date +%s)
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$TC_CACHE/apt.log" 2>&1 \
    || { echo "test-cluster: apt-get install ${missing[*]} failed; last lines of $TC_CACHE/apt.log:" >&2; tail -20 "$TC_CACHE/apt.log" >&2; return 2; }
  tc_log "node packages: installed in $(( $(date +%s) - start ))s"
}

# gvisor: verify the module against go.sum, copy it out of the module cache, apply the patch, and write a go.mod/go.sum
# pair that replaces the module with the patched copy. Prints the temporary go.mod path (for -modfile).
gvisor_patched_modfile() { # work-dir
  local w="$1" mod
  (cd "$TC_GO/gvisor" && go mod verify >&2) || { echo "test-cluster: go mod verify failed for the gvisor wrapper; not patching" >&2; return 1; }
  mod="$(cd "$TC_GO/gvisor" && go list -m -f '{{.Dir}}' gvisor.dev/gvisor)"
  rm -rf "$w"; mkdir -p "$w"; cp -r "$mod" "$w/gvisor"; chmod -R u+w "$w/gvisor"
  patch -s -p1 --no-backup-if-mismatch -d "$w/gvisor" <"$TC_GO/gvisor/shim-oom-score.patch" >&2 \
    || { echo "test-cluster: shim-oom-score.patch does not apply to $mod" >&2; return 1; }
  { cat "$TC_GO/gvisor/go.mod"; printf '\nreplace gvisor.dev/gvisor => %s\n' "$w/gvisor"; } >"$w/go.mod"
  cp "$TC_GO/gvisor/go.sum" "$w/go.sum"
  echo "$w/go.mod"
}

build_one() {
  local c="$1" dir tmp start secs
  dir="$(tc_key_dir "$c")"
  if tc_is_built "$c"; then tc_log "$c $(tc_version "$c"): cached ($dir)"; return 0; fi
  exec 9>"$TC_CACHE/locks/$c.lock"
  if ! flock -n 9; then tc_log "$c: another build holds the lock; waiting"; flock 9; fi
  if [ -f "$dir/.ok" ]; then tc_log "$c: built by the other process"; exec 9>&-; return 0; fi
  tc_log "$c $(tc_version "$c"): fetching modules"
  start=$(date +%s)
  fetch_modules "$c" || { exec 9>&-; return 2; }
  local fetched_dir; fetched_dir="$(tc_key_dir "$c")"
  if [ "$fetched_dir" != "$dir" ]; then
    tc_log "warning: fetching changed $TC_GO/$c/go.sum (commit it); cache key is now $(basename "$fetched_dir")"
    dir="$fetched_dir"
    if [ -f "$dir/.ok" ]; then tc_log "$c: cached ($dir)"; exec 9>&-; return 0; fi
  fi
  tc_log "$c: modules ready after $(( $(date +%s) - start ))s; compiling $(tc_binaries "$c") (go build -p $JOBS, nice $NICE)"
  [ "$c" = k8s ] && tc_log "k8s.io/kubernetes versions on the proxy: $( (cd "$TC_GO/k8s" && go list -m -versions k8s.io/kubernetes 2>/dev/null) | tr ' ' '\n' | grep -E '^v1\.3[67]\.' | tr '\n' ' ')"
  tmp="$dir.tmp.$$"; rm -rf "$tmp"; mkdir -p "$tmp"
  local ldf; ldf="$(tc_ldflags "$c")"
  local extra=() tags; tags="$(tc_tags "$c")"
  [ -n "$tags" ] && extra+=(-tags "$tags")
  if [ "$c" = gvisor ]; then
    local mf; mf="$(gvisor_patched_modfile "$tmp.src")" || { rm -rf "$tmp" "$tmp.src"; exec 9>&-; return 1; }
    extra+=(-modfile "$mf"); tc_log "gvisor: module verified against go.sum; building from a copy patched with shim-oom-score.patch"
  fi
  # shellcheck disable=SC2046
  (cd "$TC_GO/$c" && CGO_ENABLED=0 exec nice -n "$NICE" go build -v -p "$JOBS" -trimpath "${extra[@]}" -ldflags "$ldf" -o "$tmp/" $(tc_packages "$c")) >"$tmp.log" 2>&1 &
  local gopid=$! ticks=0
  while kill -0 "$gopid" 2>/dev/null; do   # progress every 60 s: packages compiled so far (go build -v prints each)
    sleep 1; ticks=$((ticks + 1))
    [ $((ticks % 60)) -eq 0 ] && tc_log "$c: compiling, $((ticks / 60)) min, $(grep -c . "$tmp.log") packages so far"
  done
  if ! wait "$gopid"; then
    echo "test-cluster: building $c failed; last lines of $tmp.log:" >&2; tail -30 "$tmp.log" >&2
    rm -rf "$tmp" "$tmp.src"; exec 9>&-; return 1
  fi
  # go names a binary after its package dir, skipping a /vN suffix: etcd's server/v3 -> server, the router's cmd -> cmd.
  [ -f "$tmp/server" ] && [ "$c" = etcd ] && mv "$tmp/server" "$tmp/etcd"
  [ -f "$tmp/cmd" ] && mv "$tmp/cmd" "$tmp/sandbox-router"
  [ -f "$tmp/shim" ] && [ "$c" = gvisor ] && mv "$tmp/shim" "$tmp/containerd-shim-runsc-v1"
  rm -rf "$tmp.src"
  local b; for b in $(tc_binaries "$c"); do
    [ -x "$tmp/$b" ] || { echo "test-cluster: $c build produced no '$b' (in $tmp)" >&2; rm -rf "$tmp"; exec 9>&-; return 1; }
  done
  secs=$(( $(date +%s) - start ))
  rm -rf "$dir"; mv "$tmp" "$dir"; rm -f "$tmp.log"
  printf 'component=%s\nversion=%s\nbuild_seconds=%s\nbuilt_at=%s\ngo=%s\n' "$c" "$(tc_version "$c")" "$secs" "$(date -u +%FT%TZ)" "$(go env GOVERSION)" >"$dir/.ok"
  tc_log "$c: built in ${secs}s -> $dir ($(du -sh "$dir" | cut -f1))"
  exec 9>&-
}

# gVisor's sidecar binaries (runsc from 2026-08 on warns on every sandbox that its embedded copies are deprecated and
# stop working after 2026-10; case test-node-runsc-registration), from the same pinned source as runsc: `gvisor_sentry`
# is the Sentry boot binary, which runsc itself is (`runsc/sandbox/sandbox.go` boots with runsc when it is missing), so
# it is the one build with the matching release label; `checkpointgofer` is the binary the pinned module ships
# (`runsc/checkpointgofer/checkpointgofer.bin`, checked by go.sum). The C prewarmer is built by gVisor's Bazel only and is
# not in the Go module: runsc starts without it (a warning, no failure). They go in `sidecars/` beside the binaries,
# which node.sh names in GVISOR_SIDECAR_BINARIES_DIR (not runsc's default `gvisor-bin/`, so trees without it are unchanged).
gvisor_sidecars() {
  local dir mod tmp; dir="$(tc_key_dir gvisor)" || return 1
  [ -f "$dir/.ok" ] || return 0
  [ -x "$dir/sidecars/gvisor_sentry" ] && [ -x "$dir/sidecars/checkpointgofer" ] && return 0
  mod="$(cd "$TC_GO/gvisor" && go list -m -f '{{.Dir}}' gvisor.dev/gvisor)" || return 1
  tmp="$dir/sidecars.tmp.$$"; rm -rf "$tmp"; mkdir -p "$tmp"
  cp "$dir/runsc" "$tmp/gvisor_sentry"
  cp "$mod/runsc/checkpointgofer/checkpointgofer.bin" "$tmp/checkpointgofer"
  [ "$(head -c4 "$tmp/checkpointgofer" | od -An -c | tr -d ' ')" = '177ELF' ] || { echo "test-cluster: $mod/runsc/checkpointgofer/checkpointgofer.bin is not an ELF binary" >&2; rm -rf "$tmp"; return 1; }
  chmod 755 "$tmp"/*
  mv -T "$tmp" "$dir/sidecars" 2>/dev/null || rm -rf "$tmp"   # another build.sh may have installed them first
  tc_log "gvisor: sidecars gvisor_sentry, checkpointgofer -> $dir/sidecars"
}

df_avail_mb=$(df -Pm "$TC_CACHE" | awk 'NR==2{print $4}')
[ "$df_avail_mb" -lt 8000 ] && tc_log "warning: only ${df_avail_mb} MB free under $TC_CACHE; a cold build needs 4-8 GB"

rc=0
for c in "${COMPONENTS[@]}"; do
  case " $(tc_node_components) " in *" $c "*) ensure_node_debs || rc=2; break ;; esac
done
for c in "${COMPONENTS[@]}"; do
  build_one "$c" || { r=$?; [ $r -gt $rc ] && rc=$r; }
  if [ "$c" = gvisor ]; then gvisor_sidecars || rc=1; fi
done
[ $rc -eq 0 ] && tc_log "all requested components are in $TC_CACHE/bin"
exit $rc
