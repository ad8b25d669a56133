/** Renderers: markdown fits a pull-request comment, text and markdown show hunks with their @@ headers, plans render their verdict and path. */
import { diffManifests, MARKDOWN_BUDGET, renderMarkdown, renderPlan, renderText } from '../../../src/diff/index.js';
import { loadRelease, planUpgrade, type KubeObject } from '../../../src/releases/index.js';

const cm = (name: string, value: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'agents' },
  data: { blob: value },
});

describe('diff renderers', () => {
  it("markdown stays under GitHub's 65,536-character comment limit and says what it left out", () => {
    const base = Array.from({ length: 40 }, (_, i) => cm(`big-${i}`, 'a'.repeat(3000)));
    const head = Array.from({ length: 40 }, (_, i) => cm(`big-${i}`, 'b'.repeat(3000)));
    const md = renderMarkdown(diffManifests({ label: 'main', objects: base }, { label: 'pr', objects: head }));
    expect(md.length).toBeLessThan(65_536);
    expect(MARKDOWN_BUDGET).toBeLessThan(65_536);
    expect(md).toMatch(
      /_To fit a pull-request comment \d+ object\(s\) show field changes only and \d+ object\(s\) are left out; run `agentplane diff -o text` for everything._/,
    );
    expect(md.match(/<details>/g)!.length).toBeGreaterThan(10);
  });

  it('text shows the summary, the field change and the hunk with its @@ header', () => {
    const text = renderText(
      diffManifests({ label: 'main', objects: [cm('one', 'x')] }, { label: 'pr', objects: [cm('one', 'y')] }),
    );
    expect(text.split('\n').slice(0, 4)).toEqual([
      'diff main -> pr: 1 changed, 0 added, 0 removed, 0 unchanged',
      '',
      '~ v1/ConfigMap/agents/one (changed)',
      '    ~ data.blob: "x" -> "y"',
    ]);
    expect(text.split('\n')[4]).toMatch(/^ {4}@@ -\d+,\d+ \+\d+,\d+ @@$/);
  });
});

describe('field view of a changed long string', () => {
  /** A ConfigMap carrying a SandboxTemplate as pretty-printed JSON (what `kubectl create configmap --from-file` gives). */
  const templates = (image: string, padding = ''): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'templates', namespace: 'agents' },
    data: {
      'python.json': JSON.stringify(
        {
          apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
          kind: 'SandboxTemplate',
          metadata: { name: 'python', namespace: 'agents' },
          spec: {
            podTemplate: {
              spec: {
                runtimeClassName: 'gvisor',
                containers: [{ name: 'runtime', image, resources: { limits: { cpu: '1', memory: '1Gi' } } }],
              },
            },
          },
        },
        null,
        2,
      ),
      ...(padding ? { padding } : {}),
    },
  });
  const EXPECTED =
    '~ data["python.json"] (line 15): "…\\"image\\": \\"python:3.11-slim\\",…" -> "…\\"image\\": \\"python:3.12-slim\\",…"';

  it('text shows the changed line of a multi-line value, not the same prefix twice', () => {
    const text = renderText(
      diffManifests(
        { label: 'main', objects: [templates('python:3.11-slim')] },
        { label: 'pr', objects: [templates('python:3.12-slim')] },
      ),
    );
    expect(text.split('\n')[3]).toBe(`    ${EXPECTED}`);
    // the unified view is unchanged: the whole line, in YAML
    expect(text).toContain(
      '\n    -                "image": "python:3.11-slim",\n    +                "image": "python:3.12-slim",\n',
    );
  });

  it('markdown field lines (objects too large for a hunk) show the same window', () => {
    const pad = (c: string): string => c.repeat(MARKDOWN_BUDGET);
    const md = renderMarkdown(
      diffManifests(
        { label: 'main', objects: [templates('python:3.11-slim', pad('a'))] },
        { label: 'pr', objects: [templates('python:3.12-slim', pad('b'))] },
      ),
    );
    expect(md).toContain(`\n- \`${EXPECTED}\`\n`);
    expect(md).toContain(`\n- \`~ data.padding (char 1): "${'a'.repeat(60)}…" -> "${'b'.repeat(60)}…"\`\n`);
  });

  it('a long single-line value shows 20 characters either side of the difference, with … where cut', () => {
    const cm1 = (v: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'env', namespace: 'agents' },
      data: { ARGS: v },
    });
    const args = (level: string): string =>
      `--leader-elect=true --metrics-bind-address=:8080 --health-probe-bind-address=:8081 --zap-log-level=${level} --manage-webhook-certs=true --kube-api-qps=50`;
    const text = renderText(
      diffManifests({ label: 'main', objects: [cm1(args('info'))] }, { label: 'pr', objects: [cm1(args('debug'))] }),
    );
    expect(text.split('\n')[3]).toBe(
      '    ~ data.ARGS (char 100): "…081 --zap-log-level=info --manage-webhook-ce…" -> "…081 --zap-log-level=debug --manage-webhook-ce…"',
    );
  });
});

describe('plan renderers', () => {
  it('text and markdown lead with the verdict and number the path; json is the plan', async () => {
    const plan = planUpgrade(await loadRelease('v0.5.6'), await loadRelease('v0.4.6'));
    expect(renderPlan(plan, 'text').split('\n')[0]).toBe('plan-upgrade v0.5.6 -> v0.4.6 (downgrade): blocked');
    const md = renderPlan(plan, 'markdown');
    expect(md.split('\n')[0]).toBe('### agentplane plan-upgrade `v0.5.6` → `v0.4.6` (downgrade): **blocked**');
    expect(md).toMatch(/^1\. no supported release/m);
    expect(JSON.parse(renderPlan(plan, 'json'))).toMatchObject({
      from: 'v0.5.6',
      to: 'v0.4.6',
      direction: 'downgrade',
      verdict: 'blocked',
    });
  });

  it('an unknown verdict shows the assumed one and what was not read', async () => {
    const plan = planUpgrade(await loadRelease('v0.4.6'), await loadRelease('v0.5.6'));
    const text = renderPlan(plan, 'text').split('\n');
    expect(text[0]).toBe('plan-upgrade v0.4.6 -> v0.5.6: unknown (assumed: needs-migration)');
    expect(text.slice(2, 4)).toEqual(['', 'Not read (the verdict depends on it):']);
    expect(text[4]).toMatch(/^  - status\.storedVersions /);
    expect(renderPlan(plan, 'markdown').split('\n')[0]).toBe(
      '### agentplane plan-upgrade `v0.4.6` → `v0.5.6`: **unknown (assumed: needs-migration)**',
    );
  });
});
