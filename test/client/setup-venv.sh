#!/usr/bin/env bash
# Creates (or reuses) the Python virtual environment the client contract tests run in: the official client
# k8s-agent-sandbox (test/client/requirements.txt) and the upstream python runtime's dependencies (its own
# requirements.txt), both installed with --require-hashes from PyPI. The runtime's server code stays where it is
# (runtimes/python-runtime-sandbox/v0.5.6/ of the upstream data beside the release mirror): this script checks it against its SHA256SUMS and
# never copies it. Prints the venv directory on stdout; progress goes to stderr.
#
# Env: AGENTPLANE_PYTHON (interpreter, default: python3.12 from PATH or pyenv), AGENTPLANE_CLIENT_VENV_CACHE (parent
# of the venvs, default ~/.cache/agentplane/client-venv), AGENTPLANE_PYTHON_RUNTIME_DIR (runtime data directory;
# default <dirname $AGENTPLANE_MIRROR>/runtimes/…; scripts/upstream-data.sh finds the mirror).
# Exit codes: 0 ready, 2 no suitable Python or a checksum mismatch, 1 install failed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
. "$repo/scripts/upstream-data.sh"
runtime_dir="${AGENTPLANE_PYTHON_RUNTIME_DIR:-${AGENTPLANE_UPSTREAM_DATA:-}/runtimes/python-runtime-sandbox/v0.5.6}"
ours="$here/requirements.txt"
theirs="$runtime_dir/requirements.txt"

log() { printf '%s\n' "$*" >&2; }

if [ ! -d "$runtime_dir" ]; then log "error: python runtime data not found: $runtime_dir"; exit 2; fi
# The runtime is data: its files must be the ones SHA256SUMS names, or nothing runs.
if ! (cd "$runtime_dir" && sha256sum --quiet -c SHA256SUMS >&2); then
  log "error: $runtime_dir does not match its SHA256SUMS"; exit 2
fi

# The hashes in requirements.txt are those of CPython 3.12 wheels (numpy/scipy pins of the runtime need >= 3.12).
python="${AGENTPLANE_PYTHON:-}"
if [ -z "$python" ]; then
  for c in python3.12 "$HOME"/.pyenv/versions/3.12*/bin/python3; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 12) else 1)' 2>/dev/null; then python="$(command -v "$c")"; break; fi
  done
fi
if [ -z "$python" ]; then log "error: no CPython 3.12 found (set AGENTPLANE_PYTHON)"; exit 2; fi

# One venv per (interpreter version, both requirement files): a change of any gives a new one.
pyver="$("$python" -c 'import platform; print(platform.python_version())')"
key="$( (echo "$pyver"; cat "$ours" "$theirs") | sha256sum | cut -c1-12)"
cache="${AGENTPLANE_CLIENT_VENV_CACHE:-$HOME/.cache/agentplane/client-venv}"
venv="$cache/py$pyver-$key"
if [ -f "$venv/.ok" ]; then echo "$venv"; exit 0; fi

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [ -f "$venv/.ok" ]; then echo "$venv"; exit 0; fi
rm -rf "$venv"
log "creating $venv (Python $pyver): k8s-agent-sandbox + python runtime dependencies, --require-hashes"
"$python" -m venv "$venv"
# --no-deps: every package is pinned in one of the two files; pip check below proves nothing is missing.
if ! "$venv/bin/pip" install --disable-pip-version-check --no-input --require-hashes --no-deps -r "$theirs" -r "$ours" >&2; then
  log "error: pip install failed"; rm -rf "$venv"; exit 1
fi
if ! "$venv/bin/pip" check >&2; then log "error: pip check found missing or conflicting requirements"; rm -rf "$venv"; exit 1; fi
"$venv/bin/python" -c 'import k8s_agent_sandbox, fastapi, uvicorn, multipart' >&2
# .ok last: a venv without it is rebuilt.
date -u +%FT%TZ >"$venv/.ok"
echo "$venv"
