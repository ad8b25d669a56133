#!/usr/bin/env bash
# The VerifierJob's image on the real node: scripts/build-verifier-image.sh packs the already built lib/ (`npm run
# build` runs first: the CLI tests need it too) under the reference examples/dev-gvisor pins, cached in $CACHE/images by
# its inputs (lib/, bin/, package.json, package-lock.json, both scripts, the Node version); then one `ctr import`.
#
#   bash test-cluster/scripts/verifier-image.sh pack            # prints the archive path (builds it on a cache miss)
#   bash test-cluster/scripts/verifier-image.sh import SOCKET   # packs if needed, imports into containerd at SOCKET
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
repo="$(cd "$TC_ROOT/.." && pwd)"
IMG_DIR="$TC_CACHE/images"
# The release files the image carries come from the release mirror, as for up.sh's install (never upstream in tests).
. "$repo/scripts/upstream-data.sh"
REF="registry.example.internal/agentplane/verifier:$(node -p "require('$repo/package.json').version")"

archive_path() {
  local key
  [ -f "$repo/lib/bundle/main.js" ] || { echo "test-cluster verifier image: lib/ is not built (npm run build)" >&2; exit 2; }
  key="$( { cat "${BASH_SOURCE[0]}" "$repo/scripts/build-verifier-image.sh" "$repo/package.json" "$repo/package-lock.json";
            node --version; echo "$REF";
            (cd "$repo" && find lib bin -type f | LC_ALL=C sort | xargs sha256sum); } | tc_sha256)"
  echo "$IMG_DIR/verifier-$key.tar"
}

pack() {
  local out; out="$(archive_path)"; mkdir -p "$IMG_DIR"
  if [ ! -f "$out" ]; then
    AGENTPLANE_IMAGE_PREBUILT=1 bash "$repo/scripts/build-verifier-image.sh" "$out.tmp" "$REF" >/dev/null \
      || { echo "test-cluster verifier image: scripts/build-verifier-image.sh failed" >&2; rm -f "$out.tmp"; exit 1; }
    mv "$out.tmp" "$out"
    find "$IMG_DIR" -maxdepth 1 -name 'verifier-*.tar' ! -path "$out" -mmin +60 -delete 2>/dev/null || true
  fi
  echo "$out"
}

case "${1:-}" in
  pack) pack ;;
  import)
    # ctr reads a relative --address as a URL authority: the socket path is made absolute.
    sock="$(realpath -m -- "${2:?usage: verifier-image.sh import CONTAINERD_SOCKET}")"
    a="$(pack)"
    out="$("$(tc_key_dir containerd)/ctr" --address "$sock" -n k8s.io images import --snapshotter overlayfs --platform linux/amd64 "$a" 2>&1)" \
      || { echo "test-cluster verifier image: ctr import $a failed: $out" >&2; exit 1; }
    tc_log "verifier image imported into the node: $REF" ;;
  *) sed -n '2,7p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 64 ;;
esac
