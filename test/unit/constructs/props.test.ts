/** Props errors show the offending value as JSON, never `[object Object]`. */
import { showValue } from '../../../src/constructs/props.js';
import { ConstructPropsError } from '../../../src/index.js';
import { newEnvironment, podSpec, release } from './fixture.js';

describe('props error values', () => {
  test('objects, constructs, Maps and cycles render as JSON', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'env');
    const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic['self'] = cyclic;
    expect(showValue({ cpu: 1 })).toBe('{"cpu":1}');
    expect(showValue({ rc })).toBe('{"rc":"<SandboxRuntimeClass env/gvisor>"}');
    expect(showValue(new Map([['k', 1]]))).toBe('{"k":1}');
    expect(showValue(cyclic)).toBe('{"a":1,"self":"[repeated]"}');
    expect(showValue('x'.repeat(100))).toHaveLength(80);
  });

  test('a wrongly nested construct prop shows its JSON in the message', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'env');
    const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    const t = env.addTemplate('py', { runtimeClass: rc, podSpec: podSpec() });
    let err: unknown;
    try {
      env.addWarmPool('pool', { template: { template: t } as never });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConstructPropsError);
    expect((err as ConstructPropsError).reason).toBe('InvalidProps');
    expect((err as ConstructPropsError).issues).toEqual([
      'template: must be a SandboxTemplate construct (got {"template":"<SandboxTemplate env/py>"})',
    ]);
    expect((err as Error).message).not.toContain('[object Object]');
  });
});
