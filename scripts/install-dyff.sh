#!/usr/bin/env bash
# Installs dyff (github.com/homeport/dyff), the reference tool of the diff benchmark, from the Go module proxy into
# ${AGENTPLANE_TOOLS:-$HOME/.cache/agentplane/tools}/dyff-<version>/dyff and prints the binary's path on stdout.
# Exits 3 with a message (and prints nothing on stdout) when Go or the module cannot be had; the benchmark then skips dyff.
set -euo pipefail
DYFF_VERSION=v1.12.0
dir="${AGENTPLANE_TOOLS:-$HOME/.cache/agentplane/tools}/dyff-${DYFF_VERSION}"
if [ -x "$dir/dyff" ]; then echo "$dir/dyff"; exit 0; fi
if ! command -v go >/dev/null 2>&1; then echo "install-dyff: go is not installed; skipping dyff" >&2; exit 3; fi
mkdir -p "$dir"
if ! GOBIN="$dir" GOFLAGS=-trimpath go install "github.com/homeport/dyff/cmd/dyff@${DYFF_VERSION}" >&2; then
  echo "install-dyff: go install github.com/homeport/dyff/cmd/dyff@${DYFF_VERSION} failed; skipping dyff" >&2
  exit 3
fi
echo "$dir/dyff"
