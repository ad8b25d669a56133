#!/usr/bin/env bash
# `npm run lint` part: actionlint checks .github/workflows/*.yml (expressions, job needs, permissions, shell steps
# through shellcheck when it is installed). actionlint is a Go program: built once with `go install` through the Go
# module proxy at the version below, cached under ~/.cache/agentplane/tools. No Go toolchain is an error, not a skip.
set -euo pipefail
VERSION=v1.7.7
root_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin_dir="${XDG_CACHE_HOME:-$HOME/.cache}/agentplane/tools/actionlint-$VERSION"
if [ ! -x "$bin_dir/actionlint" ]; then
  command -v go >/dev/null || { echo "actionlint: needs Go to build actionlint $VERSION (https://go.dev/dl/)" >&2; exit 2; }
  echo "actionlint: building $VERSION into $bin_dir" >&2
  (cd "$root_dir" && GOBIN="$bin_dir" GOFLAGS=-mod=mod go install "github.com/rhysd/actionlint/cmd/actionlint@$VERSION")
fi
cd "$root_dir" && exec "$bin_dir/actionlint" "$@"
