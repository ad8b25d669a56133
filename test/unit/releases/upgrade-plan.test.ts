/**
 * Schema diff and upgrade classification over the three pinned releases (mirror, sha256-verified): the changes listed
 * in FACTS.md §2 appear field by field, and each jump gets the verdict its storage story calls for.
 */
import { convertedPoolName, crdObject, diffCrdSchemas, loadRelease, planUpgrade, type LoadedRelease } from '../../../src/releases/index.js';

let r046: LoadedRelease;
let r050: LoadedRelease;
let r056: LoadedRelease;
beforeAll(async () => {
  [r046, r050, r056] = await Promise.all([loadRelease('v0.4.6'), loadRelease('v0.5.0'), loadRelease('v0.5.6')]);
});

describe('diffCrdSchemas between pinned releases (FACTS.md §2)', () => {
  it('v0.5.0 -> v0.5.6 SandboxWarmPool: replicas gains default 1 and is no longer required; observedGeneration and Desired column added', () => {
    const summaries = diffCrdSchemas(crdObject(r050, 'SandboxWarmPool'), crdObject(r056, 'SandboxWarmPool')).map((c) => c.summary);
    expect(summaries).toEqual(expect.arrayContaining([
      'SandboxWarmPool v1beta1 spec.replicas: default none -> 1',
      'SandboxWarmPool v1beta1 spec.replicas: no longer required',
      'SandboxWarmPool v1beta1 status.observedGeneration added (integer/int64)',
      'SandboxWarmPool v1beta1: printer column Desired (.spec.replicas) added',
    ]));
  });

  it('v0.4.6 -> v0.5.0 SandboxClaim: v1beta1 added as storage, sandboxTemplateRef renamed to warmPoolRef across the storage move', () => {
    const changes = diffCrdSchemas(crdObject(r046, 'SandboxClaim'), crdObject(r050, 'SandboxClaim'));
    expect(changes.map((c) => c.change)).toEqual(expect.arrayContaining(['conversion-changed', 'version-added', 'storage-changed', 'deprecated-changed', 'field-renamed']));
    expect(changes.find((c) => c.change === 'field-renamed')).toMatchObject({ version: 'v1alpha1 -> v1beta1', before: 'spec.sandboxTemplateRef', after: 'spec.warmPoolRef' });
  });

  it('v0.5.0 -> v0.5.6 Sandbox: workloadRef removed, schedulingGroup added, the volumeClaimTemplates CEL rule added', () => {
    const changes = diffCrdSchemas(crdObject(r050, 'Sandbox'), crdObject(r056, 'Sandbox')).filter((c) => c.version === 'v1beta1');
    expect(changes.filter((c) => c.path.startsWith('spec')).map((c) => `${c.change} ${c.path}`)).toEqual([
      'field-removed spec.podTemplate.spec.workloadRef',
      'field-added spec.podTemplate.spec.schedulingGroup',
      'validation-changed spec',
    ]);
  });

  it('the same CRD gives no changes', () => {
    expect(diffCrdSchemas(crdObject(r056, 'Sandbox'), crdObject(r056, 'Sandbox'))).toEqual([]);
  });
});

describe('planUpgrade', () => {
  it('v0.5.0 -> v0.5.6 without a cluster is safe (storage stays v1beta1); known defects of v0.5.6 are listed', () => {
    const plan = planUpgrade(r050, r056);
    expect(plan.verdict).toBe('safe');
    expect(plan.storedVersionsSource).toMatch(/^assumed/);
    expect(plan.findings.filter((f) => f.topic === 'defect').map((f) => f.source)).toContain('cmd/agent-sandbox-controller/tls.go@v0.5.6');
    expect(plan.findings.find((f) => f.message.includes('spec.replicas: default none -> 1'))?.operations).toEqual(['createFromTemplate', 'capabilities']);
    expect(plan.findings.find((f) => f.topic === 'conditions' && f.message.startsWith('new condition Sandbox/PodScheduled'))?.operations).toEqual(['observe']);
  });

  it('v0.4.6 -> v0.5.6 needs migration: storage moves v1alpha1 -> v1beta1, conversion renames fields', () => {
    const plan = planUpgrade(r046, r056);
    expect(plan.verdict).toBe('needs-migration');
    expect(plan.findings.filter((f) => f.topic === 'storage').map((f) => f.message)).toContain('SandboxClaim: storage version v1alpha1 -> v1beta1; existing objects stay stored as v1alpha1 until rewritten');
    expect(plan.path).toEqual([
      'from v0.4.x upstream advises running migrate.sh --phase=bootstrap and going straight to >= v0.5.2',
      'update manifests and clients that use the renamed, removed or retyped fields listed below',
      'install v0.5.6',
      'migrate storage: rewrite every Sandbox, SandboxClaim, SandboxTemplate, SandboxWarmPool object (a no-op update) so it is stored as v1beta1',
      'prune status.storedVersions of the Sandbox, SandboxClaim, SandboxTemplate, SandboxWarmPool CRD(s) to [v1beta1]',
    ]);
  });

  it('v0.5.6 -> v0.4.6 is blocked: v1beta1 is stored and v0.4.6 does not serve it; no supported path', () => {
    const plan = planUpgrade(r056, r046, undefined, [r050]);
    expect(plan.verdict).toBe('blocked');
    expect(plan.findings.find((f) => f.severity === 'block')?.message).toBe('Sandbox: objects are stored as v1beta1, which v0.4.6 does not serve (it serves v1alpha1)');
    expect(plan.path[0]).toMatch(/^no supported release/);
  });

  it('with live state: storedVersions [v1alpha1, v1beta1] on v0.5.0 -> v0.5.6 asks for a storage migration and a prune', () => {
    const plan = planUpgrade(r050, r056, { source: 'context test', storedVersions: { Sandbox: ['v1alpha1', 'v1beta1'], SandboxClaim: ['v1beta1'] } });
    expect(plan.verdict).toBe('needs-migration');
    expect(plan.storedVersionsSource).toBe('live (context test)');
    expect(plan.findings.map((f) => f.message)).toContain('Sandbox: status.storedVersions is [v1alpha1, v1beta1]; after the upgrade rewrite every object and prune storedVersions to [v1beta1]');
    expect(plan.path).toEqual(['install v0.5.6', 'migrate storage: rewrite every Sandbox object (a no-op update) so it is stored as v1beta1', 'prune status.storedVersions of the Sandbox CRD(s) to [v1beta1]']);
  });

  it('with live v1alpha1 claims: a cold claim converts to shadow-pool-<template>, which must exist', () => {
    const claims = [
      { namespace: 'agents', name: 'cold', template: 'python', sandboxName: 'cold' },
      { namespace: 'agents', name: 'warm', template: 'python', sandboxName: 'pool-a-x7k2p' },
      { namespace: 'agents', name: 'named', template: 'python', warmpool: 'fast' },
    ];
    expect(claims.map(convertedPoolName)).toEqual(['shadow-pool-python', 'pool-a', 'fast']);
    const plan = planUpgrade(r046, r056, { source: 'ctx', storedVersions: { SandboxClaim: ['v1alpha1'] }, claims, pools: ['agents/pool-a', 'agents/fast'] });
    expect(plan.findings.filter((f) => f.topic === 'live' && f.message.startsWith('claim')).map((f) => f.message)).toEqual([
      'claim agents/cold converts to warmPoolRef shadow-pool-python, which does not exist: it would sit at Ready=False/WarmPoolNotFound',
    ]);
  });
});
