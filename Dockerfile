# syntax=docker/dockerfile:1
# The verifier image (the VerifierJob's `image`), built by .github/workflows/release.yml for linux/amd64 and
# linux/arm64 from the packed package: the build context holds dist/cdk8s-agentplane.tgz (`npm pack`, renamed). It
# carries the package with its runtime dependencies and the pinned release files of every supported release
# (`agentplane mirror pull`, each file checked against the package's checksums), and runs as the nonroot user 65532.
# The test cluster builds its own image offline instead (test-cluster/scripts/verifier-image.sh).
#
#   npm pack --pack-destination dist && mv dist/cdk8s-agentplane-*.tgz dist/cdk8s-agentplane.tgz
#   docker buildx build --platform linux/amd64,linux/arm64 -t REGISTRY/agentplane-verifier:VERSION .

# node:20-slim (Debian bookworm), pinned by the digest of its multi-platform index.
ARG NODE_IMAGE=node:20-slim@sha256:2cd3fdd49eb8bc1b942be824030469beca57fb6723edaaa9041e593b79a56cd1

# The release files are the same for every platform: pulled once, on the build machine's platform.
FROM --platform=$BUILDPLATFORM ${NODE_IMAGE} AS releases
WORKDIR /build
COPY dist/cdk8s-agentplane.tgz ./
RUN npm install --omit=dev --no-audit --no-fund ./cdk8s-agentplane.tgz \
 && node --input-type=module -e "import('cdk8s-agentplane').then((m) => console.log(m.SUPPORTED_RELEASES.join(' ')))" >tags \
 && node node_modules/cdk8s-agentplane/bin/agentplane.js mirror pull $(cat tags) --to /build/releases -o json >/dev/null

FROM ${NODE_IMAGE}
WORKDIR /opt/agentplane
COPY dist/cdk8s-agentplane.tgz /tmp/
RUN npm install --omit=dev --no-audit --no-fund /tmp/cdk8s-agentplane.tgz \
 && rm -rf /tmp/cdk8s-agentplane.tgz /root/.npm
COPY --from=releases /build/releases /opt/agentplane/releases
ENV NODE_ENV=production AGENTPLANE_MIRROR=/opt/agentplane/releases
USER 65532:65532
WORKDIR /tmp
ENTRYPOINT ["node", "/opt/agentplane/node_modules/cdk8s-agentplane/bin/agentplane.js"]
