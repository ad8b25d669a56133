#!/usr/bin/env bash
# Builds the test cluster's binaries from the pinned Go wrapper modules in test-cluster/go/<component>
# into a cache keyed by component, version, Go toolchain and sha256(go.mod + go.sum + ldflags).
#
#   bash test-cluster/scripts/build.sh [component ...]     # default: every component
#   components: etcd kwok agent-sandbox-v0.5.6 agent-sandbox-v0.4.6 k8s
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

# Fetch every module of the wrapper's graph; on failure name the modules that could not be fetched.
fetch_modules() {
  local c="$1" out
  if ! out="$(cd "$TC_GO/$c" && go mod download -x all 2>&1)"; then
    local missing
    missing="$(printf '%s\n' "$out" | grep -oE '(module|go: )?[a-zA-Z0-9._~/-]+@v[0-9][^: ]*' | sed -E 's/^(module |go: )//' | sort -u | head -20)"
    echo "test-cluster: cannot fetch the Go modules of component '$c' (wrapper $TC_GO/$c)." >&2
    [ -n "$missing" ] && { echo "  module(s) not obtained:" >&2; printf '    %s\n' $missing >&2; }
    echo "  go said:" >&2; printf '%s\n' "$out" | grep -vE '^(# get|[0-9.]+s # get)' | tail -15 | sed 's/^/    /' >&2
    echo "  GOPROXY=$(go env GOPROXY). Check network access to the Go module proxy, then re-run this script." >&2
    return 2
  fi
}

build_one() {
  local c="$1" dir tmp start secs
  dir="$(tc_key_dir "$c")"
  if [ -f "$dir/.ok" ]; then tc_log "$c $(tc_version "$c"): cached ($dir)"; return 0; fi
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
  # shellcheck disable=SC2046
  if ! (cd "$TC_GO/$c" && CGO_ENABLED=0 nice -n "$NICE" go build -p "$JOBS" -trimpath -ldflags "$ldf" -o "$tmp/" $(tc_packages "$c")) >"$tmp.log" 2>&1; then
    echo "test-cluster: building $c failed; last lines of $tmp.log:" >&2; tail -30 "$tmp.log" >&2
    rm -rf "$tmp"; exec 9>&-; return 1
  fi
  # go names a binary after its package dir, skipping a /vN suffix: etcd's server/v3 -> server, the router's cmd -> cmd.
  [ -f "$tmp/server" ] && [ "$c" = etcd ] && mv "$tmp/server" "$tmp/etcd"
  [ -f "$tmp/cmd" ] && mv "$tmp/cmd" "$tmp/sandbox-router"
  local b; for b in $(tc_binaries "$c"); do
    [ -x "$tmp/$b" ] || { echo "test-cluster: $c build produced no '$b' (in $tmp)" >&2; rm -rf "$tmp"; exec 9>&-; return 1; }
  done
  secs=$(( $(date +%s) - start ))
  rm -rf "$dir"; mv "$tmp" "$dir"; rm -f "$tmp.log"
  printf 'component=%s\nversion=%s\nbuild_seconds=%s\nbuilt_at=%s\ngo=%s\n' "$c" "$(tc_version "$c")" "$secs" "$(date -u +%FT%TZ)" "$(go env GOVERSION)" >"$dir/.ok"
  tc_log "$c: built in ${secs}s -> $dir ($(du -sh "$dir" | cut -f1))"
  exec 9>&-
}

df_avail_mb=$(df -Pm "$TC_CACHE" | awk 'NR==2{print $4}')
[ "$df_avail_mb" -lt 8000 ] && tc_log "warning: only ${df_avail_mb} MB free under $TC_CACHE; a cold build needs 4-8 GB"

rc=0
for c in "${COMPONENTS[@]}"; do
  build_one "$c" || { r=$?; [ $r -gt $rc ] && rc=$r; }
done
[ $rc -eq 0 ] && tc_log "all requested components are in $TC_CACHE/bin"
exit $rc
