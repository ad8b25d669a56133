/**
 * Case runtime-exec-starves-probe, release-pinning side: the python runtime images promoted with v0.4.6 and v0.5.0
 * run /execute on the server's event loop (kubernetes-sigs/agent-sandbox#1015, #1375; fixed in v0.5.6), so a template
 * pinning one fails synthesis with the defect named, unless the template accepts that defect by id.
 */
import { jest } from '@jest/globals';
import { ConstructPropsError, KnownDefectiveImageError } from '../../src/index.js';
import { KNOWN_DEFECTIVE_IMAGES, knownDefectOf } from '../../src/releases/index.js';
import { newEnvironment, podSpec, release } from '../unit/constructs/fixture.js';
import { thrownBy } from '../unit/thrown.js';

jest.setTimeout(60_000);

const PYTHON = 'registry.k8s.io/agent-sandbox/python-runtime-sandbox';
const RUNTIME = { kind: 'python-runtime' as const, container: 'main', ports: [8888] };

describe('case runtime-exec-starves-probe: known-defective python runtime images', () => {
  test('the catalog matches the promoted v0.4.6 and v0.5.0 tags, also through a mirror keeping the path, and nothing else', () => {
    expect(KNOWN_DEFECTIVE_IMAGES.map((d) => [d.id, d.tags, d.fixedIn])).toEqual([
      ['python-runtime-blocking-execute', ['v0.4.6', 'v0.5.0'], 'v0.5.6'],
    ]);
    expect(knownDefectOf(`${PYTHON}:v0.5.0`)?.id).toBe('python-runtime-blocking-execute');
    expect(knownDefectOf('mirror.example.internal/agent-sandbox/python-runtime-sandbox:v0.4.6')?.id).toBe(
      'python-runtime-blocking-execute',
    );
    expect(knownDefectOf(`${PYTHON}:v0.5.6`)).toBeUndefined();
    expect(knownDefectOf(`${PYTHON}:v0.5.0@sha256:${'a'.repeat(64)}`)?.id).toBe('python-runtime-blocking-execute');
    expect(knownDefectOf('registry.example/other/python-runtime-sandbox:v0.5.0')).toBeUndefined();
  });

  test('a template on the v0.5.0 python runtime fails synthesis naming the defect, the fix and how to accept it', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'sbx');
    const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    let err: unknown;
    try {
      env.addTemplate('py', { runtimeClass: rc, podSpec: podSpec(`${PYTHON}:v0.5.0`), runtime: RUNTIME });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KnownDefectiveImageError);
    expect((err as KnownDefectiveImageError).reason).toBe('KnownDefectiveImage');
    const e = err as KnownDefectiveImageError;
    expect([e.image, e.defectId]).toEqual([`${PYTHON}:v0.5.0`, 'python-runtime-blocking-execute']);
    expect([e.path, e.fixedIn, e.source]).toEqual([
      'sbx/py',
      'v0.5.6',
      'examples/python-runtime-sandbox/main.py@v0.4.6',
    ]);
  });

  test('the fixed image, or the defect accepted by id, synthesizes', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'sbx');
    const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    expect(
      env
        .addTemplate('fixed', { runtimeClass: rc, podSpec: podSpec(`${PYTHON}:v0.5.6`), runtime: RUNTIME })
        .images.map((i) => i.image),
    ).toEqual([`${PYTHON}:v0.5.6`]);
    const kept = env.addTemplate('kept', {
      runtimeClass: rc,
      podSpec: podSpec(`${PYTHON}:v0.5.0`),
      runtime: RUNTIME,
      acceptKnownDefects: ['python-runtime-blocking-execute'],
    });
    expect(kept.images.map((i) => i.image)).toEqual([`${PYTHON}:v0.5.0`]);
  });

  test('an unknown defect id is a props error naming the prop and the value', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'sbx');
    const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    const err = thrownBy(
      () => env.addTemplate('x', { runtimeClass: rc, podSpec: podSpec(), acceptKnownDefects: ['nope'] }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(err.problems.map((p) => [p.prop, p.reason, p.value])).toEqual([
      ['acceptKnownDefects.0', 'InvalidValue', 'nope'],
    ]);
  });
});
