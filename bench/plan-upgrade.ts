/**
 * `npm run bench:plan-upgrade`: the offline plan `agentplane plan-upgrade --from v0.4.6 --to v0.5.6` as a user runs it
 * (node bin/agentplane.js, a fresh process per run, warm release cache), against issue 16's target of 1.0 s wall.
 * Builds lib/ first, as a packaged install has it (bin/ then runs the compiled CLI; the row says which mode ran), unless
 * BENCH_LIB_BUILT=1 says the caller just did (`npm run bench`, bench/run.ts).
 * Prints the median wall time, user+sys CPU time and peak RSS (GNU time), and the load average before and after: on a
 * loaded machine the CPU time is the steadier figure. Exit 12 (`unknown`, no cluster given) is the expected answer.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { MIRROR } from './mirror.js';

const RUNS = Number(process.env['BENCH_RUNS'] ?? 7);
const ROOT = resolve(import.meta.dirname, '..');
const TARGET_MS = 1000;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

if (process.env['BENCH_LIB_BUILT'] !== '1')
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
const cacheDir = mkdtempSync(join(tmpdir(), 'agentplane-bench-plan-'));
const argv = ['--mirror', MIRROR, '--cache-dir', cacheDir, 'plan-upgrade', '--from', 'v0.4.6', '--to', 'v0.5.6'];
const mode = 'compiled lib/'; // bin/ runs lib/ only, built above
const gnuTime = existsSync('/usr/bin/time');
const loadBefore = load();

const walls: number[] = [];
const cpus: number[] = [];
const rss: number[] = [];
for (let i = 0; i <= RUNS; i++) {
  const args = [join(ROOT, 'bin/agentplane.js'), ...argv];
  const t0 = performance.now();
  const r = gnuTime
    ? spawnSync('/usr/bin/time', ['-f', '%U %S %M', process.execPath, ...args], { encoding: 'utf8', cwd: ROOT })
    : spawnSync(process.execPath, args, { encoding: 'utf8', cwd: ROOT });
  const wall = performance.now() - t0;
  if (r.status !== 12) throw new Error(`plan-upgrade exited ${r.status} (expected 12, unknown):\n${r.stderr}`);
  if (i === 0) continue; // the first run fills the cache
  walls.push(wall);
  if (gnuTime) {
    const [user, sys, maxKb] = r.stderr.trim().split('\n').pop()!.split(' ').map(Number);
    cpus.push((user! + sys!) * 1000);
    rss.push(maxKb! / 1024);
  }
}

const wall = median(walls);
console.log(`\nplan-upgrade bench: ${RUNS} warm runs (${mode}), load average ${loadBefore} before, ${load()} after\n`);
console.log('| work | wall (median) | user+sys CPU (median) | peak RSS | target |');
console.log('| --- | --- | --- | --- | --- |');
console.log(
  `| \`plan-upgrade --from v0.4.6 --to v0.5.6\` | ${wall.toFixed(0)} ms | ${cpus.length ? `${median(cpus).toFixed(0)} ms` : 'not measured'} | ${rss.length ? `${median(rss).toFixed(0)} MB` : 'not measured'} | ≤ ${TARGET_MS} ms wall: ${wall <= TARGET_MS ? 'met' : 'not met'} |`,
);
