#!/usr/bin/env bash
# Container images for the real node, without a registry: one docker-archive (per image a one-layer rootfs tar +
# config, one manifest.json naming them all) packed from binaries this project builds, then imported into the node's containerd with
# `ctr -n k8s.io images import` under the references the environments pin.
#
#   bash test-cluster/scripts/images.sh pack               # writes the archive into $CACHE/images (cached by its inputs)
#   bash test-cluster/scripts/images.sh import SOCKET      # packs if needed, imports every archive into containerd at SOCKET
#   bash test-cluster/scripts/images.sh refs               # prints the image references, one a line
#
# Images (what stands in for the upstream image, and why):
#   pause      agentplane.local/test-cluster/pause:v1 — go/pause (the project's own); registry.k8s.io/pause cannot be pulled here.
#   sandboxd   sandboxd v0.5.6 built from sigs.k8s.io/agent-sandbox@v0.5.6 + Debian's bash-static and busybox-static (the
#              template's readiness probe runs bash; the verifier runs echo, dmesg, uname). Upstream publishes sandboxd only as
#              a staging `latest-main` build. References: the one examples/dev-gvisor pins and the test cluster's own.
#   router     sandbox-router v0.5.6 built from the same module; upstream's `sandbox-router-go:latest` is not a pinned image.
#              References: the test cluster's own and the one examples/dev-python-client pins.
#   sandboxd and router v1.0.3: the same, built from sigs.k8s.io/agent-sandbox@v1.0.3 (component agent-sandbox-v1.0.3),
#              under v1.0.3 references (the README's first environment pins registry.example.internal/.../sandboxd:v1.0.3).
#              Its sandboxd listens on the pod network (`--listen-host`, packages/sandboxd/cmd/sandboxd/main.go@v1.0.3).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PAUSE_REFS="agentplane.local/test-cluster/pause:v1"
SANDBOXD_REFS="registry.example.internal/agent-sandbox/sandboxd:v0.5.6 registry.local/agentplane-test/sandboxd:v0.5.6"
ROUTER_REFS="registry.local/agentplane-test/sandbox-router:v0.5.6 registry.example.internal/agent-sandbox/sandbox-router-go:v0.5.6"
SANDBOXD_V103_REFS="registry.example.internal/agent-sandbox/sandboxd:v1.0.3 registry.local/agentplane-test/sandboxd:v1.0.3"
ROUTER_V103_REFS="registry.local/agentplane-test/sandbox-router:v1.0.3 registry.example.internal/agent-sandbox/sandbox-router-go:v1.0.3"
IMG_DIR="$TC_CACHE/images"

# One docker-archive holding every image (one `ctr import`). Named by the sha256 of its inputs, cheap to compute: this
# script, the cache keys of the binaries it packs (they already hash their build inputs) and the Debian package versions.
archive_path() {
  local key
  key="$( { cat "${BASH_SOURCE[0]}"; tc_key_dir pause; tc_key_dir agent-sandbox-v0.5.6; tc_key_dir agent-sandbox-v1.0.3;
            dpkg-query -W -f='${Package} ${Version}\n' bash-static busybox-static 2>/dev/null; } | tc_sha256)"
  echo "$IMG_DIR/node-images-$key.tar"
}

# add_image ARCHIVE-DIR "REFS" ENTRYPOINT-JSON ROOTFS-BUILDER: one layer + config into the archive dir, one manifest entry.
# Optional, as variables: IMAGE_ENV (JSON array), IMAGE_WORKDIR, IMAGE_USER; IMAGE_KEEP_OWNERS=1 keeps the rootfs's file
# owners (default: every file root's).
add_image() {
  local dir="$1" refs="$2" entry="$3" builder="$4" root diff cfg cfgsha tags="" r owners=(--owner=0 --group=0)
  local env="${IMAGE_ENV:-[\"PATH=/usr/local/bin:/bin\"]}" user=""
  [ -z "${IMAGE_USER:-}" ] || user=",\"User\":\"$IMAGE_USER\""
  [ "${IMAGE_KEEP_OWNERS:-0}" = 0 ] || owners=()
  root="$(mktemp -d "$dir/../rootfs.XXXXXX")"
  "$builder" "$root"
  tar --sort=name --mtime=@0 "${owners[@]}" --numeric-owner -C "$root" -cf "$dir/layer.tar" .
  rm -rf "$root"
  diff="$(sha256sum "$dir/layer.tar" | cut -d' ' -f1)"
  mkdir -p "$dir/$diff"; mv "$dir/layer.tar" "$dir/$diff/layer.tar"
  cfg="{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{\"Entrypoint\":$entry,\"Env\":$env,\"WorkingDir\":\"${IMAGE_WORKDIR:-/}\"$user},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:$diff\"]},\"history\":[{\"created_by\":\"test-cluster/scripts/images.sh\"}]}"
  cfgsha="$(printf '%s' "$cfg" | sha256sum | cut -d' ' -f1)"
  printf '%s' "$cfg" >"$dir/$cfgsha.json"
  for r in $refs; do tags="$tags${tags:+,}\"$r\""; done
  printf '%s{"Config":"%s.json","RepoTags":[%s],"Layers":["%s/layer.tar"]}' "$([ -s "$dir/.entries" ] && echo ,)" "$cfgsha" "$tags" "$diff" >>"$dir/.entries"
}

rootfs_pause() { install -D -m 0755 "$(tc_key_dir pause)/pause" "$1/pause"; }

rootfs_tools() { # bash-static as /bin/bash, busybox-static and its applets in /bin, /tmp, a passwd naming uids 1000 and 65532
  local r="$1" a
  install -D -m 0755 /bin/bash-static "$r/bin/bash"
  install -D -m 0755 /bin/busybox "$r/bin/busybox"
  for a in $(/bin/busybox --list); do [ -e "$r/bin/$a" ] || ln -s busybox "$r/bin/$a"; done
  mkdir -p -m 1777 "$r/tmp"; mkdir -p "$r/etc"
  printf 'root:x:0:0:root:/:/bin/sh\nsandbox:x:1000:1000:sandbox:/workspace:/bin/sh\nnonroot:x:65532:65532:nonroot:/:/bin/false\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$r/etc/passwd"
  printf 'root:x:0:\nsandbox:x:1000:\nnonroot:x:65532:\nnogroup:x:65534:\n' >"$r/etc/group"
}
rootfs_sandboxd() { rootfs_tools "$1"; install -D -m 0755 "$(tc_key_dir agent-sandbox-v0.5.6)/sandboxd" "$1/usr/local/bin/sandboxd"; }
rootfs_router() { rootfs_tools "$1"; install -D -m 0755 "$(tc_key_dir agent-sandbox-v0.5.6)/sandbox-router" "$1/usr/local/bin/sandbox-router"; }
rootfs_sandboxd_v103() { rootfs_tools "$1"; install -D -m 0755 "$(tc_key_dir agent-sandbox-v1.0.3)/sandboxd" "$1/usr/local/bin/sandboxd"; }
rootfs_router_v103() { rootfs_tools "$1"; install -D -m 0755 "$(tc_key_dir agent-sandbox-v1.0.3)/sandbox-router" "$1/usr/local/bin/sandbox-router"; }

pack_all() { # prints the archive path
  local out tmp f
  mkdir -p "$IMG_DIR"
  for f in /bin/bash-static /bin/busybox; do
    [ -x "$f" ] || { echo "test-cluster images: $f is missing (Debian bash-static / busybox-static; bash test-cluster/scripts/build.sh installs them)" >&2; exit 2; }
  done
  tc_is_built pause || { echo "test-cluster images: the pause program is not built (bash test-cluster/scripts/build.sh pause)" >&2; exit 2; }
  tc_is_built agent-sandbox-v0.5.6 || { echo "test-cluster images: agent-sandbox v0.5.6 is not built (bash test-cluster/scripts/build.sh agent-sandbox-v0.5.6)" >&2; exit 2; }
  tc_is_built agent-sandbox-v1.0.3 || { echo "test-cluster images: agent-sandbox v1.0.3 is not built (bash test-cluster/scripts/build.sh agent-sandbox-v1.0.3)" >&2; exit 2; }
  out="$(archive_path)"
  if [ ! -f "$out" ]; then
    tmp="$(mktemp -d "$IMG_DIR/.pack.XXXXXX")"; mkdir -p "$tmp/archive"
    add_image "$tmp/archive" "$PAUSE_REFS" '["/pause"]' rootfs_pause
    add_image "$tmp/archive" "$SANDBOXD_REFS" '["/usr/local/bin/sandboxd"]' rootfs_sandboxd
    # uid 65532 like upstream's image (gcr.io/distroless/static:nonroot, sandbox-router/Dockerfile@v0.5.6): the
    # router Deployment asks for runAsNonRoot without a runAsUser.
    IMAGE_USER=65532 add_image "$tmp/archive" "$ROUTER_REFS" '["/usr/local/bin/sandbox-router"]' rootfs_router
    add_image "$tmp/archive" "$SANDBOXD_V103_REFS" '["/usr/local/bin/sandboxd"]' rootfs_sandboxd_v103
    IMAGE_USER=65532 add_image "$tmp/archive" "$ROUTER_V103_REFS" '["/usr/local/bin/sandbox-router"]' rootfs_router_v103
    { printf '['; cat "$tmp/archive/.entries"; printf ']'; } >"$tmp/archive/manifest.json"; rm "$tmp/archive/.entries"
    tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$tmp/archive" -cf "$out.tmp" . \
      || { echo "test-cluster node images: packing $out failed" >&2; rm -rf "$tmp" "$out.tmp"; exit 1; }
    mv "$out.tmp" "$out"
    rm -rf "$tmp"
    find "$IMG_DIR" -maxdepth 1 -name 'node-images-*.tar' ! -path "$out" -mmin +60 -delete 2>/dev/null || true
  fi
  echo "$out"
}

# Sourced (python-runtime-image.sh reuses add_image and rootfs_tools): define only.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

case "${1:-}" in
  pack) pack_all ;;
  refs) for r in $PAUSE_REFS $SANDBOXD_REFS $ROUTER_REFS $SANDBOXD_V103_REFS $ROUTER_V103_REFS; do echo "$r"; done ;;
  import)
    # ctr reads a relative --address as a URL authority: the socket path is made absolute.
    sock="$(realpath -m -- "${2:?usage: images.sh import CONTAINERD_SOCKET}")"
    ctr="$(tc_key_dir containerd)/ctr"
    a="$(pack_all)"
    # ctr warns about cgroup v1 on every call; its output is shown only when the import fails.
    out="$("$ctr" --address "$sock" -n k8s.io images import --snapshotter overlayfs --platform linux/amd64 "$a" 2>&1)" \
      || { echo "test-cluster images: ctr import $a failed: $out" >&2; exit 1; }
    tc_log "images imported into the node: $(for r in $PAUSE_REFS $SANDBOXD_REFS $ROUTER_REFS $SANDBOXD_V103_REFS $ROUTER_V103_REFS; do printf '%s ' "$r"; done)" ;;
  *) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 64 ;;
esac
