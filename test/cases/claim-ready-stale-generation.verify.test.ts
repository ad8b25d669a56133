/**
 * Case claim-ready-stale-generation (verifier side): a claim's Ready condition copied from an older generation, or a
 * Ready Sandbox not yet adopted by the claim, never counts as ready. The verifier judges a claim through the adapter's
 * `claimPhase` (bound Sandbox, its own generation, controller-owned by the claim) and keeps execution below `verified`
 * with the reason. The end-to-end claim path on the real controller is in test/cluster/verify/verify-runtime.test.ts.
 */
import { claimPhase, type ClaimObject, type SandboxObject } from '../../src/adapter/kubernetes/phase.js';
import { Facts } from '../../src/verify/probes/common.js';
import { settle } from '../../src/verify/states.js';

const claim: ClaimObject = {
  metadata: { name: 'c1', generation: 3, uid: 'claim-uid' },
  status: {
    sandbox: { name: 'py-pool-k2x9q' },
    conditions: [{ type: 'Ready', status: 'True', reason: 'DependenciesReady', observedGeneration: 2 }],
  },
};

/** Evidence the workload probe records for `runtime-exec` when the probe object is not ready (configured proven, verified blocked). */
function evidenceFor(why: string) {
  const f = new Facts('runtime-exec');
  f.proven('discovered', 't', 'RuntimeDeclared', 'runtime declared')
    .proven('compatible', 't', 'RuntimeSpoken', 'runtime spoken')
    .proven('configured', 't', 'TransportReachesRuntime', 'transport fits');
  f.add('verified', 'unknown', 'Sandbox sbx/py-pool-k2x9q', 'ProbeNotReadyInTime', why);
  return f.list;
}

describe('case claim-ready-stale-generation (verifier)', () => {
  test('a Ready=True condition written for an older Sandbox generation is unknown: reconcile pending, not ready', () => {
    const sandbox: SandboxObject = {
      metadata: {
        name: 'py-pool-k2x9q',
        generation: 4,
        uid: 's',
        ownerReferences: [{ kind: 'SandboxClaim', name: 'c1', uid: 'claim-uid', controller: true }],
      },
      spec: { operatingMode: 'Suspended' },
      status: { conditions: [{ type: 'Ready', status: 'True', reason: 'DependenciesReady', observedGeneration: 2 }] },
    };
    const p = claimPhase(claim, sandbox, 'v0.5');
    expect(p).toMatchObject({ phase: 'Unknown', reason: 'ConditionsStale' });
    // prose: the message names both generations, which the code does not
    expect(p.message).toBe(
      'bound Sandbox py-pool-k2x9q: Sandbox py-pool-k2x9q: spec.operatingMode is Suspended; Ready condition is for generation 2, object is at generation 4: reconcile pending',
    );
    expect(settle(evidenceFor(p.message))).toMatchObject({ state: 'configured', nextReason: 'ProbeNotReadyInTime' });
  });

  test('a stale Ready on a running Sandbox is reported as reconcile pending', () => {
    const sandbox: SandboxObject = {
      metadata: {
        name: 'py-pool-k2x9q',
        generation: 4,
        uid: 's',
        ownerReferences: [{ kind: 'SandboxClaim', name: 'c1', uid: 'claim-uid', controller: true }],
      },
      status: { conditions: [{ type: 'Ready', status: 'True', reason: 'DependenciesReady', observedGeneration: 2 }] },
    };
    const p = claimPhase(claim, sandbox, 'v0.5');
    expect(p).toMatchObject({ phase: 'Unknown', reason: 'ReadyUnknown' });
    // prose: the message names both generations, which the code does not
    expect(p.message).toBe(
      'bound Sandbox py-pool-k2x9q: Sandbox py-pool-k2x9q: Ready condition is for generation 2, object is at generation 4: reconcile pending',
    );
  });

  test('variant B: Sandbox Ready at its generation but still owned by the pool: adoption incomplete, stays configured', () => {
    const sandbox: SandboxObject = {
      metadata: {
        name: 'py-pool-k2x9q',
        generation: 1,
        uid: 's',
        ownerReferences: [{ kind: 'SandboxWarmPool', name: 'py-pool', uid: 'pool-uid', controller: true }],
      },
      status: { conditions: [{ type: 'Ready', status: 'True', reason: 'DependenciesReady', observedGeneration: 1 }] },
    };
    const claimB: ClaimObject = {
      ...claim,
      status: {
        sandbox: { name: 'py-pool-k2x9q' },
        conditions: [{ type: 'Ready', status: 'False', reason: 'SandboxNotReady', observedGeneration: 3 }],
      },
    };
    const p = claimPhase(claimB, sandbox, 'v0.5');
    expect(p).toMatchObject({ phase: 'Pending', reason: 'AdoptionIncomplete' });
    expect(settle(evidenceFor(`claim c1 not ready within 2m: ${p.message}`))).toMatchObject({
      state: 'configured',
      nextReason: 'ProbeNotReadyInTime',
    });
  });
});
