/**
 * Case conversion-cabundle-drift (verifier side): the verifier exercises conversion and reports a CA/TLS mismatch as
 * its own failure, while a webhook the controller has not yet patched (no caBundle) stays below configured. The real
 * round trip (v1alpha1 GET of a v1beta1 Sandbox through the loopback webhook) is in
 * test/cluster/verify/verify-runtime.test.ts.
 */
import * as k8s from '@kubernetes/client-node';
import { classifyKubeError } from '../../src/adapter/kubernetes/errors.js';
import { crdView } from '../../src/adapter/kubernetes/views.js';
import { conversionEvidence } from '../../src/verify/probes/install.js';
import { Facts } from '../../src/verify/probes/common.js';
import { conversionReadEvidence } from '../../src/verify/probes/workload/conversion.js';
import { settle } from '../../src/verify/states.js';

const KINDS = ['Sandbox', 'SandboxClaim', 'SandboxTemplate', 'SandboxWarmPool'] as const;
const crd = (caBundle?: string) =>
  crdView({
    metadata: { name: 'x' },
    spec: {
      versions: [
        { name: 'v1beta1', served: true, storage: true },
        { name: 'v1alpha1', served: true },
      ],
      conversion: {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1', 'v1beta1'],
          clientConfig: {
            service: { name: 'agent-sandbox-webhook-service', namespace: 'agent-sandbox-system', path: '/convert' },
            ...(caBundle ? { caBundle } : {}),
          },
        },
      },
    },
  } as never);

describe('case conversion-cabundle-drift (verifier)', () => {
  test('the desired (synthesized) CRD without caBundle: compatible, configured missing with the reason', () => {
    const ev = conversionEvidence('v0.5', 'v0.5.6', new Map(KINDS.map((k) => [k, crd()])));
    const s = settle(ev);
    expect(s.state).toBe('compatible');
    const blocking = ev.filter((e) => e.verdict !== 'proven');
    expect(blocking.map((e) => [e.step, e.reason])).toEqual(KINDS.map(() => ['configured', 'NoCaBundle']));
  });

  test('live CRD with the controller-written caBundle and a working round trip: verified', () => {
    const ev = conversionEvidence('v0.5', 'v0.5.6', new Map(KINDS.map((k) => [k, crd('LS0tLS1CRUdJTi')])));
    const f = new Facts('conversion');
    conversionReadEvidence(f, 'Sandbox sbx/s', { kind: 'ok', value: { apiVersion: 'agents.x-k8s.io/v1alpha1' } });
    expect(settle([...ev, ...f.list])).toEqual({ state: 'verified', next: null, nextReason: null });
  });

  test('caBundle present but the webhook TLS fails: conversion is failed, reported as a CA/TLS mismatch', () => {
    const ev = conversionEvidence('v0.5', 'v0.5.6', new Map(KINDS.map((k) => [k, crd('LS0tLS1CRUdJTi')])));
    const f = new Facts('conversion');
    // The API server's answer to a v1alpha1 GET whose conversion webhook fails TLS, classified by the adapter.
    const cause =
      'conversion webhook for agents.x-k8s.io/v1beta1, Kind=Sandbox failed: Post "https://agent-sandbox-webhook-service.agent-sandbox-system.svc:443/convert": tls: failed to verify certificate: x509: certificate signed by unknown authority';
    const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: cause, code: 500 });
    const error = classifyKubeError(new k8s.ApiException(500, 'HTTP-Code: 500', body, {}), {
      verb: 'get',
      resource: 'sandboxes.agents.x-k8s.io',
      context: 'test',
      user: 'verifier',
    });
    expect(error).toMatchObject({ category: 'internal', code: 500, tls: true });
    conversionReadEvidence(f, 'Sandbox sbx/s', { kind: 'failed', error });
    const s = settle([...ev, ...f.list]);
    expect(s.state).toBe('failed');
    const contradicted = f.list.filter((e) => e.verdict === 'contradicted');
    expect(contradicted.map((e) => [e.reason, e.cause])).toEqual([['ConversionTlsFailure', 'internal']]);
  });

  test('a non-TLS failure of the round trip (e.g. 403) proves nothing either way: stays configured', () => {
    const ev = conversionEvidence('v0.5', 'v0.5.6', new Map(KINDS.map((k) => [k, crd('LS0t')])));
    const f = new Facts('conversion');
    conversionReadEvidence(f, 'Sandbox sbx/s', {
      kind: 'failed',
      error: { category: 'forbidden', code: 403, message: 'forbidden: user "v" may not get sandboxes.agents.x-k8s.io' },
    });
    expect(settle([...ev, ...f.list]).state).toBe('configured');
    expect(f.list.map((e) => [e.verdict, e.reason, e.cause])).toEqual([
      ['unknown', 'ConversionReadFailed', 'forbidden'],
    ]);
  });
});
