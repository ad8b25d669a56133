#!/usr/bin/env bash
# The verifier image (the VerifierJob's), built from the packed package without a registry or a Docker engine: a
# one-layer docker-archive holding this machine's Node runtime (the `node` binary and the shared libraries `ldd` names),
# the package tarball `npm pack` writes, installed with its production dependencies (from the npm cache first), the pinned
# release files of every supported release (checksum-verified; AGENTPLANE_MIRROR in the image names them), and a passwd
# naming the nonroot user 65532 the Job runs as. Import it with `ctr -n k8s.io images import ARCHIVE`.
#
#   bash scripts/build-verifier-image.sh [OUT.tar] [REF]
#     OUT.tar  default dist/images/agentplane-verifier.tar
#     REF      default registry.example.internal/agentplane/verifier:<package version> (the examples pin this one)
#   AGENTPLANE_IMAGE_PREBUILT=1 packs the lib/ already built (`npm run build`) instead of building it again (prepack).
set -euo pipefail
root_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="$(node -p "require('$root_dir/package.json').version")"
out="${1:-$root_dir/dist/images/agentplane-verifier.tar}"
ref="${2:-registry.example.internal/agentplane/verifier:$version}"
node_bin="$(command -v node)"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
mkdir -p "$(dirname "$out")" "$work/rootfs" "$work/archive" "$work/pack"
chmod 0755 "$work/rootfs"   # the layer's / (mktemp made it 0700: the nonroot user could not enter it)

# the package as published (npm pack runs the build), then its production dependencies, from the npm cache where it
# holds them: a fresh machine's cache has the tarballs `npm ci` fetched but no package metadata, so the ranges of a new
# install are resolved from the registry (an offline install stops there with ENOTCACHED)
pack_flags=(--silent --pack-destination "$work/pack"); [ "${AGENTPLANE_IMAGE_PREBUILT:-}" = 1 ] && pack_flags+=(--ignore-scripts)
(cd "$root_dir" && npm pack "${pack_flags[@]}" >/dev/null)
tarball="$(ls "$work/pack"/*.tgz)"
app="$work/rootfs/opt/agentplane"; mkdir -p "$app"
printf '{"name":"agentplane-verifier-image","private":true}\n' >"$app/package.json"
(cd "$app" && npm install --omit=dev --prefer-offline --no-audit --no-fund --ignore-scripts --silent "$tarball" >/dev/null)
rm -f "$app/package-lock.json"

# the pinned release files the Job verifies against (no network in the pod): `mirror pull` of every supported release,
# each file sha256-checked against the package's catalog while pulled (from AGENTPLANE_MIRROR when set, else upstream at
# the pinned commit), and checked again on every read in the pod, where AGENTPLANE_MIRROR names this directory
cli="$app/node_modules/cdk8s-agentplane/bin/agentplane.js"
releases="$(cd "$app" && node --input-type=module -e "import('cdk8s-agentplane').then((m) => console.log(m.SUPPORTED_RELEASES.join(' ')))")"
# shellcheck disable=SC2086 # one word per release tag
AGENTPLANE_CACHE_DIR="$work/cache" node "$cli" mirror pull $releases --to "$work/rootfs/opt/agentplane/releases" -o json >/dev/null

# the Node runtime: the binary and every library it loads, at the same paths
install -D -m 0755 "$node_bin" "$work/rootfs/usr/local/bin/node"
for lib in $(ldd "$node_bin" | grep -o '/[^ ]*' | sort -u); do install -D -m 0755 "$(readlink -f "$lib")" "$work/rootfs$lib"; done  # 0755: the kernel execs the loader
mkdir -p -m 1777 "$work/rootfs/tmp"; mkdir -p "$work/rootfs/etc"
printf 'root:x:0:0:root:/:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/:/sbin/nologin\n' >"$work/rootfs/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$work/rootfs/etc/group"

tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work/rootfs" -cf "$work/layer.tar" .
diff="$(sha256sum "$work/layer.tar" | cut -d' ' -f1)"
mkdir -p "$work/archive/$diff"; mv "$work/layer.tar" "$work/archive/$diff/layer.tar"
cfg="{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{\"User\":\"65532:65532\",\"Entrypoint\":[\"/usr/local/bin/node\",\"/opt/agentplane/node_modules/cdk8s-agentplane/bin/agentplane.js\"],\"Env\":[\"PATH=/usr/local/bin:/bin\",\"NODE_ENV=production\",\"AGENTPLANE_MIRROR=/opt/agentplane/releases\"],\"WorkingDir\":\"/tmp\"},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:$diff\"]},\"history\":[{\"created_by\":\"scripts/build-verifier-image.sh\"}]}"
cfgsha="$(printf '%s' "$cfg" | sha256sum | cut -d' ' -f1)"
printf '%s' "$cfg" >"$work/archive/$cfgsha.json"
printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' "$cfgsha" "$ref" "$diff" >"$work/archive/manifest.json"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work/archive" -cf "$out" .
echo "$out $ref sha256:$cfgsha"
