/**
 * Case 08 (verifier side): the verifier exercises conversion and reports a CA/TLS mismatch as its own failure, while a
 * webhook the controller has not yet patched (no caBundle) stays below configured. The real round trip (v1alpha1 GET
 * of a v1beta1 Sandbox through the loopback webhook) is in test/cluster/verify/verify-runtime.test.ts.
 */
import { conversionEvidence, viewCrd } from '../../src/verify/probes/install.js';
import { Facts } from '../../src/verify/probes/common.js';
import { conversionReadEvidence } from '../../src/verify/probes/workload/conversion.js';
import { settle } from '../../src/verify/states.js';

const KINDS = ['Sandbox', 'SandboxClaim', 'SandboxTemplate', 'SandboxWarmPool'] as const;
const crd = (caBundle?: string) => viewCrd({
  metadata: { name: 'x' },
  spec: {
    versions: [{ name: 'v1beta1', served: true, storage: true }, { name: 'v1alpha1', served: true }],
    conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1', 'v1beta1'], clientConfig: { service: { name: 'agent-sandbox-webhook-service', namespace: 'agent-sandbox-system', path: '/convert' }, ...(caBundle ? { caBundle } : {}) } } },
  },
} as never);

describe('case 08 conversion-cabundle-drift (verifier)', () => {
  test('the desired (synthesized) CRD without caBundle: compatible, configured missing with the reason', () => {
    const s = settle(conversionEvidence('v0.5', 'v0.5.6', new Map(KINDS.map((k) => [k, crd()]))));
    expect(s.state).toBe('compatible');
    expect(s.next).toContain('has no caBundle');
  });

  test('live CRD with the controller-written caBundle and a working round trip: verified', () => {
    const ev = conversionEvidence('v0.5', 'v0.5.6', new Map(KINDS.map((k) => [k, crd('LS0tLS1CRUdJTi')])));
    const f = new Facts('conversion');
    conversionReadEvidence(f, 'Sandbox sbx/s', { kind: 'ok', value: { apiVersion: 'agents.x-k8s.io/v1alpha1' } });
    expect(settle([...ev, ...f.list])).toEqual({ state: 'verified', next: null });
  });

  test('caBundle present but the webhook TLS fails: conversion is failed, reported as a CA/TLS mismatch', () => {
    const ev = conversionEvidence('v0.5', 'v0.5.6', new Map(KINDS.map((k) => [k, crd('LS0tLS1CRUdJTi')])));
    const f = new Facts('conversion');
    conversionReadEvidence(f, 'Sandbox sbx/s', {
      kind: 'failed',
      error: { category: 'internal', code: 500, message: 'conversion webhook for agents.x-k8s.io/v1beta1, Kind=Sandbox failed: Post "https://agent-sandbox-webhook-service.agent-sandbox-system.svc:443/convert": tls: failed to verify certificate: x509: certificate signed by unknown authority' },
    });
    const s = settle([...ev, ...f.list]);
    expect(s.state).toBe('failed');
    expect(s.next).toMatch(/^conversion webhook TLS failure although the CRDs carry a caBundle \(CA\/serving certificate mismatch\): .*x509: certificate signed by unknown authority$/);
  });

  test('a non-TLS failure of the round trip (e.g. 403) proves nothing either way: stays configured', () => {
    const ev = conversionEvidence('v0.5', 'v0.5.6', new Map(KINDS.map((k) => [k, crd('LS0t')])));
    const f = new Facts('conversion');
    conversionReadEvidence(f, 'Sandbox sbx/s', { kind: 'failed', error: { category: 'forbidden', code: 403, message: 'forbidden: user "v" may not get sandboxes.agents.x-k8s.io' } });
    expect(settle([...ev, ...f.list]).state).toBe('configured');
  });
});
