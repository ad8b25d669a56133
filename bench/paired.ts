/**
 * Paired measurement for `npm run bench`: AgentPlane (A) and its anchor (B) run alternately, A B A B …, so both see
 * the same machine load; a row reports the median of the per-pair wall-time ratios A/B beside the absolute medians,
 * peak RSS (GNU time, when /usr/bin/time exists) and the load average before and after.
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';

export const PAIRS = Number(process.env['BENCH_PAIRS'] ?? 7);
const GNU_TIME = existsSync('/usr/bin/time');

/** One process run: wall time, peak RSS (MB, when measured), stdout. Throws when it exits non-zero and `okStatus` rejects the status. */
export interface Run {
  wallMs: number;
  rssMb?: number;
  stdout: string;
  status: number | null;
}

export function runOnce(
  argv: readonly string[],
  opts: { cwd?: string; okStatus?: (s: number | null) => boolean } = {},
): Run {
  const t0 = performance.now();
  const r = GNU_TIME
    ? spawnSync('/usr/bin/time', ['-f', '%M', ...argv], { cwd: opts.cwd, encoding: 'utf8', maxBuffer: 1 << 30 })
    : spawnSync(argv[0]!, argv.slice(1), { cwd: opts.cwd, encoding: 'utf8', maxBuffer: 1 << 30 });
  const wallMs = performance.now() - t0;
  const ok = opts.okStatus ?? ((s) => s === 0);
  if (!ok(r.status)) throw new Error(`${argv.join(' ')} exited ${r.status}:\n${r.stderr.slice(-2000)}`);
  const rss = GNU_TIME ? Number(r.stderr.trim().split('\n').pop()) / 1024 : undefined;
  return {
    wallMs,
    ...(rss !== undefined && Number.isFinite(rss) ? { rssMb: Math.round(rss) } : {}),
    stdout: r.stdout,
    status: r.status,
  };
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

export interface Paired {
  a: Run[];
  b: Run[];
  ratios: number[];
  loadBefore: string;
  loadAfter: string;
}

/** `pairs` pairs of (A, B) after one unmeasured warm-up run of each (caches, page cache). */
export function paired(a: () => Run, b: () => Run, pairs = PAIRS): Paired {
  a();
  b();
  const loadBefore = load();
  const out: Paired = { a: [], b: [], ratios: [], loadBefore, loadAfter: '' };
  for (let i = 0; i < pairs; i++) {
    const ra = a();
    const rb = b();
    out.a.push(ra);
    out.b.push(rb);
    out.ratios.push(ra.wallMs / rb.wallMs);
  }
  out.loadAfter = load();
  return out;
}

const ms = (x: number): string => (x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : `${Math.round(x)} ms`);
const rss = (runs: readonly Run[]): string =>
  runs.every((r) => r.rssMb !== undefined) ? `${median(runs.map((r) => r.rssMb!))} MB` : '-';

/** Header of the paired table. */
export const PAIRED_HEADER = [
  '| work | AgentPlane (A) | anchor (B) | A/B (median of pair ratios) | target | pairs | load avg (before → after) |',
  '| --- | --- | --- | --- | --- | --- | --- |',
];

/** One row: absolute medians with peak RSS, the median ratio and whether it meets `target` (a ratio ceiling). */
export function pairedRow(work: string, anchor: string, p: Paired, target: number): string {
  const ratio = median(p.ratios);
  return `| ${work} | ${ms(median(p.a.map((r) => r.wallMs)))}, ${rss(p.a)} | ${anchor}: ${ms(median(p.b.map((r) => r.wallMs)))}, ${rss(p.b)} | ${ratio.toFixed(3)} (${Math.min(...p.ratios).toFixed(2)}–${Math.max(...p.ratios).toFixed(2)}) ${ratio <= target ? 'met' : '**not met**'} | ≤ ${target.toFixed(2)} | ${p.ratios.length} | ${p.loadBefore} → ${p.loadAfter} |`;
}

/** A row for work whose anchor cannot run here. */
export function skippedRow(work: string, why: string, target: number): string {
  return `| ${work} | - | skipped: ${why} | - | ≤ ${target.toFixed(2)} | 0 | ${load()} |`;
}
