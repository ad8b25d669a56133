/** Phase from spec plus current-generation conditions only (case claim-ready-stale-generation): pure logic over API-shaped objects. */
import { readCondition } from '../../../src/adapter/kubernetes/conditions.js';
import {
  claimPhase,
  sandboxPhase,
  type ClaimObject,
  type SandboxObject,
} from '../../../src/adapter/kubernetes/phase.js';

const ready = (status: string, observedGeneration?: number, reason = 'DependenciesReady') => ({
  type: 'Ready',
  status,
  reason,
  ...(observedGeneration !== undefined ? { observedGeneration } : {}),
});

test('a condition counts only at the object generation; older or missing observedGeneration is unknown', () => {
  const obj = { metadata: { generation: 4 }, status: { conditions: [ready('True', 2)] } };
  expect(readCondition(obj, 'Ready')).toMatchObject({ value: 'unknown', observedGeneration: 2 });
  expect(readCondition(obj, 'Ready').reason).toMatch(/generation 2, object is at generation 4/);
  expect(readCondition({ metadata: { generation: 1 }, status: { conditions: [ready('True')] } }, 'Ready').value).toBe(
    'unknown',
  );
  expect(
    readCondition(
      { metadata: { generation: 2 }, status: { conditions: [ready('False', 2, 'SandboxNotReady')] } },
      'Ready',
    ),
  ).toMatchObject({ value: 'false', reason: 'SandboxNotReady' });
});

test('conditions array order never matters', () => {
  const a = { type: 'Suspended', status: 'False', reason: 'NotSuspended', observedGeneration: 3 };
  const b = ready('True', 3);
  const c = { type: 'PodScheduled', status: 'True', observedGeneration: 3 };
  const orders = [
    [a, b, c],
    [c, b, a],
    [b, c, a],
  ];
  const phases = orders.map((conditions) =>
    sandboxPhase({ metadata: { name: 's', generation: 3 }, status: { conditions } }, 'v0.5'),
  );
  expect(new Set(phases.map((p) => `${p.phase}|${p.reason}`)).size).toBe(1);
  expect(phases[0]!.phase).toBe('Ready');
});

test('duplicate entries of one type: the newest generation wins; disagreement at that generation is unknown', () => {
  const obj = { metadata: { generation: 5 }, status: { conditions: [ready('False', 4), ready('True', 5)] } };
  expect(readCondition(obj, 'Ready').value).toBe('true');
  const conflicting = { metadata: { generation: 5 }, status: { conditions: [ready('False', 5), ready('True', 5)] } };
  expect(readCondition(conflicting, 'Ready').value).toBe('unknown');
});

test('case claim-ready-stale-generation: claim copy says Ready at generation 2; the bound Sandbox is at generation 4 with Ready for 2 -> Unknown, reconcile pending', () => {
  const claim: ClaimObject = {
    metadata: { name: 'c1', generation: 3, uid: 'claim-uid' },
    status: { sandbox: { name: 'py-pool-k2x9q' }, conditions: [ready('True', 2)] },
  };
  const sandbox: SandboxObject = {
    metadata: {
      name: 'py-pool-k2x9q',
      generation: 4,
      ownerReferences: [{ kind: 'SandboxClaim', name: 'c1', uid: 'claim-uid', controller: true }],
    },
    spec: { operatingMode: 'Suspended' },
    status: { conditions: [ready('True', 2)] },
  };
  const p = claimPhase(claim, sandbox, 'v0.5');
  expect(p.phase).not.toBe('Ready');
  expect(p.phase).toBe('Unknown');
  expect(p.reason).toBe('ConditionsStale');
  // prose: the message carries which generations disagree, the detail the code does not
  expect(p.message).toMatch(
    /operatingMode is Suspended; Ready condition is for generation 2, object is at generation 4: reconcile pending$/,
  );
  const running: SandboxObject = { ...sandbox, spec: { operatingMode: 'Running' } };
  const q = claimPhase(claim, running, 'v0.5');
  expect(q).toMatchObject({ phase: 'Unknown', reason: 'ReadyUnknown', observedGeneration: 2 });
  // once the controller has written conditions for generation 4 but no Suspended=True yet: suspending, not ready
  const reconciled: SandboxObject = { ...sandbox, status: { conditions: [ready('False', 4, 'Suspending')] } };
  expect(claimPhase(claim, reconciled, 'v0.5')).toMatchObject({ phase: 'Pending', reason: 'Suspending' });
});

test('case claim-ready-stale-generation variant B: claim says SandboxNotReady, Sandbox Ready at its generation but still owned by the pool -> not Ready (adoption incomplete)', () => {
  const claim: ClaimObject = {
    metadata: { name: 'c1', generation: 1, uid: 'claim-uid' },
    status: { sandbox: { name: 'py-pool-k2x9q' }, conditions: [ready('False', 1, 'SandboxNotReady')] },
  };
  const sandbox: SandboxObject = {
    metadata: {
      name: 'py-pool-k2x9q',
      generation: 1,
      ownerReferences: [{ kind: 'SandboxWarmPool', name: 'py-pool', uid: 'pool-uid', controller: true }],
    },
    status: { conditions: [ready('True', 1)], podIPs: ['127.10.0.3'] },
  };
  const p = claimPhase(claim, sandbox, 'v0.5');
  expect(p).toMatchObject({ phase: 'Pending', reason: 'AdoptionIncomplete' });
  const adopted: SandboxObject = {
    ...sandbox,
    metadata: {
      ...sandbox.metadata,
      ownerReferences: [{ kind: 'SandboxClaim', name: 'c1', uid: 'claim-uid', controller: true }],
    },
  };
  expect(claimPhase(claim, adopted, 'v0.5').phase).toBe('Ready');
});

test('claim without a bound Sandbox: terminal claim reasons are Failed/Finished, others (a missing pool included, case claim-before-template-ordering) Pending', () => {
  const claim = (reason: string): ClaimObject => ({
    metadata: { name: 'c', generation: 2 },
    status: { conditions: [ready('False', 2, reason)] },
  });
  expect(claimPhase(claim('AdoptionConflict'), undefined, 'v0.5')).toMatchObject({
    phase: 'Failed',
    reason: 'NotReady',
  });
  expect(claimPhase(claim('WarmPoolNotFound'), undefined, 'v0.5')).toMatchObject({
    phase: 'Pending',
    reason: 'ClaimReferenceMissing',
    missingReference: { reason: 'WarmPoolNotFound' },
  });
  expect(claimPhase(claim('ClaimExpired'), undefined, 'v0.5')).toMatchObject({ phase: 'Finished', reason: 'NotReady' });
  expect(claimPhase(claim('SandboxCreatePending'), undefined, 'v0.5')).toMatchObject({
    phase: 'Pending',
    reason: 'ClaimUnbound',
  });
  expect(claimPhase(claim('SandboxNotReady'), 'missing', 'v0.5').reason).toBe('BoundSandboxNotFound');
});

test('v0.4: replicas 0 reports Ready=True/DependenciesReady upstream, which is not trusted as running', () => {
  const sb: SandboxObject = {
    metadata: { name: 's', generation: 2 },
    spec: { replicas: 0 },
    status: { conditions: [ready('True', 2)] },
  };
  expect(sandboxPhase(sb, 'v0.4')).toMatchObject({ phase: 'Suspended', reason: 'Suspended' });
  expect(sandboxPhase({ ...sb, status: { ...sb.status, podIPs: ['127.0.0.9'] } }, 'v0.4')).toMatchObject({
    phase: 'Pending',
    reason: 'Suspending',
  });
  expect(sandboxPhase({ ...sb, spec: { replicas: 1 } }, 'v0.4')).toMatchObject({ phase: 'Ready', reason: 'Ready' });
});

test('v0.5: Suspended=True/PodTerminated is Suspended; Finished and deletion win', () => {
  const sb: SandboxObject = {
    metadata: { name: 's', generation: 3 },
    spec: { operatingMode: 'Suspended' },
    status: {
      conditions: [
        { type: 'Suspended', status: 'True', reason: 'PodTerminated', observedGeneration: 3 },
        ready('False', 3, 'SandboxSuspended'),
      ],
    },
  };
  expect(sandboxPhase(sb, 'v0.5')).toMatchObject({ phase: 'Suspended', reason: 'Suspended' });
  // prose: the message names the upstream condition reason the code stands for
  expect(sandboxPhase(sb, 'v0.5').message).toBe('Suspended=True/PodTerminated');
  const finished: SandboxObject = {
    metadata: { name: 's', generation: 1 },
    status: { conditions: [{ type: 'Finished', status: 'True', reason: 'PodFailed', observedGeneration: 1 }] },
  };
  expect(sandboxPhase(finished, 'v0.5')).toMatchObject({ phase: 'Failed', reason: 'PodFinished' });
  expect(
    sandboxPhase({ ...sb, metadata: { ...sb.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }, 'v0.5'),
  ).toMatchObject({ phase: 'Terminating', reason: 'ObjectDeleting' });
  expect(sandboxPhase({ metadata: { name: 's', generation: 1 } }, 'v0.5')).toMatchObject({
    phase: 'Pending',
    reason: 'NoReadyCondition',
  });
});
