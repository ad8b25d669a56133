import { fact } from '../../../src/verify/evidence.js';
import { orderProbes, ProbeGraphError, runProbes, type Probe } from '../../../src/verify/runner.js';

const probe = (id: string, after: string[], run: Probe['run'], deadlineMs = 1000): Probe => ({ id, after, covers: ['controller'], timeoutStep: 'configured', deadlineMs, run });
const proven = (id: string) => async () => [fact({ capability: 'controller', step: 'discovered', verdict: 'proven', reason: 'DeploymentFound', subject: id, message: `${id} ran` })];

describe('orderProbes', () => {
  test('dependencies run first; independent probes keep their order', () => {
    const order = orderProbes([probe('c', ['b'], proven('c')), probe('a', [], proven('a')), probe('b', ['a'], proven('b')), probe('d', [], proven('d'))]);
    expect(order.map((p) => p.id)).toEqual(['a', 'b', 'c', 'd']);
  });

  test('a cycle is an error naming it', () => {
    expect(() => orderProbes([probe('a', ['b'], proven('a')), probe('b', ['a'], proven('b'))])).toThrow(new ProbeGraphError('probes depend on each other in a cycle: a -> b -> a'));
  });

  test('an unknown dependency is an error', () => {
    expect(() => orderProbes([probe('a', ['zz'], proven('a'))])).toThrow(/runs after "zz", which is not a probe/);
  });
});

describe('runProbes', () => {
  test('collects evidence in dependency order; later probes see earlier evidence; progress per probe', async () => {
    const lines: string[] = [];
    let seen = -1;
    const ev = await runProbes(
      [
        probe('second', ['first'], async (ctx) => {
          seen = ctx.evidence.length;
          return proven('second')();
        }),
        probe('first', [], proven('first')),
      ],
      { progress: (l) => lines.push(l) },
    );
    expect(ev.map((e) => e.subject)).toEqual(['first', 'second']);
    expect(seen).toBe(1);
    expect(lines[0]).toBe('[1/2] first: running (deadline 1s)');
    expect(lines.some((l) => /^\[2\/2\] second: done in \d+ms \(1 proven\)$/.test(l))).toBe(true);
  });

  test('a probe with nothing to say prints its time and no count (no "no evidence" noise)', async () => {
    const lines: string[] = [];
    const ev = await runProbes([probe('quiet', [], async () => [])], { progress: (l) => lines.push(l) });
    expect(ev).toEqual([]);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/^\[1\/1\] quiet: done in \d+ms$/);
  });

  test('a probe past its deadline yields unknown evidence and its signal aborts', async () => {
    let aborted = false;
    const ev = await runProbes(
      [
        probe('hangs', [], (ctx) => new Promise(() => {
          ctx.signal.addEventListener('abort', () => { aborted = true; });
        }), 50),
      ],
      { progress: () => undefined },
    );
    expect(aborted).toBe(true);
    expect(ev).toHaveLength(1);
    expect(ev[0]).toMatchObject({ capability: 'controller', step: 'configured', verdict: 'unknown', message: 'probe hangs did not finish within 50ms; nothing it would have checked counts' });
  });

  test('a probe that throws yields unknown evidence with the error', async () => {
    const ev = await runProbes([probe('boom', [], async () => { throw new Error('socket hang up'); })], { progress: () => undefined });
    expect(ev[0]).toMatchObject({ verdict: 'unknown', message: 'probe boom stopped with an error: socket hang up' });
  });

  test('after an interrupt, remaining probes are reported as not run', async () => {
    const outer = new AbortController();
    const ev = await runProbes(
      [probe('first', [], async () => { outer.abort(); return []; }), probe('second', ['first'], proven('second'))],
      { progress: () => undefined, signal: outer.signal },
    );
    expect(ev).toEqual([expect.objectContaining({ verdict: 'unknown', message: 'probe second was not run: verification was interrupted' })]);
  });
});
