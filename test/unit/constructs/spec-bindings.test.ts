/**
 * The specs constructs write are typed by the generated bindings in imports/ (src/constructs/bindings.ts). The
 * `@ts-expect-error` lines are the compile-time half: each is a spec a construct must not be able to write, and
 * `npm run typecheck` fails if one of them stops being an error. The runtime half checks that each family is typed by
 * the bindings of the API version the constructs write on it.
 */
import * as ext046 from '../../../imports/v046-extensions.agents.x-k8s.io.js';
import * as ext056 from '../../../imports/v056-extensions.agents.x-k8s.io.js';
import type { SharedSpecOf, SpecOf } from '../../../src/constructs/bindings.js';
import { RELEASE_TAGS } from '../../../src/model/releases.js';
import { newEnvironment, podSpec, release } from './fixture.js';

const POD = { metadata: { labels: { a: 'b' } }, spec: { containers: [] } };
type Claim05 = SpecOf<'v0.5', 'SandboxClaim'>;
type Claim04 = SpecOf<'v0.4', 'SandboxClaim'>;
type Pool05 = SpecOf<'v0.5', 'SandboxWarmPool'>;
type Pool = SharedSpecOf<'SandboxWarmPool'>;
type Template = SharedSpecOf<'SandboxTemplate'>;

/** Specs that type-check: what the constructs write. */
const written = [
  {
    warmPoolRef: { name: 'p' },
    lifecycle: { shutdownPolicy: 'Delete', shutdownTime: '2026-12-31T00:00:00Z' },
  } satisfies Claim05,
  { sandboxTemplateRef: { name: 't' }, warmpool: 'p', lifecycle: { ttlSecondsAfterFinished: 0 } } satisfies Claim04,
  { replicas: 1, sandboxTemplateRef: { name: 't' }, updateStrategy: { type: 'Recreate' } } satisfies Pool,
  { podTemplate: POD, envVarsInjectionPolicy: 'Disallowed', networkPolicyManagement: 'Unmanaged' } satisfies Template,
];

/** Specs that must not type-check, each with the reason. */
const refused = [
  // @ts-expect-error a v0.5 (v1beta1) claim names a pool, not a template
  { sandboxTemplateRef: { name: 't' }, warmPoolRef: { name: 'p' } } satisfies Claim05,
  // @ts-expect-error a v0.4 (v1alpha1) claim has no warmPoolRef
  { sandboxTemplateRef: { name: 't' }, warmPoolRef: { name: 'p' } } satisfies Claim04,
  // @ts-expect-error `Orphan` is not a shutdownPolicy upstream knows
  { warmPoolRef: { name: 'p' }, lifecycle: { shutdownPolicy: 'Orphan' } } satisfies Claim05,
  // @ts-expect-error a date-time is written as its RFC 3339 string
  { warmPoolRef: { name: 'p' }, lifecycle: { shutdownTime: new Date(0) } } satisfies Claim05,
  // @ts-expect-error v0.5.0 requires a pool's replicas, so the v0.5 shape does too
  { sandboxTemplateRef: { name: 't' } } satisfies Pool05,
  // @ts-expect-error `Rolling` is not an update strategy
  { replicas: 1, sandboxTemplateRef: { name: 't' }, updateStrategy: { type: 'Rolling' } } satisfies Pool,
  // @ts-expect-error volumeClaimTemplatesPolicy is v1beta1-only, so not a field every family writes
  { podTemplate: POD, volumeClaimTemplatesPolicy: 'Allowed' } satisfies Template,
  // @ts-expect-error misspelt field
  { podTemplate: POD, networkPolicyManagment: 'Managed' } satisfies Template,
];

test('the typed specs are plain JSON objects (nothing of the bindings runs)', () => {
  expect(JSON.parse(JSON.stringify(written))).toEqual(written);
  expect(refused).toHaveLength(8);
});

const BINDINGS = {
  'v0.4': {
    SandboxTemplate: ext046.SandboxTemplate,
    SandboxWarmPool: ext046.SandboxWarmPool,
    SandboxClaim: ext046.SandboxClaim,
  },
  'v0.5': {
    SandboxTemplate: ext056.SandboxTemplate,
    SandboxWarmPool: ext056.SandboxWarmPool,
    SandboxClaim: ext056.SandboxClaim,
  },
  // v1.0.3's v1beta1 specs are v0.5.6's (src/constructs/bindings.ts)
  'v1.0': {
    SandboxTemplate: ext056.SandboxTemplate,
    SandboxWarmPool: ext056.SandboxWarmPool,
    SandboxClaim: ext056.SandboxClaim,
  },
} as const;

test.each(RELEASE_TAGS)(
  '%s: template, pool and claim are written at the API version of the bindings that type them',
  async (tag) => {
    const rel = await release(tag);
    const e = newEnvironment(rel, 'env');
    const rc = e.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    const template = e.addTemplate('py', { runtimeClass: rc, podSpec: podSpec() });
    const pool = e.addWarmPool('pool', { template });
    const claim = e.addClaim('c', { pool, lifecycle: { ttlSecondsAfterFinished: 60 } });
    const bindings = BINDINGS[rel.facts.family];
    const written = [template, pool, claim].map((c) => {
      const json = c.apiObject.toJson() as { apiVersion: string; kind: string };
      return { apiVersion: json.apiVersion, kind: json.kind };
    });
    expect(written).toEqual([bindings.SandboxTemplate.GVK, bindings.SandboxWarmPool.GVK, bindings.SandboxClaim.GVK]);
  },
);
