#!/usr/bin/env bash
# The upstream python runtime (python-runtime-sandbox v0.5.6) as a container image for the real node, without a
# registry: one docker-archive packed like images.sh packs its images, imported into the node's containerd with ctr
# under registry.local/agentplane-test/python-runtime-sandbox:v0.5.6 (the reference the client contract tests use) and
# registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.5.6 (the one examples/dev-python-client pins).
#
#   bash test-cluster/scripts/python-runtime-image.sh pack [client]            # writes the archive into $CACHE/images (cached by its inputs)
#   bash test-cluster/scripts/python-runtime-image.sh import SOCKET [client]   # packs if needed, imports it into containerd at SOCKET
#
# `client`: the application's image instead, registry.local/agentplane-test/python-client:1.0.8: the same interpreter
# and the closure of k8s-agent-sandbox 1.0.8 (no extras) from the same hash-pinned venv, user 1000, entrypoint python3,
# no application code (the client contract test mounts test/client/app.py).
#
# What the image holds, and what stands in: upstream builds it FROM python:3.14-slim (Dockerfile@v0.5.6), which cannot
# be pulled here. It carries instead the CPython 3.12 of test/client/setup-venv.sh (the interpreter, the libraries `ldd`
# names, the standard library without its tests, IDLE, tkinter and build files), the packages the server imports
# (the dependency closure of fastapi, uvicorn and python-multipart, installed by setup-venv.sh from PyPI with
# --require-hashes), main.py from the upstream data (runtimes/python-runtime-sandbox/v0.5.6 beside the release mirror (checked against
# its SHA256SUMS; it stays out of the repo), bash and busybox for the commands the runtime runs. Not carried: pandas,
# scikit-learn and lightgbm, which upstream installs for the user's code (≈ 400 MB), not for the server.
# Like upstream: /app owned by uid 1000, user 1000, `uvicorn main:app --host 0.0.0.0 --port 8888`.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
. "$here/images.sh"   # add_image, rootfs_tools, IMG_DIR (sourced: defines only)

PY_RUNTIME_REFS="registry.local/agentplane-test/python-runtime-sandbox:v0.5.6 registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.5.6"
PY_CLIENT_REFS="registry.local/agentplane-test/python-client:1.0.8"
# Which image: the runtime (the server's three direct requirements and main.py) or the client application's.
KIND=runtime
case "${1:-}" in pack) [ "${2:-}" != client ] || KIND=client ;; import) [ "${3:-}" != client ] || KIND=client ;; esac
if [ "$KIND" = client ]; then ROOTS='"k8s-agent-sandbox"'; else ROOTS='"fastapi", "uvicorn", "python-multipart"'; fi
REPO="$(cd "$TC_ROOT/.." && pwd)"
. "$REPO/scripts/upstream-data.sh"
RUNTIME_DIR="${AGENTPLANE_PYTHON_RUNTIME_DIR:-${AGENTPLANE_UPSTREAM_DATA:-}/runtimes/python-runtime-sandbox/v0.5.6}"

# The venv holds the interpreter and the hash-pinned packages; setup-venv.sh also checks the runtime's SHA256SUMS.
VENV="$(bash "$REPO/test/client/setup-venv.sh" | tail -n1)"
PY="$VENV/bin/python3"

# Distributions the image carries: the closure of its roots (no extras), from installed metadata.
server_dists() {
  "$PY" - <<EOF
import importlib.metadata as md, re
todo, seen = [$ROOTS], {}
while todo:
    name = todo.pop()
    key = re.sub(r"[-_.]+", "-", name).lower()
    if key in seen:
        continue
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        continue  # a requirement behind a marker this interpreter does not meet
    seen[key] = dist
    for req in dist.requires or []:
        spec, _, marker = req.partition(";")
        if "extra" not in marker:
            todo.append(re.match(r"[A-Za-z0-9_.-]+", spec.strip()).group(0))
for key in sorted(seen):
    print(key, seen[key].version)
EOF
}

# Named by its kind and the sha256 of its inputs: both scripts, the venv (its name keys the interpreter version and both
# requirement files), the runtime's SHA256SUMS, the packages carried and the Debian libc/bash-static/busybox versions.
py_archive_path() {
  local key
  key="$( { cat "${BASH_SOURCE[0]}" "$here/images.sh"; basename "$VENV"; cat "$RUNTIME_DIR/SHA256SUMS"; server_dists;
            dpkg-query -W -f='${Package} ${Version}\n' libc6 bash-static busybox-static 2>/dev/null; } | tc_sha256)"
  echo "$IMG_DIR/python-$KIND-$key.tar"
}

rootfs_python_runtime() {
  local r="$1" exe stdlib site libdir lib so
  rootfs_tools "$r"
  chmod 0755 "$r"   # mktemp made it 0700; uid 1000 must traverse /
  exe="$(readlink -f "$PY")"
  stdlib="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')"
  site="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  libdir="$r/usr/local/lib"
  install -D -m 0755 "$exe" "$r/usr/local/bin/python3"
  # The standard library at /usr/local/lib/python3.X: python finds it from /usr/local/bin by its landmark (os.py).
  mkdir -p "$libdir/$(basename "$stdlib")"
  tar -C "$stdlib" --exclude=./site-packages --exclude=./test --exclude=./idlelib --exclude=./tkinter \
    --exclude=./turtledemo --exclude=./ensurepip --exclude=./lib2to3 --exclude='./config-*' --exclude='./lib-dynload/_tkinter*' -cf - . \
    | tar -C "$libdir/$(basename "$stdlib")" -xf -
  # The server's packages: every file their RECORDs list inside site-packages.
  mkdir -p "$libdir/$(basename "$stdlib")/site-packages"
  server_dists | while read -r name _; do
    "$PY" -c 'import importlib.metadata as md, sys
for f in md.distribution(sys.argv[1]).files or []:
    if not str(f).startswith(".."): print(f)' "$name"
  done | (cd "$site" && tar -cf - --no-recursion -T - 2>/dev/null) | tar -C "$libdir/$(basename "$stdlib")/site-packages" -xf -
  # Shared libraries of the interpreter and every extension module, at /usr/local/lib (LD_LIBRARY_PATH) and the loader.
  for so in "$exe" $(find "$libdir" -name '*.so' -o -name '*.so.*'); do
    for lib in $(ldd "$so" 2>/dev/null | grep -o '/[^ ]*' | sort -u); do
      case "$lib" in
        /lib64/ld-linux-*) [ -e "$r$lib" ] || install -D -m 0755 "$(readlink -f "$lib")" "$r$lib" ;;
        *) [ -e "$libdir/$(basename "$lib")" ] || install -D -m 0755 "$(readlink -f "$lib")" "$libdir/$(basename "$lib")" ;;
      esac
    done
  done
  mkdir -p "$r/app"; chown 1000:1000 "$r/app"
  [ "$KIND" = runtime ] || return 0
  # /app as upstream's image has it (WORKDIR, chown 1000): main.py, verified against SHA256SUMS just before.
  (cd "$RUNTIME_DIR" && sha256sum --quiet -c SHA256SUMS) || { echo "python-runtime image: $RUNTIME_DIR does not match its SHA256SUMS" >&2; exit 2; }
  install -D -m 0644 "$RUNTIME_DIR/main.py" "$r/app/main.py"
  chown -R 1000:1000 "$r/app"
}

py_pack() { # prints the archive path
  local out tmp
  out="$(py_archive_path)"
  if [ ! -f "$out" ]; then
    mkdir -p "$IMG_DIR"
    tmp="$(mktemp -d "$IMG_DIR/.pack-py.XXXXXX")"; mkdir -p "$tmp/archive"
    local entry='["/usr/local/bin/python3","-m","uvicorn","main:app","--host","0.0.0.0","--port","8888"]' ref="$PY_RUNTIME_REFS"
    [ "$KIND" = runtime ] || { entry='["/usr/local/bin/python3"]'; ref="$PY_CLIENT_REFS"; }
    IMAGE_ENV='["PATH=/usr/local/bin:/bin","LD_LIBRARY_PATH=/usr/local/lib","PYTHONDONTWRITEBYTECODE=1"]' \
      IMAGE_WORKDIR=/app IMAGE_USER=1000 IMAGE_KEEP_OWNERS=1 add_image "$tmp/archive" "$ref" "$entry" rootfs_python_runtime
    { printf '['; cat "$tmp/archive/.entries"; printf ']'; } >"$tmp/archive/manifest.json"; rm "$tmp/archive/.entries"
    tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$tmp/archive" -cf "$out.tmp" . \
      || { echo "test-cluster python image: packing $out failed" >&2; rm -rf "$tmp" "$out.tmp"; exit 1; }
    mv "$out.tmp" "$out"
    rm -rf "$tmp"
    find "$IMG_DIR" -maxdepth 1 -name "python-$KIND-*.tar" ! -path "$out" -mmin +60 -delete 2>/dev/null || true
  fi
  echo "$out"
}

case "${1:-}" in
  pack) py_pack ;;
  import)
    # ctr reads a relative --address as a URL authority: the socket path is made absolute.
    sock="$(realpath -m -- "${2:?usage: python-runtime-image.sh import CONTAINERD_SOCKET}")"
    a="$(py_pack)"
    out="$("$(tc_key_dir containerd)/ctr" --address "$sock" -n k8s.io images import --snapshotter overlayfs --platform linux/amd64 "$a" 2>&1)" \
      || { echo "python-runtime image: ctr import $a failed: $out" >&2; exit 1; }
    tc_log "image imported into the node: $([ "$KIND" = runtime ] && echo "$PY_RUNTIME_REFS" || echo "$PY_CLIENT_REFS")" ;;
  *) sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 64 ;;
esac
