/**
 * `npm run bench`: synthesis speed and memory, next to `kubectl kustomize` over the same pinned `k8s/` folder.
 * Each case runs RUNS times in a fresh process (`node --import tsx bench/synth-case.ts`); the table shows medians of the
 * process wall time (start-up included), the in-process time (release load + synth + write) and peak RSS.
 * kubectl is not installed by this project: without it the kustomize row says so and is skipped.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const RUNS = Number(process.env['BENCH_RUNS'] ?? 5);
const ROOT = resolve(import.meta.dirname, '..');
const MIRROR = resolve(process.env['AGENTPLANE_MIRROR'] ?? resolve(ROOT, '../shared/agent-sandbox/releases'));

interface CaseResult {
  case: string;
  objects: number;
  bytes: number;
  loadMs: number;
  synthMs: number;
  totalMs: number;
  maxRssMb: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function runCase(name: string): { wallMs: number; result: CaseResult }[] {
  const cacheDir = mkdtempSync(join(tmpdir(), 'agentplane-bench-cache-'));
  const out: { wallMs: number; result: CaseResult }[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/synth-case.ts'), name, MIRROR, cacheDir], { encoding: 'utf8', cwd: ROOT });
    const wallMs = performance.now() - t0;
    if (r.status !== 0) throw new Error(`bench case ${name} failed (exit ${r.status}):\n${r.stderr}`);
    out.push({ wallMs, result: JSON.parse(r.stdout.trim().split('\n').pop()!) as CaseResult });
  }
  return out;
}

function kubectlVersion(): string | undefined {
  try {
    return execFileSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' }).match(/"gitVersion":\s*"([^"]+)"/)?.[1];
  } catch {
    return undefined;
  }
}

// The CLI rows measure the command as installed from a package, which runs the compiled lib/ (prepack builds it).
execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });

const rows: string[] = [];
for (const name of ['install-one-template', 'generated-200']) {
  const runs = runCase(name);
  const r = runs[0]!.result;
  rows.push(
    `| agentplane synth: ${name} | ${r.objects} | ${(r.bytes / 1024).toFixed(0)} KiB | ${median(runs.map((x) => x.wallMs)).toFixed(0)} ms | ` +
      `${median(runs.map((x) => x.result.totalMs))} ms (load ${median(runs.map((x) => x.result.loadMs))} + synth ${median(runs.map((x) => x.result.synthMs))}) | ${median(runs.map((x) => x.result.maxRssMb))} MB |`,
  );
}
/**
 * The same two cases through the real command, `node bin/agentplane.js synth <module>` (start-up, module import,
 * release load, synth and writing included; the cache dir is warmed by the runs above). bin/ runs the compiled lib/
 * when `npm run build` output is up to date, else tsx: the row says which.
 */
function cliModule(name: string): string {
  const count = name === 'generated-200' ? 200 : 1;
  const file = join(ROOT, 'bench/.out', name, 'environment.ts');
  mkdirSync(dirname(file), { recursive: true });
  rmSync(join(dirname(file), 'agentplane.lock.json'), { force: true }); // the first run writes the lock of this module
  const srcIndex = relative(dirname(file), join(ROOT, 'src/index.js'));
  writeFileSync(
    file,
    `import { AgentEnvironment, defineEnvironments, sandboxdPodSpec, SANDBOXD_RUNTIME } from '${srcIndex}';
export default defineEnvironments(async (ctx) => {
  const env = new AgentEnvironment(ctx.app, 'bench', { release: await ctx.loadRelease('v0.5.6') });
  const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  for (let i = 0; i < ${count}; i++) {
    const t = env.addTemplate(\`t\${i}\`, { runtimeClass: rc, podSpec: sandboxdPodSpec({ image: 'registry.example.internal/agent-sandbox/sandboxd:v0.5.6' }), runtime: SANDBOXD_RUNTIME });
    ${count > 1 ? 'env.addWarmPool(`p${i}`, { template: t, replicas: 1 });' : 'void t;'}
  }
});
`,
  );
  return file;
}

const hasGnuTime = existsSync('/usr/bin/time');
const { compiledCliUsable } = (await import(pathToFileURL(join(ROOT, 'bin/start-mode.js')).href)) as { compiledCliUsable(root: string, argv: string[]): boolean };
const cliMode = compiledCliUsable(ROOT, ['--mirror', MIRROR, 'synth']) ? 'compiled lib/' : 'tsx: lib/ missing or stale, run npm run build';
for (const name of ['install-one-template', 'generated-200']) {
  const file = cliModule(name);
  const cacheDir = mkdtempSync(join(tmpdir(), 'agentplane-bench-cli-'));
  const walls: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < RUNS + 1; i++) {
    const out = mkdtempSync(join(tmpdir(), 'agentplane-bench-cli-out-'));
    const args = [join(ROOT, 'bin/agentplane.js'), '--mirror', MIRROR, '--cache-dir', cacheDir, 'synth', file, '--out', out];
    const t0 = performance.now();
    const r = hasGnuTime ? spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, ...args], { encoding: 'utf8', cwd: ROOT }) : spawnSync(process.execPath, args, { encoding: 'utf8', cwd: ROOT });
    const wall = performance.now() - t0;
    if (r.status !== 0) throw new Error(`agentplane synth ${name} failed (exit ${r.status}):\n${r.stderr}`);
    if (i === 0) continue; // the first run fills the cache dir (verified files and derived entries)
    walls.push(wall);
    if (hasGnuTime) rss.push(Math.round(Number(r.stderr.trim().split('\n').pop()) / 1024));
  }
  rows.push(`| agentplane synth CLI (${cliMode}, warm cache): ${name} | - | - | ${median(walls).toFixed(0)} ms | - | ${rss.length > 0 ? `${median(rss)} MB` : 'not measured'} |`);
}

const kubectl = kubectlVersion();
const k8sDir = join(MIRROR, 'v0.5.6/k8s');
if (kubectl === undefined) {
  rows.push('| kubectl kustomize v0.5.6/k8s | - | - | skipped: kubectl is not installed | - | - |');
} else if (!existsSync(join(k8sDir, 'kustomization.yaml'))) {
  rows.push(`| kubectl kustomize v0.5.6/k8s | - | - | skipped: no kustomization.yaml in ${k8sDir} | - | - |`);
} else {
  const walls: number[] = [];
  const rss: number[] = [];
  let bytes = 0;
  let objects = 0;
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    // GNU time reports the child's peak RSS (KiB) on stderr; without it RSS is not measured
    const r = hasGnuTime
      ? spawnSync('/usr/bin/time', ['-f', '%M', 'kubectl', 'kustomize', k8sDir], { encoding: 'utf8', maxBuffer: 64 << 20 })
      : spawnSync('kubectl', ['kustomize', k8sDir], { encoding: 'utf8', maxBuffer: 64 << 20 });
    walls.push(performance.now() - t0);
    if (r.status !== 0) throw new Error(`kubectl kustomize failed: ${r.stderr}`);
    bytes = Buffer.byteLength(r.stdout);
    objects = r.stdout.split(/^---$/m).length;
    if (hasGnuTime) rss.push(Math.round(Number(r.stderr.trim().split('\n').pop()) / 1024));
  }
  const rssText = rss.length > 0 ? `${median(rss)} MB` : 'not measured (no /usr/bin/time)';
  rows.push(`| kubectl kustomize v0.5.6/k8s (kubectl ${kubectl}) | ${objects} | ${(bytes / 1024).toFixed(0)} KiB | ${median(walls).toFixed(0)} ms | - | ${rssText} |`);
}
process.stdout.write(
  [
    `Runs per case: ${RUNS} (medians). Node ${process.version}, ${process.platform}/${process.arch}.`,
    '',
    '| what | objects | output | process wall time | in-process time | peak RSS |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n'),
);
// The diff benchmark (issue 5) prints its own table after this one.
spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/diff.ts')], { cwd: ROOT, stdio: 'inherit' });
// Then the import benchmark (case 19): time and memory of cdk8s import on the case's release bundle.
spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/import.ts')], { cwd: ROOT, stdio: 'inherit' });
