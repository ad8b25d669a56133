// Every test process reads the pinned releases from the project's read-only mirror unless the caller names another:
// the product has no default mirror (src/releases/fetch.ts), so tests set AGENTPLANE_MIRROR, which child processes inherit.
const { resolve } = require('node:path');
process.env.AGENTPLANE_MIRROR ??= resolve(__dirname, '../../shared/agent-sandbox/releases');
