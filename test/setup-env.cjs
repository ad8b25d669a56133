// Every test process reads the pinned releases from the project's read-only mirror unless the caller names another:
// the product has no default mirror (src/releases/fetch.ts), so tests set AGENTPLANE_MIRROR (child processes inherit
// it), to the nearest `shared/agent-sandbox/releases` beside this checkout or one of its parents.
const { existsSync } = require('node:fs');
const { dirname, join } = require('node:path');

if (!process.env.AGENTPLANE_MIRROR) {
  for (let dir = dirname(__dirname); dir !== dirname(dir); dir = dirname(dir)) {
    const candidate = join(dirname(dir), 'shared/agent-sandbox/releases');
    if (existsSync(candidate)) {
      process.env.AGENTPLANE_MIRROR = candidate;
      break;
    }
  }
}
