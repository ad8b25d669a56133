import { fact } from '../../../src/verify/evidence.js';
import { renderJson } from '../../../src/verify/render/json.js';
import { renderJunit } from '../../../src/verify/render/junit.js';
import { renderMarkdown } from '../../../src/verify/render/markdown.js';
import { renderTable } from '../../../src/verify/render/table.js';
import { buildReport, VerifyReportSchema } from '../../../src/verify/report.js';
import { defaultRequired, requirementsFor } from '../../../src/verify/requirements.js';
import { unknownTuple } from '../../../src/verify/tuple.js';

const at = '2026-11-29T10:00:00.000Z';
const proven = (capability: string, step: 'discovered' | 'compatible' | 'configured' | 'verified', message: string) =>
  fact({ capability: capability as never, step, verdict: 'proven', reason: 'CrdFound', subject: 's', message, at });

function sample(leftovers: string[] = []) {
  const evidence = [
    ...(['discovered', 'compatible', 'configured', 'verified'] as const).map((s) =>
      proven('sandbox-api', s, `sandbox-api ${s}`),
    ),
    ...(['discovered', 'compatible', 'configured'] as const).map((s) => proven('runtime-exec', s, `runtime-exec ${s}`)),
    fact({
      capability: 'runtime-exec',
      step: 'verified',
      verdict: 'unknown',
      reason: 'RuntimeTimeout',
      subject: 'sandboxd 127.10.0.3:9090',
      message: 'runtime API did not answer in 5s; pod Ready=True',
      at,
      durationMs: 5000,
    }),
    ...(['discovered', 'compatible', 'configured'] as const).map((s) =>
      proven('network-isolation', s, `netpol ${s} | piped`),
    ),
  ];
  return buildReport({
    environment: { name: 'dev-gvisor', release: 'v0.5.6', source: 'dist/dev-gvisor' },
    tuple: unknownTuple('not read in this test', { value: '0.1.0', source: 'package.json' }),
    requirements: requirementsFor(['sandbox-api', 'runtime-exec', 'network-isolation', 'sandbox-api']),
    evidence,
    leftovers,
    startedAt: at,
    durationMs: 6200,
  });
}

describe('requirements', () => {
  test('everything must be verified except network-isolation and suspend-resume (configured); overrides win', () => {
    expect(defaultRequired('runtime-class/gvisor')).toBe('verified');
    expect(defaultRequired('network-isolation')).toBe('configured');
    expect(defaultRequired('suspend-resume')).toBe('configured');
    expect(requirementsFor(['snapshot', 'router', 'snapshot'], { snapshot: 'absent' })).toEqual([
      { name: 'snapshot', required: 'absent' },
      { name: 'router', required: 'verified' },
    ]);
  });
});

describe('buildReport', () => {
  test('rows settle per capability; outcome is not-verified when one required state is missed', () => {
    const r = sample();
    expect(r.capabilities.map((c) => [c.name, c.state, c.required, c.met])).toEqual([
      ['sandbox-api', 'verified', 'verified', true],
      ['runtime-exec', 'configured', 'verified', false],
      ['network-isolation', 'configured', 'configured', true],
    ]);
    expect(r.capabilities.map((c) => c.nextReason)).toEqual([null, 'RuntimeTimeout', 'NoEvidence']);
    expect(r.outcome).toBe('not-verified');
  });

  test('leftovers make the outcome not-verified even when every capability met its requirement', () => {
    const r = buildReport({
      ...sample(),
      requirements: [{ name: 'sandbox-api', required: 'verified' }],
      evidence: sample().capabilities[0]!.evidence,
      leftovers: ['Sandbox sbx/verify-abc: delete timed out'],
    });
    expect(r.capabilities[0]!.met).toBe(true);
    expect(r.outcome).toBe('not-verified');
  });
});

describe('renderers', () => {
  test('json parses back and matches the stable schema exactly', () => {
    const parsed = JSON.parse(renderJson(sample()));
    expect(VerifyReportSchema.parse(parsed)).toEqual(parsed);
    expect(Object.keys(parsed)).toEqual([
      'schema',
      'environment',
      'tuple',
      'capabilities',
      'leftovers',
      'outcome',
      'startedAt',
      'durationMs',
    ]);
    expect(Object.keys(parsed.capabilities[0])).toEqual([
      'name',
      'state',
      'required',
      'met',
      'evidence',
      'next',
      'nextReason',
    ]);
    expect(VerifyReportSchema.safeParse({ ...parsed, extra: 1 }).success).toBe(false);
  });

  test('table shows one row per capability with state, evidence and next, and the tuple line', () => {
    const text = renderTable(sample());
    expect(text).toContain('environment dev-gvisor (release v0.5.6, from dist/dev-gvisor)');
    expect(text).toContain('tuple: kubernetes=unknown crdRelease=unknown');
    expect(text).toContain('runtime-exec');
    expect(text).toMatch(/│ runtime-exec +│ configured +│ verified +│ [^│]*│ \[RuntimeTimeout\] /);
    expect(text).toContain('1 required capability is below the required state');
    expect(text).not.toMatch(/\u001b\[/);
    expect(text).toContain('│ network-isolation │');
  });

  test('markdown escapes pipes and marks the failing state', () => {
    const md = renderMarkdown(sample(['Sandbox sbx/verify-1: 403']));
    expect(md).toContain('## ❌ AgentPlane verify: dev-gvisor');
    expect(md).toContain('| `runtime-exec` | **configured** | verified |');
    expect(md).toMatch(/^\| `runtime-exec` \|.*\| \[RuntimeTimeout\] [^|]+\|$/m);
    expect(md).toContain('netpol configured \\| piped');
    expect(md).toContain('- Sandbox sbx/verify-1: 403');
  });

  test('junit has one testcase per capability, failures for missed ones, escaped XML', () => {
    const xml = renderJunit(sample(['Sandbox sbx/<x>: left']));
    expect(xml).toContain('<testsuites name="agentplane-verify" tests="4" failures="2" time="6.200">');
    expect(xml).toContain('<testcase classname="agentplane.verify" name="runtime-exec" time="5.000">');
    expect(xml).toContain(
      '<failure message="configured &lt; verified: verified not reached: runtime API did not answer in 5s; pod Ready=True" type="configured">',
    );
    expect(xml).toContain('Sandbox sbx/&lt;x&gt;: left');
    expect((xml.match(/<testcase /g) ?? []).length).toBe(4);
  });
});
