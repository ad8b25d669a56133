/**
 * SandboxRouter options that change who may call a sandbox: scoped-token v2 (v1.0.3) is a typed prop, refused on
 * v0.5.6; options the construct does not model (path routing, cookies, TLS profile, config file) and owned flags
 * changed by an escape hatch (a JsonPatch on the Deployment) are refused at synthesis, never deployed unchecked.
 */
import { jest } from '@jest/globals';
import { JsonPatch } from 'cdk8s';
import {
  ConstructPropsError,
  RouterOptionNotModeledError,
  UnsupportedByReleaseError,
  type AgentEnvironment,
  type RouterAuthorization,
} from '../../../src/constructs/index.js';
import { routerPeerProblems } from '../../../src/constructs/router.js';
import type { ReleaseTag } from '../../../src/releases/index.js';
import { thrownBy } from '../thrown.js';
import { newEnvironment, podSpec, release } from './fixture.js';

jest.setTimeout(120_000);
const ROUTER_IMAGE = 'registry.example.internal/agent-sandbox/sandbox-router-go:v1.0.3';
const V2 = { secretName: 'router-keys' } as const;

async function env(tag: ReleaseTag = 'v1.0.3'): Promise<AgentEnvironment> {
  const e = newEnvironment(await release(tag), 'sbx', { defaultNamespace: 'sbx', install: false });
  const rc = e.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  e.addTemplate('py', { runtimeClass: rc, podSpec: podSpec() });
  return e;
}

function deploymentOf(r: { objects: ReadonlyArray<{ toJson(): any; kind: string }> }) {
  return r.objects.find((o) => o.kind === 'Deployment')!;
}

describe('SandboxRouter scoped-token v2 and unmodeled options', () => {
  test('v1.0.3: verificationKeys writes the v2 key-set file from a Secret volume; with v1 too, v1AcceptUntil is written', async () => {
    const e = await env();
    const r = e.addRouter('router', {
      image: ROUTER_IMAGE,
      authorization: { mode: 'scoped-token', verificationKeys: V2 },
      callers: [],
    });
    expect(r.scopedTokenV2).toBe(true);
    const c = deploymentOf(r).toJson().spec.template.spec.containers[0];
    expect(c.args).toContain(
      '--authz-scoped-token-verification-keys-file=/etc/sandbox-router/scoped-token-v2/keys.json',
    );
    expect(c.args).toContain('--cache-enabled=true');
    expect(c.args.some((a: string) => a.startsWith('--authz-scoped-token-secret-file'))).toBe(false);
    expect(e.check().problems).toEqual([]);

    const both = await env();
    const auth: RouterAuthorization = {
      mode: 'scoped-token',
      secretName: 'router-key',
      verificationKeys: V2,
      v1AcceptUntil: '2027-01-01T00:00:00Z',
    };
    const r2 = both.addRouter('router', { image: ROUTER_IMAGE, authorization: auth, callers: [] });
    expect(deploymentOf(r2).toJson().spec.template.spec.containers[0].args).toEqual(
      expect.arrayContaining([
        '--authz-scoped-token-secret-file=/etc/sandbox-router/scoped-token/secret',
        '--authz-scoped-token-v1-accept-until=2027-01-01T00:00:00Z',
      ]),
    );
  });

  test('props: v1 and v2 together need v1AcceptUntil; neither is refused; v2 needs the pod cache', async () => {
    const e = await env();
    const add =
      (authorization: unknown, extra: Record<string, unknown> = {}) =>
      () =>
        e.addRouter(`r${Math.random().toString(36).slice(2, 8)}`, {
          image: ROUTER_IMAGE,
          authorization: authorization as RouterAuthorization,
          callers: [],
          ...extra,
        });
    const both = thrownBy(
      add({ mode: 'scoped-token', secretName: 'k', verificationKeys: V2 }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(both.problems.map((p) => p.prop)).toEqual(['authorization.v1AcceptUntil']);
    const none = thrownBy(add({ mode: 'scoped-token' }), ConstructPropsError, 'InvalidProps');
    expect(none.problems.map((p) => p.prop)).toEqual(['authorization.secretName']);
    const noCache = thrownBy(
      add({ mode: 'scoped-token', verificationKeys: V2 }, { cache: false }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(noCache.problems.map((p) => [p.prop, p.reason])).toEqual([['cache', 'ScopedTokenV2NeedsCache']]);
  });

  test('v0.5.6: scoped-token v2 is refused with UnsupportedByRelease (its router has no such flag)', async () => {
    const e = await env('v0.5.6');
    const err = thrownBy(
      () =>
        e.addRouter('router', {
          image: ROUTER_IMAGE,
          authorization: { mode: 'scoped-token', verificationKeys: V2 },
          callers: [],
        }),
      UnsupportedByReleaseError,
      'UnsupportedByRelease',
    );
    expect([err.path, err.setting, err.release]).toEqual(['sbx/router', 'authorization.verificationKeys', 'v0.5.6']);
  });

  test.each([
    [
      'an unmodeled flag added by a JsonPatch',
      JsonPatch.add('/spec/template/spec/containers/0/args/-', '--path-routing-prefix=/s'),
      '--path-routing-prefix',
    ],
    [
      'a TLS profile flag',
      JsonPatch.add('/spec/template/spec/containers/0/args/-', '--tls-min-version=VersionTLS13'),
      '--tls-min-version',
    ],
    [
      'a second --authz-mode',
      JsonPatch.add('/spec/template/spec/containers/0/args/-', '--authz-mode=allow-all'),
      '--authz-mode',
    ],
    [
      'a config file through the environment',
      JsonPatch.add('/spec/template/spec/containers/0/env', [{ name: 'SANDBOX_ROUTER_CONFIG', value: '/c.yaml' }]),
      'SANDBOX_ROUTER_CONFIG',
    ],
  ])('escape hatch: %s is refused at synthesis (RouterOptionNotModeled)', async (_name, patch, option) => {
    const e = await env();
    const r = e.addRouter('router', { image: ROUTER_IMAGE, authorization: { mode: 'tokenreview' }, callers: [] });
    (deploymentOf(r) as unknown as { addJsonPatch(p: JsonPatch): void }).addJsonPatch(patch);
    const found = e.check().problems.filter((p) => p.reason === 'RouterOptionNotModeled');
    expect(found.map((p) => p.path)).toEqual(['sbx/router']);
    expect(found[0]!.message).toContain(option);
    expect(RouterOptionNotModeledError).toBeDefined();
  });

  test('escape hatch: removing --authz-mode (upstream default allow-all) is refused', async () => {
    const e = await env();
    const r = e.addRouter('router', { image: ROUTER_IMAGE, authorization: { mode: 'tokenreview' }, callers: [] });
    const args: string[] = deploymentOf(r).toJson().spec.template.spec.containers[0].args;
    const i = args.indexOf('--authz-mode=tokenreview');
    (deploymentOf(r) as unknown as { addJsonPatch(p: JsonPatch): void }).addJsonPatch(
      JsonPatch.remove(`/spec/template/spec/containers/0/args/${i}`),
    );
    expect(e.check().problems.map((p) => p.reason)).toContain('RouterOptionNotModeled');
  });

  test('case netpol-router-peer-mismatch at v1.0.3: the default router sits where the managed template policy admits it', async () => {
    const e = await env();
    const r = e.addRouter('router', { image: ROUTER_IMAGE, authorization: { mode: 'tokenreview' }, callers: [] });
    expect(r.namespace).toBe('agent-sandbox-system');
    expect(r.podLabels).toMatchObject({ app: 'sandbox-router', 'app.kubernetes.io/name': 'sandbox-router' });
    expect(routerPeerProblems(r)).toEqual([]);
    const moved = await env();
    const m = moved.addRouter('router', {
      image: ROUTER_IMAGE,
      authorization: { mode: 'tokenreview' },
      callers: [],
      namespace: 'default',
    });
    expect(routerPeerProblems(m).map((p) => p.reason)).toEqual(['RouterPeerMismatch']);
  });
});
