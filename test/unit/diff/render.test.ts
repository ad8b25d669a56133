/** Renderers: markdown fits a pull-request comment, text and markdown show hunks with their @@ headers, plans render their verdict and path. */
import { diffManifests, MARKDOWN_BUDGET, renderMarkdown, renderPlan, renderText } from '../../../src/diff/index.js';
import { loadRelease, planUpgrade, type KubeObject } from '../../../src/releases/index.js';

const cm = (name: string, value: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'agents' }, data: { blob: value } });

describe('diff renderers', () => {
  it('markdown stays under GitHub\'s 65,536-character comment limit and says what it left out', () => {
    const base = Array.from({ length: 40 }, (_, i) => cm(`big-${i}`, 'a'.repeat(3000)));
    const head = Array.from({ length: 40 }, (_, i) => cm(`big-${i}`, 'b'.repeat(3000)));
    const md = renderMarkdown(diffManifests({ label: 'main', objects: base }, { label: 'pr', objects: head }));
    expect(md.length).toBeLessThan(65_536);
    expect(MARKDOWN_BUDGET).toBeLessThan(65_536);
    expect(md).toMatch(/_To fit a pull-request comment \d+ object\(s\) show field changes only and \d+ object\(s\) are left out; run `agentplane diff -o text` for everything._/);
    expect(md.match(/<details>/g)!.length).toBeGreaterThan(10);
  });

  it('text shows the summary, the field change and the hunk with its @@ header', () => {
    const text = renderText(diffManifests({ label: 'main', objects: [cm('one', 'x')] }, { label: 'pr', objects: [cm('one', 'y')] }));
    expect(text.split('\n').slice(0, 4)).toEqual([
      'diff main -> pr: 1 changed, 0 added, 0 removed, 0 unchanged',
      '',
      '~ v1/ConfigMap/agents/one (changed)',
      '    ~ data.blob: "x" -> "y"',
    ]);
    expect(text.split('\n')[4]).toMatch(/^ {4}@@ -\d+,\d+ \+\d+,\d+ @@$/);
  });
});

describe('plan renderers', () => {
  it('text and markdown lead with the verdict and number the path; json is the plan', async () => {
    const plan = planUpgrade(await loadRelease('v0.5.6'), await loadRelease('v0.4.6'));
    expect(renderPlan(plan, 'text').split('\n')[0]).toBe('plan-upgrade v0.5.6 -> v0.4.6: blocked');
    const md = renderPlan(plan, 'markdown');
    expect(md.split('\n')[0]).toBe('### agentplane plan-upgrade `v0.5.6` → `v0.4.6`: **blocked**');
    expect(md).toMatch(/^1\. no supported release/m);
    expect(JSON.parse(renderPlan(plan, 'json'))).toMatchObject({ from: 'v0.5.6', to: 'v0.4.6', verdict: 'blocked' });
  });
});
