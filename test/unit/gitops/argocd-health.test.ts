/**
 * The Argo CD health Lua, executed (fengari) against the objects the real controllers wrote for each supported release
 * (test/contract/fixtures, each written by that release's controller on the test cluster) and against variants of them: not yet reconciled, failed, suspended, short of members.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import {
  ARGOCD_HEALTH_KINDS,
  ARGOCD_HEALTH_RELEASES,
  argoCdHealthCustomizations,
  argoCdHealthLua,
  argoCdHealthSnippet,
  type ArgoCdHealthKind,
} from '../../../src/index.js';
import type { ReleaseTag } from '../../../src/model/releases.js';
import { runHealth } from './lua.js';

type Obj = {
  kind: string;
  metadata: { name: string; generation?: number };
  spec?: Record<string, unknown>;
  status?: { conditions?: Array<Record<string, unknown>>; [k: string]: unknown };
};

/** The live objects of a release's contract fixture. */
function liveObjects(release: ReleaseTag): Obj[] {
  const fixture = JSON.parse(readFileSync(`test/contract/fixtures/${release}.json`, 'utf8')) as {
    objects: Array<{ live?: Obj }>;
  };
  return fixture.objects.map((o) => o.live).filter((o): o is Obj => o !== undefined && o.kind in ARGOCD_HEALTH_KINDS);
}

const health = (release: ReleaseTag, obj: Obj) =>
  runHealth(argoCdHealthLua(release, obj.kind as ArgoCdHealthKind), obj);
const copy = (o: Obj): Obj => JSON.parse(JSON.stringify(o)) as Obj;
const ready = (o: Obj) => o.status!.conditions!.find((c) => c['type'] === 'Ready')!;
const one = (objs: Obj[], kind: string, name?: string): Obj =>
  objs.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name))!;

describe.each(ARGOCD_HEALTH_RELEASES.map((r) => [r]))('Argo CD health, %s', (release) => {
  const objs = liveObjects(release);

  test('the objects the controller wrote: reconciled members Healthy, the suspended Sandbox Suspended', () => {
    expect(objs.length).toBeGreaterThanOrEqual(5);
    const seen = objs.map((o) => [o.kind, o.metadata.name, health(release, o).status]);
    for (const [kind, name, status] of seen)
      expect([kind, name, status]).toEqual([kind, name, name === 'contract-suspended' ? 'Suspended' : 'Healthy']);
    expect(new Set(seen.map(([kind]) => kind))).toEqual(new Set(Object.keys(ARGOCD_HEALTH_KINDS)));
  });

  test('an object that merely exists is Progressing, never Healthy', () => {
    for (const kind of Object.keys(ARGOCD_HEALTH_KINDS) as ArgoCdHealthKind[]) {
      const fresh = copy(one(objs, kind));
      delete fresh.status;
      expect([kind, health(release, fresh).status]).toEqual([kind, 'Progressing']);
    }
  });

  test('Sandbox: Ready of an older generation is Progressing; a current failure Degraded; not-yet Progressing', () => {
    const sandbox = one(objs, 'Sandbox', 'contract-bare');
    const stale = copy(sandbox);
    stale.metadata.generation = (stale.metadata.generation ?? 1) + 1;
    expect(health(release, stale).status).toBe('Progressing');
    const failed = copy(sandbox);
    Object.assign(ready(failed), { status: 'False', reason: 'ReconcilerError', message: 'boom' });
    // prose: the health message is what Argo CD shows the user; its reason code is part of it
    expect(health(release, failed)).toEqual({ status: 'Degraded', message: 'Ready=False (ReconcilerError): boom' });
    const starting = copy(sandbox);
    Object.assign(ready(starting), { status: 'False', reason: 'DependenciesNotReady' });
    expect(health(release, starting).status).toBe('Progressing');
    // a stale failure is not Degraded
    const staleFailure = copy(failed);
    staleFailure.metadata.generation = (staleFailure.metadata.generation ?? 1) + 1;
    expect(health(release, staleFailure).status).toBe('Progressing');
  });

  test('SandboxClaim: Degraded on a failure; generation compared only where the condition is the claim own', () => {
    const claim = one(objs, 'SandboxClaim', 'contract-claim');
    const failed = copy(claim);
    Object.assign(ready(failed), { status: 'False', reason: 'TemplateNotFound' });
    expect(health(release, failed).status).toBe('Degraded');
    const pending = copy(claim);
    Object.assign(ready(pending), { status: 'False', reason: 'SandboxNotReady' });
    expect(health(release, pending).status).toBe('Progressing');
    const newer = copy(claim);
    newer.metadata.generation = (newer.metadata.generation ?? 1) + 1;
    // up to v0.5.6 the claim's Ready is the Sandbox's copy: its observedGeneration is the Sandbox's generation
    expect(health(release, newer).status).toBe(release === 'v1.0.3' ? 'Progressing' : 'Healthy');
  });

  test('SandboxWarmPool: ready against desired members, gated on observedGeneration where the release has it', () => {
    const pool = one(objs, 'SandboxWarmPool');
    const short = copy(pool);
    short.spec = { ...short.spec, replicas: 2 };
    // prose: the health message is what Argo CD shows the user; the counts are the subject
    expect(health(release, short)).toMatchObject({ status: 'Progressing', message: '1 of 2 members Ready' });
    const none = copy(pool);
    delete none.status!['readyReplicas']; // zero counters are omitted
    expect(health(release, none).status).toBe('Progressing');
    const scaledToZero = copy(none);
    scaledToZero.spec = { ...scaledToZero.spec, replicas: 0 };
    expect(health(release, scaledToZero).status).toBe('Healthy');
    const newer = copy(pool);
    newer.metadata.generation = (newer.metadata.generation ?? 1) + 1;
    const gated = release === 'v0.5.6' || release === 'v1.0.3';
    expect(pool.status!['observedGeneration'] !== undefined).toBe(gated);
    expect(health(release, newer).status).toBe(gated ? 'Progressing' : 'Healthy');
  });

  test('the argocd-cm snippet holds one script per kind under resource.customizations.health.<group>_<kind>', () => {
    const cm = parse(argoCdHealthSnippet(release)) as { metadata: unknown; data: Record<string, string> };
    expect(cm.metadata).toEqual({ name: 'argocd-cm', namespace: 'argocd' });
    expect(Object.keys(cm.data).sort()).toEqual([
      'resource.customizations.health.agents.x-k8s.io_Sandbox',
      'resource.customizations.health.extensions.agents.x-k8s.io_SandboxClaim',
      'resource.customizations.health.extensions.agents.x-k8s.io_SandboxWarmPool',
    ]);
    expect(cm.data).toEqual(argoCdHealthCustomizations(release));
  });
});
