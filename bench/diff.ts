/**
 * Diff benchmark (issue 5): two synthesized environments of N objects each (default 5,000, the pinned v0.5.6 CRDs
 * included), one field changed in 50 of them; and the defaults-noise case (case 27) at the same size: the base holds
 * the objects as the API server returns them (schema defaults filled, status, managedFields, keys in another order),
 * the head as synthesized. `agentplane diff` (the CLI, start-up included) and dyff (github.com/homeport/dyff, installed
 * by scripts/install-dyff.sh from the Go module proxy, skipped with a message when it cannot be had) run on the same
 * inputs; wall time and peak RSS (GNU time) are medians of BENCH_RUNS runs, and each tool's count of reported changes
 * is shown.
 *
 *   npx tsx bench/diff.ts            (BENCH_DIFF_OBJECTS=5000 BENCH_RUNS=3)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { crdObject, loadRelease, type KubeObject, type SandboxKind } from '../src/releases/index.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'bench/.out/diff');
const N = Number(process.env.BENCH_DIFF_OBJECTS ?? 5000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CHANGED = 50;
const KINDS: readonly SandboxKind[] = ['Sandbox', 'SandboxClaim', 'SandboxTemplate', 'SandboxWarmPool'];

/** The i-th synthesized object: a rotation of SandboxTemplate, SandboxWarmPool, NetworkPolicy and ConfigMap. */
function synthesized(i: number, changed: boolean): KubeObject {
  const ns = `team-${i % 50}`;
  const name = `env-${Math.floor(i / 4)}`;
  const labels = { 'app.kubernetes.io/managed-by': 'agentplane', 'app.kubernetes.io/version': 'v0.5.6' };
  switch (i % 4) {
    case 0:
      return {
        apiVersion: 'extensions.agents.x-k8s.io/v1beta1', kind: 'SandboxTemplate', metadata: { name, namespace: ns, labels },
        spec: { podTemplate: { spec: { runtimeClassName: 'gvisor', containers: [{ name: 'runtime', image: `registry.example/sandboxd:${changed ? 'v0.5.7' : 'v0.5.6'}`, ports: [{ containerPort: 8080, name: 'rest' }], env: [{ name: 'B', value: '2' }, { name: 'A', value: '1' }] }] } } },
      };
    case 1:
      return { apiVersion: 'extensions.agents.x-k8s.io/v1beta1', kind: 'SandboxWarmPool', metadata: { name, namespace: ns, labels }, spec: { sandboxTemplateRef: { name }, ...(changed ? { replicas: 3 } : {}) } };
    case 2:
      return {
        apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name, namespace: ns, labels },
        spec: { podSelector: { matchLabels: { app: name } }, policyTypes: ['Ingress', 'Egress'], ingress: [{ from: [{ podSelector: { matchLabels: { app: 'sandbox-router' } } }], ports: [{ port: changed ? 9090 : 8080, protocol: 'TCP' }] }], egress: [] },
      };
    default:
      return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels }, data: { 'settings.json': JSON.stringify({ index: i, tier: changed ? 'gold' : 'silver' }) } };
  }
}

/** The object as the API server returns it: schema defaults filled, status and server metadata added, keys reversed. */
function asLive(obj: KubeObject, i: number): KubeObject {
  const o = structuredClone(obj) as KubeObject & { spec?: Record<string, unknown> };
  if (o.kind === 'SandboxTemplate') Object.assign(o.spec!, { networkPolicyManagement: 'Managed', envVarsInjectionPolicy: 'Disallowed', volumeClaimTemplatesPolicy: 'Disallowed' });
  if (o.kind === 'SandboxWarmPool') {
    Object.assign(o.spec!, { replicas: 1, updateStrategy: { type: 'OnReplenish' } });
    o.status = { replicas: 1, readyReplicas: 1, selector: `agents.x-k8s.io/warm-pool-sandbox=${i.toString(16)}`, observedGeneration: 1 };
  }
  o.metadata = { ...o.metadata, uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, resourceVersion: String(1000 + i), generation: 1, creationTimestamp: '2026-11-29T10:00:00Z', managedFields: [{ manager: 'agentplane', operation: 'Apply', apiVersion: o.apiVersion, fieldsType: 'FieldsV1' }] };
  const reverse = (v: unknown): unknown => Array.isArray(v) ? v.map(reverse) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reverse(x)])) : v;
  return reverse(o) as KubeObject;
}

function writeSet(dir: string, objects: readonly KubeObject[]): string {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const text = objects.map((o) => `---\n${stringify(o, { version: '1.1', lineWidth: 0 })}`).join('');
  writeFileSync(path.join(dir, 'manifests.yaml'), text);
  return path.join(dir, 'manifests.yaml');
}

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

interface Measured { wallMs: number; rssMb: number; stdout: string; status: number | null }

function measure(argv: string[]): Measured[] {
  const out: Measured[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = spawnSync('/usr/bin/time', ['-f', '%M', ...argv], { cwd: ROOT, encoding: 'utf8', maxBuffer: 512 << 20 });
    const wallMs = performance.now() - t0;
    const rssKb = Number(r.stderr.trim().split('\n').pop());
    out.push({ wallMs, rssMb: Math.round(rssKb / 1024), stdout: r.stdout, status: r.status });
  }
  return out;
}

const release = await loadRelease('v0.5.6');
const crds = KINDS.map((k) => crdObject(release, k));
const head = Array.from({ length: N - crds.length }, (_, i) => synthesized(i, false));
const changedHead = head.map((o, i) => (i % Math.floor(head.length / CHANGED) === 0 && i / Math.floor(head.length / CHANGED) < CHANGED ? synthesized(i, true) : o));
const live = head.map((o, i) => asLive(o, i));
const files = {
  base: writeSet(path.join(OUT, 'base'), [...crds, ...head]),
  changed: writeSet(path.join(OUT, 'changed'), [...crds, ...changedHead]),
  live: writeSet(path.join(OUT, 'live'), [...crds, ...live]),
};

const dyffPath = (() => {
  const r = spawnSync('bash', [path.join(ROOT, 'scripts/install-dyff.sh')], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
})();
const dyffNote = dyffPath === undefined ? 'skipped: scripts/install-dyff.sh could not install dyff (no Go or no module proxy)' : '';
/** The version is in the install directory's name (`dyff-<version>`); `go install` builds report `(development)` themselves. */
const dyffVersion = dyffPath ? path.basename(path.dirname(dyffPath)).replace(/^dyff-/, '') : '';

const { compiledCliUsable } = (await import(pathToFileURL(path.join(ROOT, 'bin/start-mode.js')).href)) as { compiledCliUsable(root: string, argv: string[]): boolean };
const cliMode = compiledCliUsable(ROOT, ['diff']) ? 'compiled lib/' : 'tsx: lib/ missing or stale, run npm run build';

const rows: string[] = [];
for (const [label, baseFile, headFile] of [['one field changed in 50', files.base, files.changed], ['defaults noise (live vs synth)', files.live, files.base]] as const) {
  const ours = measure([process.execPath, path.join(ROOT, 'bin/agentplane.js'), 'diff', path.dirname(baseFile), path.dirname(headFile), '-o', 'json']);
  const report = JSON.parse(ours[0]!.stdout) as { objects: Array<{ fields: unknown[] }> };
  const ourCount = `${report.objects.length} objects, ${report.objects.reduce((n, o) => n + o.fields.length, 0)} fields`;
  rows.push(`| ${label} | agentplane diff (CLI, ${cliMode}) | ${median(ours.map((m) => m.wallMs)).toFixed(0)} ms | ${median(ours.map((m) => m.rssMb))} MB | ${ourCount} |`);
  const lean = measure([process.execPath, '--import', 'tsx', path.join(ROOT, 'bench/diff-case.ts'), path.dirname(baseFile), path.dirname(headFile)]);
  const inProcess = lean.map((m) => JSON.parse(m.stdout.trim().split('\n').pop()!) as { readMs: number; diffMs: number; objects: number; fields: number });
  rows.push(`| ${label} | agentplane diff (library, lean process: read ${median(inProcess.map((x) => x.readMs))} ms + diff ${median(inProcess.map((x) => x.diffMs))} ms) | ${median(lean.map((m) => m.wallMs)).toFixed(0)} ms | ${median(lean.map((m) => m.rssMb))} MB | ${inProcess[0]!.objects} objects, ${inProcess[0]!.fields} fields |`);
  if (dyffPath === undefined) {
    rows.push(`| ${label} | dyff | ${dyffNote} | - | - |`);
    continue;
  }
  const theirs = measure([dyffPath, 'between', '--omit-header', '--output', 'brief', baseFile, headFile]);
  const brief = theirs[0]!.stdout.trim();
  const count = /(\d+) changes? detected/.exec(brief)?.[1] ?? (brief === "" ? "0" : `unparsed: ${brief.split("\n")[0]!}`);
  rows.push(`| ${label} | dyff ${dyffVersion} | ${median(theirs.map((m) => m.wallMs)).toFixed(0)} ms | ${median(theirs.map((m) => m.rssMb))} MB | ${count} differences |`);
}

const table = [
  `### Diff: ${N} objects per side (4 pinned v0.5.6 CRDs + generated), ${RUNS} runs, medians, process start-up included`,
  '',
  '| case | tool | wall time | peak RSS | changes reported |',
  '| --- | --- | --- | --- | --- |',
  ...rows,
  '',
].join('\n');
process.stdout.write(table);
if (existsSync(path.join(ROOT, 'bench/.out'))) writeFileSync(path.join(ROOT, 'bench/.out/diff.md'), table);
