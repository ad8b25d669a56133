/** Secret values never reach any rendered output, plain or base64; a changed Secret still shows as changed. */
import { diffManifests, parseManifests, ManifestParseError, renderDiff } from '../../../src/diff/index.js';
import type { KubeObject } from '../../../src/releases/index.js';

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
    expect((caught as Error).message).toBe(
      'secret.yaml is not valid YAML: bad indentation of a mapping entry at line 5, column 7',
    );
    expect((caught as Error).message).not.toContain(PLAIN);
  });
});
