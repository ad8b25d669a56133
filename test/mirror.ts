/**
 * The release mirror the tests read: test/setup-env.cjs sets `AGENTPLANE_MIRROR` in every test process (and its child
 * processes) before any test file loads.
 */
import { resolve } from 'node:path';

function mirror(): string {
  const dir = process.env['AGENTPLANE_MIRROR'];
  if (!dir) throw new Error('AGENTPLANE_MIRROR is not set and no release mirror was found (test/setup-env.cjs)');
  return resolve(dir);
}

/** The release mirror directory (absolute). */
export const MIRROR = mirror();
