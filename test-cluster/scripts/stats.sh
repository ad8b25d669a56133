#!/usr/bin/env bash
# Prints the resident memory of every process of the running test cluster (from its pid files) and the disk used by
# the binary cache, GOMODCACHE and GOCACHE — the figures recorded in test-cluster/README.md.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RUN="$TC_RUN"
total=0
if [ -d "$RUN/pids" ]; then
  printf '%-40s %8s %10s\n' process pid rss_MiB
  for f in "$RUN"/pids/*.pid; do
    [ -f "$f" ] || continue
    pid="$(cat "$f")"; name="$(basename "$f" .pid)"
    rss_kb="$(awk '/^VmRSS:/{print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)"; rss_kb="${rss_kb:-0}"
    total=$(( total + rss_kb ))
    printf '%-40s %8s %10.1f\n' "$name" "$pid" "$(awk -v k="$rss_kb" 'BEGIN{print k/1024}')"
  done
  printf '%-40s %8s %10.1f\n' TOTAL '' "$(awk -v k="$total" 'BEGIN{print k/1024}')"
else
  echo "no cluster running in $RUN"
fi
echo
printf 'binary cache   %s\n' "$(du -sh "$TC_CACHE/bin" 2>/dev/null | cut -f1)"
for c in $(tc_components); do printf '  %-22s %s\n' "$c" "$(du -sh "$(tc_key_dir "$c")" 2>/dev/null | cut -f1) $(grep -h build_seconds "$(tc_key_dir "$c")/.ok" 2>/dev/null)"; done
printf 'GOMODCACHE     %s (%s)\n' "$(du -sh "$(go env GOMODCACHE)" 2>/dev/null | cut -f1)" "$(go env GOMODCACHE)"
printf 'GOCACHE        %s (%s)\n' "$(du -sh "$(go env GOCACHE)" 2>/dev/null | cut -f1)" "$(go env GOCACHE)"
