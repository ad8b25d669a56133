/**
 * Case claim-before-template-ordering (verifier side): a claim at Ready=False/TemplateNotFound or WarmPoolNotFound is
 * not terminal (the reference may be applied a moment later) but it is not left to wait forever either: the adapter
 * judges it Pending with the condition's age, and after the grace the verifier says how long it has held, whether the
 * referenced object exists and what to do, keeping every capability the probe covers below `verified`.
 *
 * The claim is the real v0.5.6 claim from the contract fixture (written by the real controller), unbound, with the Ready
 * condition the claim controller writes when the pool's template is absent
 * (`extensions/controllers/sandboxclaim_controller.go@v0.5.6`; no fixture holds that state).
 */
import { claimPhase, type ClaimObject } from '../../src/adapter/kubernetes/phase.js';
import type { CapabilityName } from '../../src/adapter/types.js';
import {
  CLAIM_REFERENCE_GRACE_MS,
  referencedKind,
  stuckClaimMessage,
  stuckClaimReason,
  type ReferencedObject,
} from '../../src/verify/probes/claim-reference.js';
import { Facts } from '../../src/verify/probes/common.js';
import type { ReadinessReason } from '../../src/verify/reasons.js';
import { settle } from '../../src/verify/states.js';
import { readFixture } from '../contract/contract-suite.js';

const live = readFixture('v0.5.6').objects.find((o) => o.name === 'claim')!.live as unknown as ClaimObject & {
  metadata: { name: string; namespace: string; generation: number };
  spec: { warmPoolRef: { name: string } };
};
const SINCE = '2026-11-29T12:30:25Z';

/** The fixture claim, unbound, at Ready=False/`reason` since {@link SINCE}, at its current generation. */
function stuckClaim(reason: string, lastTransitionTime: string | null = SINCE): ClaimObject {
  const { sandbox: _bound, ...status } = live.status as { sandbox?: unknown; conditions?: unknown };
  return {
    ...live,
    status: {
      ...status,
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason,
          message: `${reason === 'TemplateNotFound' ? 'SandboxTemplate' : 'SandboxWarmPool'} not found`,
          observedGeneration: live.metadata.generation,
          ...(lastTransitionTime ? { lastTransitionTime } : {}),
        },
      ],
    },
  };
}

const at = (seconds: number) => new Date(Date.parse(SINCE) + seconds * 1000);
const ns = live.metadata.namespace;
const claimName = live.metadata.name;
const pool = live.spec.warmPoolRef.name;

/** Evidence the workload probe records for one covered capability when its claim is not ready (configured proven, verified blocked). */
function evidenceFor(capability: CapabilityName, reason: ReadinessReason, why: string) {
  const f = new Facts(capability);
  f.proven('discovered', 't', 'RuntimeDeclared', 'declared')
    .proven('compatible', 't', 'RuntimeSpoken', 'spoken')
    .proven('configured', 't', 'TransportReachesRuntime', 'configured');
  f.add('verified', 'unknown', `probe for ${ns}/${pool}`, reason, why);
  return f.list;
}

describe('case claim-before-template-ordering (verifier)', () => {
  test('the grace is 60 s', () => {
    expect(CLAIM_REFERENCE_GRACE_MS).toBe(60_000);
  });

  test('TemplateNotFound and WarmPoolNotFound on an unbound claim are Pending with the condition age, not Failed', () => {
    const t = claimPhase(stuckClaim('TemplateNotFound'), undefined, 'v0.5', at(75));
    // prose: the controller's condition message (upstream words) is carried through as it was sent
    expect(t).toEqual({
      phase: 'Pending',
      reason: 'ClaimReferenceMissing',
      message: 'claim Ready=False/TemplateNotFound for 75s: SandboxTemplate not found',
      observedGeneration: 2,
      missingReference: { reason: 'TemplateNotFound', ageMs: 75_000, message: 'SandboxTemplate not found' },
    });
    const w = claimPhase(stuckClaim('WarmPoolNotFound'), undefined, 'v0.5', at(3));
    expect(w).toMatchObject({ phase: 'Pending', reason: 'ClaimReferenceMissing' });
    // prose: the message carries the condition's age, which the code does not
    expect(w.message).toBe('claim Ready=False/WarmPoolNotFound for 3s: SandboxWarmPool not found');
    expect(w.missingReference?.ageMs).toBe(3000);
    // no lastTransitionTime: no age, still Pending
    const n = claimPhase(stuckClaim('TemplateNotFound', null), undefined, 'v0.5', at(75));
    // prose: without a lastTransitionTime the message gives no age
    expect(n.message).toBe('claim Ready=False/TemplateNotFound: SandboxTemplate not found');
    // prose: the controller's condition message (upstream words) is carried through as it was sent
    expect(n.missingReference).toEqual({ reason: 'TemplateNotFound', message: 'SandboxTemplate not found' });
    // a really terminal reason stays Failed and carries no missingReference
    const f = claimPhase(stuckClaim('InvalidMetadata'), undefined, 'v0.5', at(75));
    expect(f).toMatchObject({ phase: 'Failed', reason: 'NotReady' });
    expect(f.missingReference).toBeUndefined();
  });

  test('the condition at an older generation is not trusted as a missing reference', () => {
    const c = stuckClaim('TemplateNotFound');
    const older: ClaimObject = { ...c, metadata: { ...c.metadata, generation: live.metadata.generation + 1 } };
    const p = claimPhase(older, undefined, 'v0.5', at(75));
    expect(p).toMatchObject({ phase: 'Pending', reason: 'ClaimUnbound' });
    expect(p.missingReference).toBeUndefined();
    // prose: the message says why the condition was not trusted (an older generation)
    expect(p.message).toContain('reconcile pending');
  });

  test('template exists: the reason says the controller has not re-reconciled; the message gives the age and object', () => {
    const held = claimPhase(stuckClaim('TemplateNotFound'), undefined, 'v0.5', at(75)).missingReference!;
    expect(referencedKind(held.reason)).toBe('SandboxTemplate');
    const target: ReferencedObject = { kind: 'SandboxTemplate', namespace: ns, name: 'contract', exists: true };
    const reason = stuckClaimReason(target);
    expect(reason).toBe('ClaimNotReReconciled');
    const msg = stuckClaimMessage(ns, claimName, held, target);
    // Values the reader acts on, not wording: the claim, the condition's age and the object it names.
    for (const value of [`${ns}/${claimName}`, 'TemplateNotFound for 75s', `SandboxTemplate ${ns}/contract`])
      expect(msg).toContain(value);
    for (const cap of ['runtime-exec', 'extensions-api', `warm-pool/${ns}/${pool}`] as CapabilityName[]) {
      expect(settle(evidenceFor(cap, reason, msg))).toMatchObject({
        state: 'configured',
        nextReason: 'ClaimNotReReconciled',
      });
    }
  });

  test('pool missing: the reason says it does not exist', () => {
    const held = claimPhase(stuckClaim('WarmPoolNotFound'), undefined, 'v0.5', at(61)).missingReference!;
    expect(referencedKind(held.reason)).toBe('SandboxWarmPool');
    const target: ReferencedObject = { kind: 'SandboxWarmPool', namespace: ns, name: pool, exists: false };
    const reason = stuckClaimReason(target);
    expect(reason).toBe('ClaimReferenceMissing');
    const msg = stuckClaimMessage(ns, claimName, held, target);
    for (const value of ['WarmPoolNotFound for 61s', `SandboxWarmPool ${ns}/${pool}`]) expect(msg).toContain(value);
    expect(settle(evidenceFor('runtime-exec', reason, msg))).toMatchObject({
      state: 'configured',
      nextReason: 'ClaimReferenceMissing',
    });
  });

  test('a failed read of the referenced object is reported as unknown, not as missing or existing', () => {
    const held = claimPhase(stuckClaim('TemplateNotFound'), undefined, 'v0.5', at(90)).missingReference!;
    const target: ReferencedObject = {
      kind: 'SandboxTemplate',
      namespace: ns,
      name: 'contract',
      exists: { unknown: 'forbidden: 403' },
    };
    expect(stuckClaimReason(target)).toBe('ClaimReferenceUnreadable');
    expect(stuckClaimMessage(ns, claimName, held, target)).toContain('forbidden: 403');
  });
});
