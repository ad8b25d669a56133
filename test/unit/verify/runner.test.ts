import { fact } from '../../../src/verify/evidence.js';
import { orderProbes, ProbeGraphError, runProbes, type Probe } from '../../../src/verify/runner.js';
import { thrownBy } from '../thrown.js';

const probe = (id: string, after: string[], run: Probe['run'], deadlineMs = 1000): Probe => ({
  id,
  after,
  covers: ['controller'],
  timeoutStep: 'configured',
  deadlineMs,
  run,
});
const proven = (id: string) => async () => [
  fact({
    capability: 'controller',
    step: 'discovered',
    verdict: 'proven',
    reason: 'DeploymentFound',
    subject: id,
    message: `${id} ran`,
  }),
];

describe('orderProbes', () => {
  test('dependencies run first; independent probes keep their order', () => {
    const order = orderProbes([
      probe('c', ['b'], proven('c')),
      probe('a', [], proven('a')),
      probe('b', ['a'], proven('b')),
      probe('d', [], proven('d')),
    ]);
    expect(order.map((p) => p.id)).toEqual(['a', 'b', 'c', 'd']);
  });

  test('a cycle is an error naming it', () => {
    const err = thrownBy(
      () => orderProbes([probe('a', ['b'], proven('a')), probe('b', ['a'], proven('b'))]),
      ProbeGraphError,
      'ProbeGraphInvalid',
    );
    expect(err.probes).toEqual(['a', 'b', 'a']);
  });

  test('an unknown dependency is an error', () => {
    const err = thrownBy(() => orderProbes([probe('a', ['zz'], proven('a'))]), ProbeGraphError, 'ProbeGraphInvalid');
    expect(err.probes).toEqual(['a', 'zz']);
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
        probe(
          'hangs',
          [],
          (ctx) =>
            new Promise(() => {
              ctx.signal.addEventListener('abort', () => {
                aborted = true;
              });
            }),
          50,
        ),
      ],
      { progress: () => undefined },
    );
    expect(aborted).toBe(true);
    expect(ev).toHaveLength(1);
    expect(ev[0]).toMatchObject({
      capability: 'controller',
      step: 'configured',
      verdict: 'unknown',
      reason: 'ProbeTimeout',
      subject: 'probe hangs',
    });
  });

  test('a probe that throws yields unknown evidence with the error', async () => {
    const ev = await runProbes(
      [
        probe('boom', [], async () => {
          throw new Error('socket hang up');
        }),
      ],
      { progress: () => undefined },
    );
    expect(ev[0]).toMatchObject({
      verdict: 'unknown',
      reason: 'ProbeError',
      subject: 'probe boom',
      value: 'socket hang up',
    });
  });

  test('after an interrupt, remaining probes are reported as not run', async () => {
    const outer = new AbortController();
    const ev = await runProbes(
      [
        probe('first', [], async () => {
          outer.abort();
          return [];
        }),
        probe('second', ['first'], proven('second')),
      ],
      { progress: () => undefined, signal: outer.signal },
    );
    expect(ev).toEqual([
      expect.objectContaining({
        verdict: 'unknown',
        reason: 'ProbeNotRun',
        subject: 'probe second',
      }),
    ]);
  });
});

describe('parallel runs', () => {
  const slow = (id: string, ms: number, log: string[]) => async () => {
    log.push(`start ${id}`);
    await new Promise((r) => setTimeout(r, ms));
    log.push(`end ${id}`);
    return proven(id)();
  };
  test('independent probes overlap up to the bound; evidence comes in dependency order, not completion order', async () => {
    const log: string[] = [];
    const probes = [
      probe('a', [], slow('a', 60, log)),
      probe('b', [], slow('b', 10, log)),
      probe('c', [], slow('c', 10, log)),
      probe('d', ['a', 'b'], slow('d', 1, log)),
    ];
    const ev = await runProbes(probes, { progress: () => undefined, concurrency: 2 });
    expect(ev.map((e) => e.subject)).toEqual(['a', 'b', 'c', 'd']);
    expect(log.slice(0, 2)).toEqual(['start a', 'start b']); // c waits for a free slot
    expect(log.indexOf('start d')).toBeGreaterThan(log.indexOf('end a'));
  });
  test('concurrency 1 runs one after another', async () => {
    const log: string[] = [];
    await runProbes([probe('a', [], slow('a', 5, log)), probe('b', [], slow('b', 5, log))], {
      progress: () => undefined,
      concurrency: 1,
    });
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b']);
  });
});
