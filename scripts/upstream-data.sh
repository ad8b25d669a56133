# Sourced (bash or POSIX sh) by the scripts that read upstream release data (the release mirror and the python runtime's files): sets
# AGENTPLANE_MIRROR, unless the caller set it, to the nearest `shared/agent-sandbox/releases` beside this checkout or
# one of its parents, and AGENTPLANE_UPSTREAM_DATA to the directory above the mirror (its `runtimes/` holds the
# runtime servers' files). test/setup-env.cjs does the same for test processes.
if [ -z "${AGENTPLANE_MIRROR:-}" ]; then
  # bash names this file; a POSIX sh (npm scripts) does not, and runs in the package root
  if [ -n "${BASH_SOURCE:-}" ]; then _dir="$(cd "$(dirname "$BASH_SOURCE")/.." && pwd)"; else _dir="$PWD"; fi
  while [ "$_dir" != "/" ]; do
    if [ -d "$(dirname "$_dir")/shared/agent-sandbox/releases" ]; then
      export AGENTPLANE_MIRROR="$(cd "$(dirname "$_dir")/shared/agent-sandbox/releases" && pwd)"
      break
    fi
    _dir="$(dirname "$_dir")"
  done
  unset _dir
fi
if [ -n "${AGENTPLANE_MIRROR:-}" ]; then export AGENTPLANE_UPSTREAM_DATA="$(dirname "$AGENTPLANE_MIRROR")"; fi
