import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { jest } from '@jest/globals';
import {
  ConstructError,
  ConstructPropsError,
  descriptorPartCount,
  DESCRIPTOR_MOUNT,
  podTemplateHash,
  UnpinnedImageError,
  VerifierDeliveryError,
} from '../../../src/constructs/index.js';
import { DescriptorPartsError } from '../../../src/constructs/descriptor.js';
import { descriptorConfigMaps } from '../../../src/constructs/descriptor-parts.js';
import { childProblems } from '../../../src/constructs/problems.js';
import { readDescriptorDir, reportRefOfEnvironment } from '../../../src/cli/in-cluster.js';
import { EnvironmentDescriptorError } from '../../../src/verify/index.js';
import { newEnvironment, podSpec, release } from './fixture.js';
import { thrownBy } from '../thrown.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

const VERIFIER = 'registry.example.internal/agentplane/verifier:0.1.0';
const ROUTER_IMAGE = 'registry.example.internal/agent-sandbox/sandbox-router-go:v0.5.6';

type Obj = {
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  spec?: any;
  rules?: any[];
  subjects?: any[];
  roleRef?: any;
};

async function synthesized(build?: (e: ReturnType<typeof newEnvironment>) => void): Promise<Obj[]> {
  const e = newEnvironment(await release('v0.5.6'), 'env', { defaultNamespace: 'sbx' });
  const rc = e.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  e.addTemplate('py', { runtimeClass: rc, podSpec: podSpec(), namespace: 'team-a' });
  if (build) build(e);
  else e.addVerifierJob('verify', { image: VERIFIER });
  return e.toJson() as Obj[];
}

/** Every rule bound to the verifier's ServiceAccount, by the namespace it applies in ('*' for cluster-wide). */
function verifierRules(objs: Obj[], sa = 'agentplane-verifier', ns = 'sbx'): Array<{ ns: string; rule: any }> {
  const out: Array<{ ns: string; rule: any }> = [];
  for (const b of objs.filter(
    (o) =>
      (o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding') &&
      o.subjects?.some((s) => s.kind === 'ServiceAccount' && s.name === sa && s.namespace === ns),
  )) {
    const role = objs.find(
      (o) =>
        o.kind === b.roleRef.kind &&
        o.metadata.name === b.roleRef.name &&
        (o.kind === 'ClusterRole' || o.metadata.namespace === b.metadata.namespace),
    )!;
    for (const rule of role.rules ?? [])
      out.push({ ns: b.kind === 'ClusterRoleBinding' ? '*' : b.metadata.namespace!, rule });
  }
  return out;
}

describe('VerifierJob', () => {
  test('a Job in the last wave, an Argo CD PostSync hook that keeps the last run, limits and a restricted pod', async () => {
    const objs = await synthesized();
    const job = objs.find((o) => o.kind === 'Job')!;
    expect(objs[objs.length - 1]).toBe(job);
    expect(job.metadata).toMatchObject({ name: 'agentplane-verifier', namespace: 'sbx' });
    expect(job.metadata.annotations).toEqual({
      'argocd.argoproj.io/hook': 'PostSync',
      'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation',
      'argocd.argoproj.io/sync-wave': '11',
    });
    const waves = objs
      .filter((o) => o !== job)
      .map((o) => Number(o.metadata.annotations?.['argocd.argoproj.io/sync-wave']));
    expect(Math.max(...waves)).toBeLessThan(11);
    expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 900 });
    // a hook never carries a TTL (argoproj/argo-cd#21055)
    expect(job.spec.ttlSecondsAfterFinished).toBeUndefined();
    const pod = job.spec.template.spec;
    expect(pod).toMatchObject({
      serviceAccountName: 'agentplane-verifier',
      automountServiceAccountToken: true,
      restartPolicy: 'Never',
    });
    expect(pod.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    const c = pod.containers[0];
    expect(c.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      privileged: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(c.resources).toEqual({
      requests: { cpu: '250m', memory: '256Mi' },
      limits: { cpu: '250m', memory: '256Mi' },
    });
    expect(c.args).toEqual([
      'verify',
      '--in-cluster',
      '--descriptor-dir',
      DESCRIPTOR_MOUNT,
      '--report-configmap',
      'sbx/agentplane-verify-report',
      '--transport',
      'direct',
      '--probe-timeout',
      '5s',
      '--ready-timeout',
      '120s',
      '--wait-ready',
      '600s',
      '-o',
      'json',
    ]);
    expect(pod.volumes[0]).toEqual({
      name: 'descriptor',
      projected: { sources: [{ configMap: { name: 'agentplane-environment' } }] },
    });
  });

  test('its identity: no pods/exec, attach or portforward, no secrets, ConfigMap writes only on the report name', async () => {
    const rules = verifierRules(await synthesized());
    expect(rules.length).toBeGreaterThan(5);
    const grants = (resource: string) =>
      rules.filter((r) => r.rule.resources.includes(resource) || r.rule.resources.includes('*'));
    for (const res of ['pods/exec', 'pods/attach', 'pods/portforward', 'secrets']) expect(grants(res)).toEqual([]);
    expect(rules.filter((r) => r.rule.verbs.includes('*') || r.rule.apiGroups.includes('*'))).toEqual([]);
    expect(grants('configmaps')).toEqual([
      {
        ns: 'sbx',
        rule: {
          apiGroups: [''],
          resources: ['configmaps'],
          verbs: ['get', 'update', 'patch'],
          resourceNames: ['agentplane-verify-report'],
        },
      },
      { ns: 'sbx', rule: { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] } },
    ]);
    // the template's namespace is covered
    expect(rules.some((r) => r.ns === 'team-a' && r.rule.resources.includes('sandboxclaims'))).toBe(true);
  });

  test('patch on Sandboxes only when the environment requires suspend-resume', async () => {
    const patchers = (objs: Obj[]) =>
      verifierRules(objs)
        .filter((r) => r.rule.resources.includes('sandboxes') && r.rule.verbs.includes('patch'))
        .map((r) => r.ns);
    expect(patchers(await synthesized())).toEqual([]);
    const e = newEnvironment(await release('v0.5.6'), 'env', {
      defaultNamespace: 'sbx',
      requiredStates: { 'suspend-resume': 'verified' },
    });
    const rc = e.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    e.addTemplate('py', { runtimeClass: rc, podSpec: podSpec(), namespace: 'team-a' });
    e.addVerifierJob('verify', { image: VERIFIER });
    expect(patchers(e.toJson() as Obj[]).sort()).toEqual(['sbx', 'team-a']);
  });

  test('with a router: the router transport through its Service, by default', async () => {
    const objs = await synthesized((e) => {
      e.addRouter('router', { image: ROUTER_IMAGE, authorization: { mode: 'tokenreview' }, callers: [] });
      e.addVerifierJob('verify', { image: VERIFIER });
    });
    const args: string[] = objs.find((o) => o.kind === 'Job')!.spec.template.spec.containers[0].args;
    expect(args.slice(args.indexOf('--transport'), args.indexOf('--transport') + 4)).toEqual([
      '--transport',
      'router',
      '--router-url',
      expect.stringMatching(/^http:\/\/sandbox-router-svc\.[a-z0-9-]+\.svc:\d+$/),
    ]);
    // The router's negative probes name a listener on the Job pod's own IP (case router-podip-ssrf).
    expect(args.slice(args.indexOf('--router-canary-host'), args.indexOf('--router-canary-host') + 2)).toEqual([
      '--router-canary-host',
      '$(AGENTPLANE_POD_IP)',
    ]);
    const env = objs.find((o) => o.kind === 'Job')!.spec.template.spec.containers[0].env;
    expect(env).toContainEqual({ name: 'AGENTPLANE_POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } });
    // A tokenreview router authenticates the Job's own ServiceAccount token; an allow-all one gets none.
    expect(args.slice(args.indexOf('--router-token-file'), args.indexOf('--router-token-file') + 2)).toEqual([
      '--router-token-file',
      '/var/run/secrets/kubernetes.io/serviceaccount/token',
    ]);
    const open = await synthesized((e) => {
      e.addRouter('router', {
        image: ROUTER_IMAGE,
        authorization: { mode: 'allow-all', acknowledgeUnauthenticated: true },
        callers: [],
      });
      e.addVerifierJob('verify', { image: VERIFIER });
    });
    expect(open.find((o) => o.kind === 'Job')!.spec.template.spec.containers[0].args).not.toContain(
      '--router-token-file',
    );
  });

  test('props are validated with the construct path', async () => {
    const e = newEnvironment(await release('v0.5.6'), 'env', { install: false });
    thrownBy(() => e.addVerifierJob('a', { image: VERIFIER, backoffLimit: -1 }), ConstructPropsError, 'InvalidProps');
    const timeout = thrownBy(
      () => e.addVerifierJob('b', { image: VERIFIER, probeTimeout: 'soon' }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(timeout.path).toBe('env/b');
    expect(timeout.problems).toEqual([expect.objectContaining({ prop: 'probeTimeout', value: 'soon' })]);
    const unpinned = thrownBy(
      () => e.addVerifierJob('c', { image: 'registry.example.internal/agentplane/verifier:latest' }),
      UnpinnedImageError,
      'UnpinnedImage',
    );
    expect(unpinned.unpinned).toBe('FloatingTag');
    thrownBy(() => e.addVerifierJob('d', { image: VERIFIER, transport: 'router' }), ConstructError, 'ConstructInvalid');
    const elsewhere = thrownBy(
      () => e.addVerifierJob('f', { image: VERIFIER, namespace: 'elsewhere' }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(elsewhere.problems).toEqual([
      expect.objectContaining({ prop: 'namespace', reason: 'NotDescriptorNamespace', value: 'elsewhere' }),
    ]);
    // the verifier's own wait ends before the Job's deadline
    const late = thrownBy(
      () => e.addVerifierJob('g', { image: VERIFIER, activeDeadlineSeconds: 600, waitReady: '10m' }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(late.problems).toEqual([expect.objectContaining({ prop: 'waitReady', reason: 'NotBelowDeadline' })]);
  });

  test('verify --from-cluster finds the report ConfigMap from the synthesized Job of --env', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentplane-env-'));
    expect(reportRefOfEnvironment(dir)).toBeUndefined();
    writeFileSync(join(dir, '11-verify.yaml'), (await synthesized()).map((o) => stringify(o)).join('---\n'));
    expect(reportRefOfEnvironment(dir)).toEqual({ namespace: 'sbx', name: 'agentplane-verify-report' });
  });

  test('order does not matter: a template, namespace and router added after addVerifierJob are covered by the written Job', async () => {
    const build = async (jobFirst: boolean): Promise<Obj[]> => {
      const e = newEnvironment(await release('v0.5.6'), 'env', { install: false });
      const rc = e.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
      e.addTemplate('covered', { runtimeClass: rc, podSpec: podSpec() });
      if (jobFirst) e.addVerifierJob('verify', { image: VERIFIER });
      e.addTemplate('late', { runtimeClass: rc, podSpec: podSpec(), namespace: 'team-late' });
      e.addRouter('router', { image: ROUTER_IMAGE, authorization: { mode: 'tokenreview' }, callers: [] });
      if (!jobFirst) e.addVerifierJob('verify', { image: VERIFIER });
      expect(childProblems(e)).toEqual([]);
      return e.toJson() as Obj[];
    };
    const first = await build(true);
    expect(JSON.stringify(first)).toBe(JSON.stringify(await build(false)));
    // the late namespace is one the Job's identity may read, and its transport is the router's
    expect(
      first.some((o) => o.kind === 'Role' && o.metadata.namespace === 'team-late' && /verif/.test(o.metadata.name)),
    ).toBe(true);
    const args: string[] = first.find((o) => o.kind === 'Job')!.spec.template.spec.containers[0].args;
    expect(args[args.indexOf('--transport') + 1]).toBe('router');
  });

  test('a descriptor in parts: one optional volume source per part, and the reader puts them back together', async () => {
    const text = `${JSON.stringify({ pad: 'x' }).slice(0, -1)}, ${Array.from({ length: 9000 }, (_, i) => `"k${i}": "${'v'.repeat(40)}"`).join(',\n')}}\n`;
    const parts = descriptorPartCount(text);
    expect(parts).toBeGreaterThan(1);
    const cms = descriptorConfigMaps({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'agentplane-environment' },
      data: { 'environment.json': text },
    });
    expect(cms.length - 1).toBe(parts);
    // mount them as the Job does: head keys as files, parts under parts/<name>
    const dir = mkdtempSync(join(tmpdir(), 'agentplane-desc-'));
    for (const [k, v] of Object.entries(cms[0]!.data as Record<string, string>)) writeFileSync(join(dir, k), v);
    mkdirSync(join(dir, 'parts'));
    for (const cm of cms.slice(1))
      writeFileSync(
        join(dir, 'parts', String(cm.metadata!.name)),
        (cm.data as Record<string, string>)['environment.json.part']!,
      );
    // the text is not a descriptor: the reader gets it back whole and refuses it on the schema, not on the parts
    const schema = thrownBy(() => readDescriptorDir(dir), EnvironmentDescriptorError, 'EnvironmentDescriptorInvalid');
    expect(schema.problem).toBe('schema');
    writeFileSync(join(dir, 'parts', String(cms[2]!.metadata!.name)), 'changed');
    const joined = thrownBy(() => readDescriptorDir(dir), EnvironmentDescriptorError, 'EnvironmentDescriptorInvalid');
    expect(joined.problem).toBe('parts');
    expect((joined.cause as DescriptorPartsError).problem).toBe('checksum-mismatch');
  });

  test('the reader takes a whole descriptor from the mount', async () => {
    const e = newEnvironment(await release('v0.5.6'), 'env', { install: false });
    const dir = mkdtempSync(join(tmpdir(), 'agentplane-desc-'));
    const { descriptorJson } = await import('../../../src/constructs/descriptor.js');
    writeFileSync(join(dir, 'environment.json'), descriptorJson(e.descriptor()));
    expect(readDescriptorDir(dir)).toMatchObject({ name: 'env', release: { tag: 'v0.5.6' } });
  });

  describe('delivery', () => {
    const jobOf = (objs: Obj[]): Obj => objs.find((o) => o.kind === 'Job')!;
    const withJob = (props: Record<string, unknown>, image = VERIFIER) =>
      synthesized((e) => e.addVerifierJob('verify', { image, ...props }));

    test('argocd (the default, and argoCdHook: true): PostSync hook, BeforeHookCreation, no TTL', async () => {
      for (const props of [
        {},
        { delivery: 'argocd' },
        { argoCdHook: true },
        { delivery: 'argocd', argoCdHook: true },
      ]) {
        const job = jobOf(await withJob(props));
        expect(job.metadata.name).toBe('agentplane-verifier');
        expect(job.metadata.annotations).toMatchObject({
          'argocd.argoproj.io/hook': 'PostSync',
          'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation',
        });
        expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 900 });
        expect('ttlSecondsAfterFinished' in job.spec).toBe(false);
      }
    });

    test('a TTL with hook or flux delivery fails synthesis naming both settings', async () => {
      const e = newEnvironment(await release('v0.5.6'), 'env', { install: false });
      for (const [props, reason, delivery] of [
        [{ ttlSecondsAfterFinished: 0 }, 'TtlWithHookDelivery', 'argocd'],
        [{ delivery: 'argocd', ttlSecondsAfterFinished: 86400 }, 'TtlWithHookDelivery', 'argocd'],
        [{ argoCdHook: true, ttlSecondsAfterFinished: 60 }, 'TtlWithHookDelivery', 'argocd'],
        [{ delivery: 'flux', ttlSecondsAfterFinished: 600 }, 'TtlWithFluxDelivery', 'flux'],
      ] as const) {
        const id = `v-${e.node.children.length}`;
        const err = thrownBy(() => e.addVerifierJob(id, { image: VERIFIER, ...props }), VerifierDeliveryError, reason);
        expect(err.path).toBe(`env/${id}`);
        expect(err.settings).toEqual(['delivery', 'ttlSecondsAfterFinished']);
        expect(err.values).toEqual({ delivery, ttlSecondsAfterFinished: props.ttlSecondsAfterFinished });
      }
    });

    test('the deprecated argoCdHook contradicting delivery is refused', async () => {
      const e = newEnvironment(await release('v0.5.6'), 'env', { install: false });
      for (const props of [
        { delivery: 'flux', argoCdHook: true },
        { delivery: 'plain', argoCdHook: true },
        { delivery: 'argocd', argoCdHook: false },
      ] as const) {
        const err = thrownBy(
          () => e.addVerifierJob(`v-${e.node.children.length}`, { image: VERIFIER, ...props }),
          VerifierDeliveryError,
          'ConflictingDelivery',
        );
        expect(err.settings).toEqual(['delivery', 'argoCdHook']);
        expect(err.values).toEqual(props);
      }
    });

    test('plain (and argoCdHook: false): fixed name, no hook, a TTL of a day by default, any TTL allowed', async () => {
      for (const props of [{ delivery: 'plain' }, { argoCdHook: false }]) {
        const job = jobOf(await withJob(props));
        expect(job.metadata.name).toBe('agentplane-verifier');
        expect(Object.keys(job.metadata.annotations ?? {}).filter((k) => k.includes('/hook'))).toEqual([]);
        expect(job.spec.ttlSecondsAfterFinished).toBe(86400);
      }
      expect(jobOf(await withJob({ delivery: 'plain', ttlSecondsAfterFinished: 0 })).spec.ttlSecondsAfterFinished).toBe(
        0,
      );
    });

    test('flux: the name carries the hash of the pod template; a changed template is a new Job', async () => {
      // the algorithm, pinned: SHA-256 of the template as JSON with sorted keys, first 10 hex digits
      expect(podTemplateHash({ spec: { containers: [{ name: 'verify', image: 'x:1' }] }, metadata: {} })).toBe(
        podTemplateHash({ metadata: {}, spec: { containers: [{ image: 'x:1', name: 'verify' }] } }),
      );
      expect(podTemplateHash({ a: 1 })).toBe('015abd7f5c');
      const v12 = jobOf(await withJob({ delivery: 'flux' }, 'registry.example/agentplane-verifier:1.2.0'));
      expect(v12.metadata.name).toMatch(/^agentplane-verifier-[0-9a-f]{10}$/);
      expect(v12.metadata.name).toBe(`agentplane-verifier-${podTemplateHash(v12.spec.template)}`);
      expect(v12.metadata.annotations ?? {}).not.toHaveProperty(['argocd.argoproj.io/hook']);
      expect('ttlSecondsAfterFinished' in v12.spec).toBe(false);
      expect(v12.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 900 });
      expect(v12.spec.template.metadata.annotations['agentplane.dev/descriptor-sha256']).toMatch(/^[0-9a-f]{64}$/);
      // the service account, report and identity keep the base name
      expect(v12.spec.template.spec.serviceAccountName).toBe('agentplane-verifier');
      // deterministic: the same input, the same name
      const again = jobOf(await withJob({ delivery: 'flux' }, 'registry.example/agentplane-verifier:1.2.0'));
      expect(again.metadata.name).toBe(v12.metadata.name);
      const v13 = jobOf(await withJob({ delivery: 'flux' }, 'registry.example/agentplane-verifier:1.3.0'));
      expect(v13.metadata.name).not.toBe(v12.metadata.name);
      // a change to what it verifies (the descriptor) is a new Job too
      const more = jobOf(
        await synthesized((e) => {
          e.addTemplate('py2', {
            runtimeClass: e.runtimeClasses[0]!,
            podSpec: podSpec(),
            namespace: 'team-a',
          });
          e.addVerifierJob('verify', { image: 'registry.example/agentplane-verifier:1.2.0', delivery: 'flux' });
        }),
      );
      expect(more.metadata.name).not.toBe(v12.metadata.name);
    });

    test('flux: a name too long to carry the hash is refused', async () => {
      const e = newEnvironment(await release('v0.5.6'), 'env', { install: false });
      const err = thrownBy(
        () => e.addVerifierJob('v', { image: VERIFIER, delivery: 'flux', name: 'v'.repeat(60) }),
        ConstructPropsError,
        'InvalidProps',
      );
      expect(err.problems).toEqual([expect.objectContaining({ prop: 'name', reason: 'TooLong' })]);
    });
  });
});
