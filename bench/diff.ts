/**
 * Diff benchmark (issue 16): two synthesized environments of N objects each (the pinned v0.5.6 CRDs included), 1 %
 * of them changed in one field (50 at 5,000), at each size of BENCH_DIFF_SIZES (default 5000,50000; 200000 only when named: it takes minutes); and the
 * defaults-noise case (case diff-defaults-noise) at 5,000: the base holds the objects as the API server returns them
 * (schema defaults filled, status, managedFields, keys in another order), the head as synthesized. `agentplane diff`
 * (the CLI, start-up included) and dyff (github.com/homeport/dyff, installed by scripts/install-dyff.sh from the Go
 * module proxy; the rows say skipped when it cannot be had) run paired on the same inputs (bench/paired.ts); each
 * tool's count of reported changes is shown below the table.
 *
 *   npx tsx bench/diff.ts            (BENCH_DIFF_SIZES=5000 BENCH_PAIRS=7)
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { dump } from 'js-yaml';
import { crdObject, loadRelease, type KubeObject, type SandboxKind } from '../src/releases/index.js';
import { PAIRED_HEADER, paired, pairedRow, PAIRS, runOnce, skippedRow } from './paired.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'bench/.out/diff');
const SIZES = (process.env.BENCH_DIFF_SIZES ?? '5000,50000').split(',').map(Number);
/** The 200,000-object row takes minutes (a warm-up and three pairs of ~20 s each on a quiet machine): only on request. */
const LARGE = 200_000;
const KINDS: readonly SandboxKind[] = ['Sandbox', 'SandboxClaim', 'SandboxTemplate', 'SandboxWarmPool'];

/** The i-th synthesized object: a rotation of SandboxTemplate, SandboxWarmPool, NetworkPolicy and ConfigMap. */
function synthesized(i: number, changed: boolean): KubeObject {
  const ns = `team-${i % 50}`;
  const name = `env-${Math.floor(i / 4)}`;
  const labels = { 'app.kubernetes.io/managed-by': 'agentplane', 'app.kubernetes.io/version': 'v0.5.6' };
  switch (i % 4) {
    case 0:
      return {
        apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
        kind: 'SandboxTemplate',
        metadata: { name, namespace: ns, labels },
        spec: {
          podTemplate: {
            spec: {
              runtimeClassName: 'gvisor',
              containers: [
                {
                  name: 'runtime',
                  image: `registry.example/sandboxd:${changed ? 'v0.5.7' : 'v0.5.6'}`,
                  ports: [{ containerPort: 8080, name: 'rest' }],
                  env: [
                    { name: 'B', value: '2' },
                    { name: 'A', value: '1' },
                  ],
                },
              ],
            },
          },
        },
      };
    case 1:
      return {
        apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
        kind: 'SandboxWarmPool',
        metadata: { name, namespace: ns, labels },
        spec: { sandboxTemplateRef: { name }, ...(changed ? { replicas: 3 } : {}) },
      };
    case 2:
      return {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name, namespace: ns, labels },
        spec: {
          podSelector: { matchLabels: { app: name } },
          policyTypes: ['Ingress', 'Egress'],
          ingress: [
            {
              from: [{ podSelector: { matchLabels: { app: 'sandbox-router' } } }],
              ports: [{ port: changed ? 9090 : 8080, protocol: 'TCP' }],
            },
          ],
          egress: [],
        },
      };
    default:
      return {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: ns, labels },
        data: { 'settings.json': JSON.stringify({ index: i, tier: changed ? 'gold' : 'silver' }) },
      };
  }
}

/** The object as the API server returns it: schema defaults filled, status and server metadata added, keys reversed. */
function asLive(obj: KubeObject, i: number): KubeObject {
  const o = structuredClone(obj) as KubeObject & { spec?: Record<string, unknown> };
  if (o.kind === 'SandboxTemplate')
    Object.assign(o.spec!, {
      networkPolicyManagement: 'Managed',
      envVarsInjectionPolicy: 'Disallowed',
      volumeClaimTemplatesPolicy: 'Disallowed',
    });
  if (o.kind === 'SandboxWarmPool') {
    Object.assign(o.spec!, { replicas: 1, updateStrategy: { type: 'OnReplenish' } });
    o.status = {
      replicas: 1,
      readyReplicas: 1,
      selector: `agents.x-k8s.io/warm-pool-sandbox=${i.toString(16)}`,
      observedGeneration: 1,
    };
  }
  o.metadata = {
    ...o.metadata,
    uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    resourceVersion: String(1000 + i),
    generation: 1,
    creationTimestamp: '2026-11-29T10:00:00Z',
    managedFields: [{ manager: 'agentplane', operation: 'Apply', apiVersion: o.apiVersion, fieldsType: 'FieldsV1' }],
  };
  const reverse = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(reverse)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v)
              .reverse()
              .map(([k, x]) => [k, reverse(x)]),
          )
        : v;
  return reverse(o) as KubeObject;
}

function writeSet(dir: string, objects: readonly KubeObject[]): string {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const text = objects.map((o) => `---\n${dump(o, { lineWidth: -1, noRefs: true })}`).join('');
  writeFileSync(path.join(dir, 'manifests.yaml'), text);
  return path.join(dir, 'manifests.yaml');
}

const release = await loadRelease('v0.5.6');
const crds = KINDS.map((k) => crdObject(release, k));

const dyffPath = (() => {
  const r = spawnSync('bash', [path.join(ROOT, 'scripts/install-dyff.sh')], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
})();
/** The version is in the install directory's name (`dyff-<version>`); `go install` builds report `(development)` themselves. */
const dyffVersion = dyffPath ? path.basename(path.dirname(dyffPath)).replace(/^dyff-/, '') : '';

// bin/ runs the compiled lib/ only (`npm run build` first).
const cliMode = 'compiled lib/';

const rows: string[] = [];
if (!SIZES.includes(LARGE))
  rows.push(
    skippedRow(
      `diff ${LARGE.toLocaleString('en')} objects, 1 % changed`,
      `takes minutes: BENCH_DIFF_SIZES=5000,50000,${LARGE}`,
      0.5,
    ),
  );
const counts: string[] = [];
const cases: Array<{ label: string; n: number; target: number; make: () => [string, string] }> = [
  ...SIZES.map((n) => ({
    label: `diff ${n.toLocaleString('en')} objects, 1 % changed`,
    n,
    target: 0.5,
    make: (): [string, string] => {
      // 1 % of the objects, spread evenly so every generated kind has changes (a step that is a multiple of 4 would hit one kind)
      const changed = Math.floor(n / 100);
      const head = Array.from({ length: n - crds.length }, (_, i) => synthesized(i, false));
      const step = Math.floor(head.length / changed);
      const dir = path.join(OUT, String(n));
      const base = writeSet(path.join(dir, 'base'), [...crds, ...head]);
      const changedFile = writeSet(path.join(dir, 'changed'), [
        ...crds,
        ...head.map((o, i) => (i % step === 0 && i / step < changed ? synthesized(i, true) : o)),
      ]);
      return [base, changedFile];
    },
  })),
  {
    label: 'diff 5,000 objects, defaults noise (live vs synth)',
    n: 5000,
    target: 1,
    make: (): [string, string] => {
      const head = Array.from({ length: 5000 - crds.length }, (_, i) => synthesized(i, false));
      const dir = path.join(OUT, 'noise');
      return [
        writeSet(path.join(dir, 'live'), [...crds, ...head.map((o, i) => asLive(o, i))]),
        writeSet(path.join(dir, 'synth'), [...crds, ...head]),
      ];
    },
  },
];
for (const c of cases) {
  const [baseFile, headFile] = c.make();
  const pairs = c.n >= 50_000 ? Math.min(PAIRS, 3) : PAIRS;
  const ours = (): ReturnType<typeof runOnce> =>
    runOnce(
      [
        process.execPath,
        path.join(ROOT, 'bin/agentplane.js'),
        'diff',
        path.dirname(baseFile),
        path.dirname(headFile),
        '-o',
        'json',
      ],
      { cwd: ROOT, okStatus: (s) => s === 0 || s === 1 },
    );
  if (dyffPath === undefined) {
    rows.push(
      skippedRow(
        `${c.label} (CLI, ${cliMode})`,
        'scripts/install-dyff.sh could not install dyff (no Go or no module proxy)',
        c.target,
      ),
    );
    continue;
  }
  const theirs = (): ReturnType<typeof runOnce> =>
    runOnce([dyffPath, 'between', '--omit-header', '--output', 'brief', baseFile, headFile], { cwd: ROOT });
  const p = paired(ours, theirs, pairs);
  rows.push(pairedRow(`${c.label} (CLI, ${cliMode})`, `dyff ${dyffVersion} between --output brief`, p, c.target));
  const report = JSON.parse(p.a[0]!.stdout) as { objects: Array<{ fields: unknown[] }> };
  const brief = p.b[0]!.stdout.trim();
  const dyffCount =
    /(\d+) changes? detected/.exec(brief)?.[1] ?? (brief === '' ? '0' : `unparsed: ${brief.split('\n')[0]!}`);
  counts.push(
    `- ${c.label}: agentplane ${report.objects.length} objects, ${report.objects.reduce((n, o) => n + o.fields.length, 0)} fields; dyff ${dyffCount} differences`,
  );
  // BENCH_DIFF_KEEP=1 keeps the inputs under bench/.out/diff/ for profiling
  if (process.env['BENCH_DIFF_KEEP'] !== '1')
    rmSync(path.dirname(path.dirname(baseFile)), { recursive: true, force: true });
}
// npm run bench (bench/run.ts) prints the rows under its own header; run alone, they get theirs.
const header = process.env['BENCH_DIFF_ROWS_ONLY'] === '1' ? [] : PAIRED_HEADER;
process.stdout.write([...header, ...rows, '', 'Changes reported:', ...counts, ''].join('\n'));
