import { describeReading, isCurrentlyTrue, readCondition } from '../../../src/verify/conditions.js';

const sandbox = (generation: number, conditions: unknown[], observedGeneration?: number) => ({
  metadata: { name: 's', generation },
  status: { conditions, ...(observedGeneration !== undefined ? { observedGeneration } : {}) },
});

describe('readCondition', () => {
  test('Ready=True at the current generation is current', () => {
    const r = readCondition(sandbox(4, [{ type: 'Ready', status: 'True', reason: 'DependenciesReady', observedGeneration: 4 }]), 'Ready');
    expect(r).toEqual({ kind: 'current', status: 'True', reason: 'DependenciesReady', message: '', generation: 4 });
  });

  test('Ready=True written for an older generation is stale, not ready (case 01)', () => {
    const obj = sandbox(4, [{ type: 'Ready', status: 'True', reason: 'DependenciesReady', observedGeneration: 2 }]);
    expect(readCondition(obj, 'Ready')).toEqual({ kind: 'stale', status: 'True', reason: 'DependenciesReady', observedGeneration: 2, generation: 4 });
    expect(isCurrentlyTrue(obj, 'Ready')).toBe(false);
    expect(describeReading('Ready', readCondition(obj, 'Ready'))).toBe('Ready=True is stale: observedGeneration 2 ≠ generation 4, reconcile pending');
  });

  test('the position of the condition in the array does not matter', () => {
    const conds = [
      { type: 'Suspended', status: 'False', reason: 'NotSuspended', observedGeneration: 1 },
      { type: 'Ready', status: 'True', reason: 'DependenciesReady', observedGeneration: 1 },
    ];
    expect(isCurrentlyTrue(sandbox(1, conds), 'Ready')).toBe(true);
    expect(isCurrentlyTrue(sandbox(1, [...conds].reverse()), 'Ready')).toBe(true);
  });

  test('a condition without observedGeneration falls back to status.observedGeneration, else is stale', () => {
    expect(readCondition(sandbox(3, [{ type: 'Ready', status: 'True' }], 3), 'Ready').kind).toBe('current');
    const r = readCondition(sandbox(3, [{ type: 'Ready', status: 'True' }]), 'Ready');
    expect(r.kind).toBe('stale');
    expect(describeReading('Ready', r)).toContain('observedGeneration unset');
  });

  test('absent condition and non-True statuses', () => {
    expect(readCondition(sandbox(2, []), 'Ready')).toEqual({ kind: 'absent', generation: 2 });
    expect(readCondition(sandbox(2, [{ type: 'Ready', status: 'Weird', observedGeneration: 2 }]), 'Ready')).toMatchObject({ kind: 'current', status: 'Unknown' });
    expect(isCurrentlyTrue(sandbox(2, [{ type: 'Ready', status: 'False', observedGeneration: 2 }]), 'Ready')).toBe(false);
  });
});
