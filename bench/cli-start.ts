/**
 * `npm run bench:cli`: start-up of the compiled CLI (node bin/agentplane.js, `npm run build` first) for the answers
 * that load no library code: `--help`, `--version`, a usage error. Median wall time of BENCH_RUNS runs (default 10)
 * each, next to `node -e 0` on the same machine, so the figure can be read against the load.
 */
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const RUNS = Number(process.env.BENCH_RUNS ?? 10);

function median(args: string[]): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    spawnSync(process.execPath, args, { stdio: 'ignore', env: { ...process.env, NODE_OPTIONS: '' } });
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const bin = join(ROOT, 'bin/agentplane.js');
const rows: Array<[string, string[]]> = [
  ['node -e 0 (baseline)', ['-e', '0']],
  ['agentplane --help', [bin, '--help']],
  ['agentplane --version', [bin, '--version']],
  ['agentplane no-such-command', [bin, 'no-such-command']],
];
console.log('| what | median wall time |\n| --- | --- |');
for (const [name, args] of rows) console.log(`| ${name} | ${Math.round(median(args))} ms |`);
