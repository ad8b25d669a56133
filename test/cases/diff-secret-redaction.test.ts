/**
 * Case diff-secret-redaction: Secret values never reach any output, plain or base64, in
 * any format or error message; a changed Secret still shows as changed (value redacted), an unchanged one stored as
 * `data` live and written as `stringData` is unchanged, and the exit code says changes are present. The case's two
 * Secrets go through the real command (bin/agentplane.js) below; the same against the live test cluster (`--live`) is
 * test/cluster/diff-live.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { diffManifests, parseManifests, ManifestParseError, renderDiff } from '../../src/diff/index.js';
import type { KubeObject } from '../../src/releases/index.js';

const PLAIN = 'hunter2-very-secret-token';
const B64 = Buffer.from(PLAIN).toString('base64');
const NEW_PLAIN = 'correct-horse-battery-staple';

const secret = (data: Record<string, string> | undefined, stringData?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'router-token', namespace: 'agents' },
  type: 'Opaque',
  ...(data ? { data } : {}),
  ...(stringData ? { stringData } : {}),
});

function allOutputs(base: KubeObject[], head: KubeObject[]): string {
  const report = diffManifests({ label: 'base', objects: base }, { label: 'head', objects: head });
  return ['text', 'markdown', 'json'].map((f) => renderDiff(report, f as 'text')).join('\n');
}

describe('Secret redaction', () => {
  it('reports a changed value as changed without showing either value, plain or base64', () => {
    const out = allOutputs([secret({ token: B64 })], [secret({ token: Buffer.from(NEW_PLAIN).toString('base64') })]);
    for (const leaked of [PLAIN, B64, NEW_PLAIN, Buffer.from(NEW_PLAIN).toString('base64')])
      expect(out).not.toContain(leaked);
    expect(out).toContain('(redacted: old value)');
    expect(out).toContain('(redacted: new value)');
    expect(out).toContain('secret-change');
  });

  it('a long multi-line value changed deep inside (a kubeconfig) shows no window of it, in any format', () => {
    const kubeconfig = (token: string): string =>
      `apiVersion: v1\nkind: Config\nclusters:\n- name: kind\n  cluster:\n    server: https://127.0.0.1:6443\nusers:\n- name: ci\n  user:\n    token: ${token}\n`;
    const before = kubeconfig(PLAIN);
    const after = kubeconfig(NEW_PLAIN);
    const report = diffManifests(
      { label: 'base', objects: [secret(undefined, { config: before })] },
      { label: 'head', objects: [secret(undefined, { config: after })] },
    );
    const out = ['text', 'markdown', 'json'].map((f) => renderDiff(report, f as 'text')).join('\n');
    for (const leaked of [
      PLAIN,
      NEW_PLAIN,
      'hunter2',
      'horse',
      'server: https',
      Buffer.from(before).toString('base64').slice(0, 40),
      Buffer.from(after).toString('base64').slice(0, 40),
    ])
      expect(out).not.toContain(leaked);
    expect(renderDiff(report, 'text')).toContain(
      '    ~ data.config: "(redacted: old value)" -> "(redacted: new value)"\n',
    );
  });

  it('treats stringData like the base64 data the API server stores: same value, no change', () => {
    const report = diffManifests(
      { label: 'live', objects: [secret({ token: B64 })] },
      { label: 'dist', objects: [secret(undefined, { token: PLAIN })] },
    );
    expect(report.counts.unchanged).toBe(1);
  });

  it('redacts added and removed Secrets too', () => {
    const added = allOutputs([], [secret(undefined, { token: PLAIN })]);
    const removed = allOutputs([secret({ token: B64 })], []);
    for (const out of [added, removed]) {
      expect(out).not.toContain(PLAIN);
      expect(out).not.toContain(B64);
      expect(out).toContain('(redacted)');
    }
  });

  it('a YAML error names file, line and column but never quotes the content', () => {
    const text = `apiVersion: v1\nkind: Secret\nstringData:\n  token: ${PLAIN}\n   bad: [\n`;
    let caught: unknown;
    try {
      parseManifests('secret.yaml', text);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ManifestParseError);
    expect((caught as ManifestParseError).reason).toBe('ManifestUnparsable');
    const e = caught as ManifestParseError;
    expect([e.file, e.line, e.column]).toEqual(['secret.yaml', 5, 7]);
    expect((caught as Error).message).not.toContain(PLAIN);
  });
});

describe("case diff-secret-redaction: the case's Secrets through `agentplane diff`", () => {
  const ROOT = path.resolve(import.meta.dirname, '../..');
  const values = ['value-A', 'value-B', 'reg-pass-7Qx'];
  const b64 = (v: string): string => Buffer.from(v).toString('base64');
  const doc = (name: string, body: string): string =>
    `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\n  namespace: sbx\ntype: Opaque\n${body}`;
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'agentplane-case26-'));
    mkdirSync(path.join(dir, 'live'));
    mkdirSync(path.join(dir, 'desired'));
    // Live as the API server stores Secrets (base64 `data`); desired as written (`stringData`).
    writeFileSync(
      path.join(dir, 'live/secrets.yaml'),
      `${doc('router-scoped-token', `data:\n  token: ${b64('value-A')}\n`)}---\n${doc('registry-auth', `data:\n  password: ${b64('reg-pass-7Qx')}\n`)}`,
    );
    writeFileSync(
      path.join(dir, 'desired/secrets.yaml'),
      `${doc('router-scoped-token', 'stringData:\n  token: value-B\n')}---\n${doc('registry-auth', 'stringData:\n  password: reg-pass-7Qx\n')}`,
    );
  });
  const diff = (...args: string[]) =>
    spawnSync(process.execPath, ['bin/agentplane.js', 'diff', ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    });

  it.each(['json', 'markdown', 'yaml', 'table'])(
    '-o %s: exit 1, token changed (redacted), registry-auth unchanged, no value anywhere',
    (o) => {
      const r = diff(path.join(dir, 'live'), path.join(dir, 'desired'), '-o', o);
      expect(r.status).toBe(1);
      for (const v of values) {
        expect(r.stdout + r.stderr).not.toContain(v);
        expect(r.stdout + r.stderr).not.toContain(b64(v));
      }
      expect(r.stdout).toContain('v1/Secret/sbx/router-scoped-token');
      expect(r.stdout).toContain('(redacted: new value)');
      expect(r.stdout).not.toContain('registry-auth');
      if (o === 'json') {
        const report = JSON.parse(r.stdout) as {
          objects: { name: string; change: string; fields: { path: string; op: string }[] }[];
          risks: { rule: string; details: string[] }[];
          counts: Record<string, number>;
        };
        expect(report.counts).toEqual({ added: 0, removed: 0, changed: 1, unchanged: 1 });
        expect(report.objects.map((x) => [x.name, x.change, x.fields.map((f) => `${f.path} ${f.op}`)])).toEqual([
          ['router-scoped-token', 'changed', ['data.token changed']],
        ]);
        expect(report.risks).toEqual([expect.objectContaining({ rule: 'secret-change', details: ['data.token'] })]);
      }
    },
  );

  it('an unreadable manifest holding the value fails (exit 4, invalid input) without quoting it', () => {
    const bad = path.join(dir, 'bad');
    mkdirSync(bad);
    writeFileSync(
      path.join(bad, 'secrets.yaml'),
      `${doc('router-scoped-token', 'stringData:\n  token: value-B\n   x: [\n')}`,
    );
    const r = diff(path.join(dir, 'live'), bad, '-o', 'json');
    expect(r.status).toBe(4);
    for (const v of values) expect(r.stdout + r.stderr).not.toContain(v);
  });
});
