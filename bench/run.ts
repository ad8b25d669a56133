/**
 * `npm run bench`: synthesis speed and memory in-process (each case RUNS times in a fresh process, `node --import tsx
 * bench/synth-case.ts`: medians of process wall time, in-process time and peak RSS); then paired rows (bench/paired.ts)
 * for the `agentplane synth` command against `kubectl kustomize` of the same pinned `k8s/` folder (kubectl is not
 * installed by this project: without it the row says skipped) and for `agentplane diff` against dyff (bench/diff.ts);
 * then verify at 1, 5 and 20 templates when a test cluster is up (bench/verify.ts; else its row says skipped) and
 * the time to first instruction, warm and cold, on its real node (bench/first-instruction.ts), CLI
 * start-up (bench/cli-start.ts), plan-upgrade (bench/plan-upgrade.ts), the storage step of the v0.5 -> v1.0 upgrade
 * at 10,000 objects on a kwok cluster of its own (bench/migrate-storage.ts) and the import benchmark.
 * Synth growth: `generated-N` cases (N templates + N warm pools) for N in BENCH_SYNTH_SIZES (default 10,200,400,1600;
 * 10,000 takes minutes, so it runs only when named: BENCH_SYNTH_SIZES=10,200,400,1600,10000).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { median, paired, PAIRED_HEADER, pairedRow, PAIRS, runOnce, skippedRow, type Run } from './paired.js';
import { MIRROR } from './mirror.js';

const RUNS = Number(process.env['BENCH_RUNS'] ?? 5);
const ROOT = resolve(import.meta.dirname, '..');

interface CaseResult {
  case: string;
  objects: number;
  bytes: number;
  loadMs: number;
  synthMs: number;
  totalMs: number;
  maxRssMb: number;
  largestObjectBytes: number;
  largestDescriptorBytes: number;
}

/** Template counts of the growth rows; 10,000 only when named (minutes per run). */
const SIZES = (process.env['BENCH_SYNTH_SIZES'] ?? '10,200,400,1600').split(',').map(Number);
const LARGE = 10_000;
/** The API server's limit per object (etcd's request size) and client-side apply's annotation limit. */
const OBJECT_LIMIT = 1024 * 1024;
const ANNOTATION_LIMIT = 256 * 1024;

function runCase(name: string): { wallMs: number; result: CaseResult }[] {
  const cacheDir = mkdtempSync(join(tmpdir(), 'agentplane-bench-cache-'));
  const out: { wallMs: number; result: CaseResult }[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'bench/synth-case.ts'), name, MIRROR, cacheDir],
      { encoding: 'utf8', cwd: ROOT },
    );
    const wallMs = performance.now() - t0;
    if (r.status !== 0) throw new Error(`bench case ${name} failed (exit ${r.status}):\n${r.stderr}`);
    out.push({ wallMs, result: JSON.parse(r.stdout.trim().split('\n').pop()!) as CaseResult });
  }
  return out;
}

function kubectlVersion(): string | undefined {
  try {
    return execFileSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' }).match(
      /"gitVersion":\s*"([^"]+)"/,
    )?.[1];
  } catch {
    return undefined;
  }
}

// The CLI rows measure the command as installed from a package, which runs the compiled lib/ (prepack builds it).
execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });

const rows: string[] = [];
const kib = (n: number): string => `${(n / 1024).toFixed(0)} KiB`;
// Growth: synth time each template (+ pool) adds over the one-template case; constant across sizes when linear.
let oneTemplateSynthMs = 0;
for (const name of ['install-one-template', ...SIZES.map((n) => `generated-${n}`)]) {
  const runs = runCase(name);
  const r = runs[0]!.result;
  const synthMs = median(runs.map((x) => x.result.synthMs));
  const templates = name === 'install-one-template' ? 1 : Number(name.slice('generated-'.length));
  if (templates === 1) oneTemplateSynthMs = synthMs;
  const added = templates > 1 ? `${((synthMs - oneTemplateSynthMs) / (templates - 1)).toFixed(2)} ms` : '-';
  // every object under the API server's 1 MiB, every descriptor ConfigMap under client-side apply's 256 KiB
  const fits = r.largestObjectBytes < OBJECT_LIMIT && r.largestDescriptorBytes < ANNOTATION_LIMIT;
  rows.push(
    `| agentplane synth: ${name} | ${r.objects} | ${kib(r.bytes)} | ${median(runs.map((x) => x.wallMs)).toFixed(0)} ms | ` +
      `${median(runs.map((x) => x.result.totalMs))} ms (load ${median(runs.map((x) => x.result.loadMs))} + synth ${synthMs}) | ${added} | ` +
      `${kib(r.largestObjectBytes)} / ${kib(r.largestDescriptorBytes)}${fits ? '' : ' **over a limit**'} | ${median(runs.map((x) => x.result.maxRssMb))} MB |`,
  );
}
if (!SIZES.includes(LARGE))
  rows.push(
    `| agentplane synth: generated-${LARGE} | - | - | - | skipped: minutes per run; run with BENCH_SYNTH_SIZES=${[...SIZES, LARGE].join(',')} | - | - | - |`,
  );
/**
 * The environment module of the paired synth row: the install + one template, through the real command
 * (`node bin/agentplane.js synth <module>`: start-up, module import, release load, synth and writing included).
 */
function cliModule(): string {
  const file = join(ROOT, 'bench/.out/install-one-template/environment.ts');
  mkdirSync(dirname(file), { recursive: true });
  rmSync(join(dirname(file), 'agentplane.lock.json'), { force: true }); // the warm-up run writes the lock of this module
  const srcIndex = relative(dirname(file), join(ROOT, 'src/index.js'));
  writeFileSync(
    file,
    `import { AgentEnvironment, defineEnvironments, sandboxdPodSpec, SANDBOXD_RUNTIME } from '${srcIndex}';
export default defineEnvironments(async (ctx) => {
  const env = new AgentEnvironment(ctx.app, 'bench', { release: await ctx.loadRelease('v0.5.6') });
  const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  env.addTemplate('t0', { runtimeClass: rc, podSpec: sandboxdPodSpec({ image: 'registry.example.internal/agent-sandbox/sandboxd:v0.5.6' }), runtime: SANDBOXD_RUNTIME });
});
`,
  );
  return file;
}

// bin/ runs the compiled lib/ only.
if (!existsSync(join(ROOT, 'lib/bundle/main.js'))) throw new Error('lib/ is missing: run `npm run build` first');

/**
 * Paired rows (bench/paired.ts): the `agentplane synth` command on install + one template (warm cache) against
 * `kubectl kustomize` of the same pinned v0.5.6/k8s folder; then the diff rows (bench/diff.ts) against dyff.
 */
const pairedRows: string[] = [];
const kubectl = kubectlVersion();
const k8sDir = join(MIRROR, 'v0.5.6/k8s');
const synthWork = 'synth install + one template (CLI, compiled lib/, warm cache)';
if (kubectl === undefined) {
  pairedRows.push(skippedRow(synthWork, 'kubectl is not installed', 1));
} else if (!existsSync(join(k8sDir, 'kustomization.yaml'))) {
  pairedRows.push(skippedRow(synthWork, `no kustomization.yaml in ${k8sDir}`, 1));
} else {
  const file = cliModule();
  const cacheDir = mkdtempSync(join(tmpdir(), 'agentplane-bench-cli-'));
  const out = mkdtempSync(join(tmpdir(), 'agentplane-bench-cli-out-'));
  const synth = (): Run =>
    runOnce(
      [
        process.execPath,
        join(ROOT, 'bin/agentplane.js'),
        '--mirror',
        MIRROR,
        '--cache-dir',
        cacheDir,
        'synth',
        file,
        '--out',
        out,
      ],
      { cwd: ROOT },
    );
  const kustomize = (): Run => runOnce(['kubectl', 'kustomize', k8sDir], { cwd: ROOT });
  pairedRows.push(
    pairedRow(synthWork, `kubectl kustomize v0.5.6/k8s (kubectl ${kubectl})`, paired(synth, kustomize), 1),
  );
}
const diff = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/diff.ts')], {
  cwd: ROOT,
  env: { ...process.env, BENCH_DIFF_ROWS_ONLY: '1' },
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
  maxBuffer: 64 << 20,
});
const [diffRows, diffCounts] = diff.stdout.split('\n\n');
pairedRows.push(...(diffRows ?? '').split('\n').filter(Boolean));
// verify at 1, 5 and 20 templates needs a running test cluster: its table follows the paired rows (bench/verify.ts)
const clusterUp = existsSync(
  join(process.env['AGENTPLANE_TEST_CLUSTER_RUN'] ?? join(ROOT, 'test-cluster/.run'), 'cluster.json'),
);
if (!clusterUp)
  pairedRows.push(
    '| verify 1, 5, 20 templates (test cluster) | - | - | - | - | 0 | skipped: no test cluster is up (npm run cluster:up -- --kwok-only, then npm run bench or npm run bench:verify) |',
  );

process.stdout.write(
  [
    `Runs per case: ${RUNS} (medians). Node ${process.version}, ${process.platform}/${process.arch}.`,
    '',
    '| what | objects | output | process wall time | in-process time | synth added per template | largest object / descriptor part (JSON) | peak RSS |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    `Paired runs, A then B alternating after one warm-up run of each (BENCH_PAIRS=${PAIRS}; 3 at 50,000 objects and above); medians; peak RSS by GNU time:`,
    '',
    ...PAIRED_HEADER,
    ...pairedRows,
    '',
    diffCounts ?? '',
    '',
  ].join('\n'),
);
if (clusterUp) {
  console.log(
    'Verify on the test cluster (bench/verify.ts): 1, 5 and 20 templates, and the one-template run as a process:\n',
  );
  spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/verify.ts')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  console.log('');
  // Time to first instruction, warm and cold, on the real node (its row says skipped on a kwok-only cluster).
  console.log('Time to first instruction on the real node (bench/first-instruction.ts):\n');
  spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/first-instruction.ts')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  console.log('');
}
// Then CLI start-up (`--help` under 300 ms), plan-upgrade (under 1.0 s; lib/ is built above) and the import benchmark.
spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/cli-start.ts')], { cwd: ROOT, stdio: 'inherit' });
spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/plan-upgrade.ts')], {
  cwd: ROOT,
  stdio: 'inherit',
  env: { ...process.env, BENCH_LIB_BUILT: '1' },
});
console.log('');
// The storage step of the v0.5 -> v1.0 upgrade at BENCH_MIGRATE_OBJECTS (10,000) objects, on a kwok cluster of its own.
spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/migrate-storage.ts')], {
  cwd: ROOT,
  stdio: 'inherit',
  env: { ...process.env, BENCH_LIB_BUILT: '1' },
});
console.log('');
// The import benchmark (case import-release-bundle): time and memory of cdk8s import on the case's release bundle.
spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/import.ts')], { cwd: ROOT, stdio: 'inherit' });
