/** The release mirror the benchmarks read: `AGENTPLANE_MIRROR`, which `npm run bench*` sets (scripts/upstream-data.sh). */
import { resolve } from 'node:path';

function mirror(): string {
  const dir = process.env['AGENTPLANE_MIRROR'];
  if (!dir) throw new Error('AGENTPLANE_MIRROR is not set: run the benchmark through `npm run bench…`, or set it');
  return resolve(dir);
}

export const MIRROR = mirror();
