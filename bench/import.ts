/**
 * Import benchmark (case import-release-bundle): `cdk8s import` through our import path
 * (scripts/crd-bundle.ts: keep only the CRDs, open the open schemas, run cdk8s-cli) on the case's ~820 KB v0.5.6
 * bundle (bench/import-bundle.ts, the input test/cases/import-release-bundle.test.ts checks). Prints the medians
 * of BENCH_RUNS runs (default 3) of the extraction (in-process), the cdk8s-cli process's wall time (spawn to exit)
 * and its peak RSS (`process.resourceUsage().maxRSS` at its exit), against the case's budget of 60 s and 1 GiB.
 * A run whose output lacks the three expected binding modules fails the benchmark instead of giving a figure.
 *
 *   npx tsx bench/import.ts            (also run at the end of `npm run bench`)
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { extractCrds, runCdk8sImport } from '../scripts/crd-bundle.js';
import { loadRelease } from '../src/releases/index.js';
import { releaseBundle } from './import-bundle.js';
import { MIRROR } from './mirror.js';

const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
/** The case's budget for the import of the bundle. */
const BUDGET = { seconds: 60, rssMiB: 1024 };
const MODULES = ['bundle-agents.x-k8s.io.ts', 'bundle-example.com.ts', 'bundle-extensions.agents.x-k8s.io.ts'];

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const work = mkdtempSync(join(tmpdir(), 'agentplane-bench-import-'));
try {
  const release = await loadRelease('v0.5.6', { mirror: MIRROR, cacheDir: join(work, 'cache') });
  const bundle = releaseBundle(release);
  const extractMs: number[] = [];
  const importMs: number[] = [];
  const rssMiB: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const extraction = extractCrds(bundle, 'bundle.yaml');
    extractMs.push(performance.now() - t0);
    const out = join(work, `imports-${i}`);
    const run = await runCdk8sImport([{ prefix: 'bundle', crds: extraction.crds }], out); // cdk8s-cli is killed after 300 s
    const written = readdirSync(out).sort();
    if (written.join() !== MODULES.join())
      throw new Error(
        `cdk8s import wrote ${written.join(', ') || 'nothing'} to ${out}, expected ${MODULES.join(', ')}:\n${run.output}`,
      );
    importMs.push(run.durationMs);
    rssMiB.push(run.maxRssKiB / 1024);
  }
  const s = median(importMs) / 1000;
  const m = median(rssMiB);
  const status = s <= BUDGET.seconds && m <= BUDGET.rssMiB ? 'met' : '**not met**';
  process.stdout.write(
    [
      '',
      `### Import (case import-release-bundle): ${(Buffer.byteLength(bundle) / 1024).toFixed(0)} KiB release bundle with the v0.5.6 CRDs, ${RUNS} runs, medians`,
      '',
      '| what | extraction (in-process) | cdk8s import process wall time | peak RSS | budget (60 s, 1 GiB) |',
      '| --- | --- | --- | --- | --- |',
      `| import-release-bundle bundle -> 3 binding modules | ${median(extractMs).toFixed(0)} ms | ${s.toFixed(1)} s | ${m.toFixed(0)} MiB | ${status} |`,
      '',
    ].join('\n'),
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
