/**
 * CLI start-up (part of `npm run bench`, alone as `npm run bench:cli`): median wall time of BENCH_CLI_RUNS runs
 * (default 15) of the compiled CLI's answers that load no library code (`--help`, `--version`, a usage error), next to
 * `node -e 1` measured interleaved with them, so each figure can also be read as a ratio to bare Node start-up on a
 * loaded machine, and the median user+sys CPU time (GNU time), which load inflates far less than wall time and is what
 * the wall time comes to on an idle machine. Needs `npm run build`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const RUNS = Number(process.env.BENCH_CLI_RUNS ?? 15);
const bin = join(ROOT, 'bin/agentplane.js');
if (!existsSync(join(ROOT, 'lib/bundle/main.js'))) throw new Error('lib/ is missing: run `npm run build` first');

const ROWS: Array<[string, string[]]> = [
  ['node -e 1 (anchor)', ['-e', '1']],
  ['agentplane --help', [bin, '--help']],
  ['agentplane --version', [bin, '--version']],
  ['agentplane no-such-command (usage error)', [bin, 'no-such-command']],
];

const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

/** Wall time of one run, and its user+sys CPU time when GNU time is there (its stderr line `<user> <sys>`). */
function once(args: string[]): { wall: number; cpu: number | undefined } {
  const [cmd, argv] = GNU_TIME ? [GNU_TIME, ['-f', '%U %S', process.execPath, ...args]] : [process.execPath, args];
  const start = process.hrtime.bigint();
  const r = spawnSync(cmd, argv, {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  const wall = Number(process.hrtime.bigint() - start) / 1e6;
  const last = r.stderr.trim().split('\n').at(-1) ?? '';
  const [user, sys] = last.split(' ').map(Number);
  return { wall, cpu: GNU_TIME && user !== undefined && sys !== undefined ? (user + sys) * 1000 : undefined };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

// Round-robin (one run of each row per round, after one warm-up round), so load changes hit every row alike.
const times = ROWS.map(() => [] as number[]);
const cpus = ROWS.map(() => [] as number[]);
ROWS.forEach(([, args]) => once(args));
const load = loadavg()[0]!;
for (let i = 0; i < RUNS; i++)
  ROWS.forEach(([, args], r) => {
    const { wall, cpu } = once(args);
    times[r]!.push(wall);
    if (cpu !== undefined) cpus[r]!.push(cpu);
  });
const anchor = median(times[0]!);

console.log(
  `CLI start-up: ${RUNS} runs each, round-robin; load average ${load.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)}.\n`,
);
console.log(
  '| what | median wall time | ratio to node -e 1 | median user+sys CPU | target |\n| --- | --- | --- | --- | --- |',
);
ROWS.forEach(([name], r) => {
  const m = median(times[r]!);
  const cpu = cpus[r]!.length > 0 ? `${Math.round(median(cpus[r]!))} ms` : '-';
  const target = name.includes('--help') ? (m < 300 ? 'under 300 ms: met' : 'under 300 ms wall: not met here') : '-';
  console.log(`| ${name} | ${Math.round(m)} ms | ${(m / anchor).toFixed(2)} | ${cpu} | ${target} |`);
});
