import { jest } from '@jest/globals';
import { ApiObject, App, Chart } from 'cdk8s';
import {
  AgentSandboxInstall,
  ConstructPropsError,
  UnpinnedImageError,
  UnsupportedByReleaseError,
} from '../../../src/constructs/index.js';
import { rejectedBy } from '../thrown.js';
import { release } from './fixture.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

function installJson(
  props: Omit<ConstructorParameters<typeof AgentSandboxInstall>[2], 'release'> & {
    tag: 'v0.4.6' | 'v0.5.0' | 'v0.5.6' | 'v1.0.3';
  },
) {
  return release(props.tag).then((rel) => {
    const chart = new Chart(new App(), 'c');
    const { tag: _tag, ...rest } = props;
    const install = new AgentSandboxInstall(chart, 'install', { release: rel, ...rest });
    return { install, rel, objects: install.objects.map((o: ApiObject) => o.toJson() as Record<string, any>) };
  });
}

function controllerArgs(objects: Array<Record<string, any>>): string[] {
  const deps = objects.filter((o) => o.kind === 'Deployment');
  expect(deps).toHaveLength(1);
  return deps[0]!.spec.template.spec.containers[0].args;
}

describe('AgentSandboxInstall', () => {
  test.each(['v0.4.6', 'v0.5.0', 'v0.5.6', 'v1.0.3'] as const)(
    '%s with extensions: one controller Deployment, --extensions, pinned image, all four CRDs',
    async (tag) => {
      const { objects, rel } = await installJson({ tag });
      expect(controllerArgs(objects)).toEqual(['--leader-elect=true', '--extensions']);
      const dep = objects.find((o) => o.kind === 'Deployment')!;
      expect(dep.spec.template.spec.containers[0].image).toBe(
        `registry.k8s.io/agent-sandbox/agent-sandbox-controller:${tag}`,
      );
      // the config volume came with extensions.controller.yaml from v0.5.0 on (k8s/extensions.controller.yaml@tag)
      const volumes =
        tag === 'v0.4.6'
          ? undefined
          : [{ name: 'config-volume', configMap: { name: 'agent-sandbox-config', optional: true } }];
      expect(dep.spec.template.spec.volumes).toEqual(volumes);
      const crds = objects
        .filter((o) => o.kind === 'CustomResourceDefinition')
        .map((o) => o.metadata.name)
        .sort();
      expect(crds).toEqual([
        'sandboxclaims.extensions.agents.x-k8s.io',
        'sandboxes.agents.x-k8s.io',
        'sandboxtemplates.extensions.agents.x-k8s.io',
        'sandboxwarmpools.extensions.agents.x-k8s.io',
      ]);
      // every upstream object of the core and extensions files except the second Deployment copy
      const upstreamCount = [...rel.facts.coreAssetOrder, ...rel.facts.extensionsAssetOrder].reduce(
        (n, f) => n + rel.objects.get(f)!.length,
        0,
      );
      expect(objects).toHaveLength(upstreamCount - 1);
      for (const o of objects) {
        expect(o.metadata.labels['app.kubernetes.io/version']).toBe(tag);
        expect(o.metadata.annotations['agentplane.dev/release-commit']).toBe(rel.facts.commit);
      }
      const text = JSON.stringify(objects);
      expect(text).not.toContain('ko://');
      expect(text).not.toMatch(/:latest/);
    },
  );

  test('v0.5.0: the folded Deployment keeps the webhook port the extensions copy lacks', async () => {
    const { objects } = await installJson({ tag: 'v0.5.0' });
    const ports = objects
      .find((o) => o.kind === 'Deployment')!
      .spec.template.spec.containers[0].ports.map((p: { name: string }) => p.name);
    expect(ports).toEqual(['metrics', 'healthz', 'webhook']);
  });

  test('without extensions: core objects only and no --extensions', async () => {
    const { objects } = await installJson({ tag: 'v0.5.6', extensions: false });
    expect(controllerArgs(objects)).toEqual(['--leader-elect=true']);
    expect(objects.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata.name)).toEqual([
      'sandboxes.agents.x-k8s.io',
    ]);
  });

  test('registry mirror and digest change the controller image', async () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    const { install, objects } = await installJson({
      tag: 'v0.5.6',
      registryMirror: 'mirror.example.com:5000/k8s',
      controllerDigest: digest,
    });
    expect(install.controllerImage).toBe(
      `mirror.example.com:5000/k8s/agent-sandbox/agent-sandbox-controller:v0.5.6@${digest}`,
    );
    expect(objects.find((o) => o.kind === 'Deployment')!.spec.template.spec.containers[0].image).toBe(
      install.controllerImage,
    );
  });

  test('a malformed digest is refused with the construct path and the value', async () => {
    const err = await rejectedBy(
      installJson({ tag: 'v0.5.6', controllerDigest: 'sha256:xyz' }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect([err.path, err.construct]).toEqual(['c/install', 'AgentSandboxInstall']);
    expect(err.problems).toEqual([
      expect.objectContaining({ prop: 'controllerDigest', reason: 'InvalidFormat', value: 'sha256:xyz' }),
    ]);
  });

  test('requireDigests without a controller digest is refused', async () => {
    const err = await rejectedBy(
      installJson({ tag: 'v0.5.6', requireDigests: true }),
      UnpinnedImageError,
      'UnpinnedImage',
    );
    expect([err.image, err.unpinned]).toEqual([
      'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6',
      'DigestRequired',
    ]);
  });

  test('external certificates on v0.5.6: --manage-webhook-certs=false, the Secret mounted at the cert dir, CA injection on CRDs', async () => {
    const { install, objects } = await installJson({
      tag: 'v0.5.6',
      certificates: { external: { secretName: 'webhook-tls', injectCaFrom: 'agent-sandbox-system/webhook' } },
    });
    expect(install.certificates).toBe('external');
    const pod = objects.find((o) => o.kind === 'Deployment')!.spec.template.spec;
    expect(pod.containers[0].args).toContain('--manage-webhook-certs=false');
    expect(pod.containers[0].volumeMounts).toContainEqual({
      name: 'webhook-certs',
      mountPath: '/tmp/k8s-webhook-server/serving-certs',
      readOnly: true,
    });
    expect(pod.volumes).toContainEqual({ name: 'webhook-certs', secret: { secretName: 'webhook-tls' } });
    for (const crd of objects.filter((o) => o.kind === 'CustomResourceDefinition')) {
      expect(crd.metadata.annotations['cert-manager.io/inject-ca-from']).toBe('agent-sandbox-system/webhook');
    }
  });

  test('external certificates are refused on v0.5.0 (no --manage-webhook-certs flag)', async () => {
    const err = await installJson({ tag: 'v0.5.0', certificates: { external: { secretName: 'x' } } }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnsupportedByReleaseError);
    expect((err as UnsupportedByReleaseError).reason).toBe('UnsupportedByRelease');
    const e = err as UnsupportedByReleaseError;
    expect([e.path, e.setting, e.release]).toEqual(['c/install', 'certificates.external', 'v0.5.0']);
  });

  test.each([
    ['v0.4.6', { external: { secretName: 'x' } }],
    ['v1.0.3', { external: { secretName: 'x' } }],
    ['v1.0.3', 'controller'],
  ] as const)('any certificates setting is refused on %s (no conversion webhook): %j', async (tag, certificates) => {
    const err = await installJson({ tag, certificates }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsupportedByReleaseError);
    const e = err as UnsupportedByReleaseError;
    expect([e.reason, e.path, e.setting, e.release]).toEqual([
      'UnsupportedByRelease',
      'c/install',
      'certificates',
      tag,
    ]);
  });

  test('v1.0.3 writes what it ships and nothing v1.0 dropped: no webhook flag, volume, Service, port or cert RBAC', async () => {
    const { objects, install } = await installJson({ tag: 'v1.0.3' });
    const kinds = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(kinds).not.toContain('Service/agent-sandbox-webhook-service');
    expect(kinds).not.toContain('Role/agent-sandbox-controller');
    expect(kinds).not.toContain('RoleBinding/agent-sandbox-controller');
    const dep = objects.find((o) => o.kind === 'Deployment')!;
    const c = dep.spec.template.spec.containers[0];
    expect(c.args.filter((a: string) => /webhook/.test(a))).toEqual([]);
    expect((c.ports ?? []).map((p: { containerPort: number }) => p.containerPort)).not.toContain(9443);
    expect(dep.spec.template.spec.volumes).toEqual([
      { name: 'config-volume', configMap: { name: 'agent-sandbox-config', optional: true } },
    ]);
    expect(c.image).toBe('registry.k8s.io/agent-sandbox/agent-sandbox-controller:v1.0.3');
    const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
    expect(crds).toHaveLength(4);
    for (const crd of crds) {
      expect(crd.spec.conversion).toBeUndefined();
      expect(crd.spec.versions.map((v: { name: string }) => v.name)).toEqual(['v1beta1']);
    }
    const crdRules = objects
      .filter((o) => o.kind === 'ClusterRole')
      .flatMap((o) => o.rules ?? [])
      .filter((r: { apiGroups?: string[] }) => r.apiGroups?.includes('apiextensions.k8s.io'));
    expect(crdRules).toEqual([]);
    // Both large CRDs fall below the server-side-apply threshold with one version each.
    expect(install.serverSideApply).toEqual([]);
  });

  test('unknown props are refused', async () => {
    const err = await installJson({ tag: 'v0.5.6', ...({ extension: true } as object) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConstructPropsError);
    expect((err as ConstructPropsError).reason).toBe('InvalidProps');
    expect((err as ConstructPropsError).issues.join('\n')).toMatch(/extension/);
  });

  test('large CRDs are marked for server-side apply', async () => {
    const { install, objects } = await installJson({ tag: 'v0.5.6' });
    expect([...install.serverSideApply].sort()).toEqual([
      'sandboxes.agents.x-k8s.io',
      'sandboxtemplates.extensions.agents.x-k8s.io',
    ]);
    const marked = objects
      .filter((o) => o.metadata.annotations['argocd.argoproj.io/sync-options'] === 'ServerSideApply=true')
      .map((o) => o.metadata.name)
      .sort();
    expect(marked).toEqual(['sandboxes.agents.x-k8s.io', 'sandboxtemplates.extensions.agents.x-k8s.io']);
  });
});

describe('controller flags the pinned release does not define', () => {
  test.each([
    ['v1.0.3', '--webhook-cert-dir=/certs'],
    ['v1.0.3', '-webhook-port=9443'],
    ['v0.5.6', '--metrics-secure-serving'],
    ['v0.4.6', '--tls-min-version=VersionTLS13'],
  ] as const)('%s refuses %s (the controller would exit 2)', async (tag, flag) => {
    const err = await installJson({ tag, controller: { extraArgs: [flag] } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsupportedByReleaseError);
    const e = err as UnsupportedByReleaseError;
    expect([e.reason, e.setting, e.release]).toEqual(['UnsupportedByRelease', 'controller.extraArgs', tag]);
    expect(e.message).toContain(flag);
  });

  test('v1.0.3 takes its own metrics-TLS flags', async () => {
    const { objects } = await installJson({ tag: 'v1.0.3', controller: { extraArgs: ['--metrics-secure-serving'] } });
    expect(controllerArgs(objects)).toEqual(['--leader-elect=true', '--extensions', '--metrics-secure-serving']);
  });
});
