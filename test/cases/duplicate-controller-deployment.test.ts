/**
 * Case duplicate-controller-deployment: the install declares the controller Deployment exactly once, with
 * `--extensions` iff extensions are requested; a synth-wide check refuses any duplicate (group, kind, namespace, name).
 */
import { jest } from '@jest/globals';
import { ApiObject, App, Chart } from 'cdk8s';
import { AgentSandboxInstall, DuplicateObjectError, synthesizeEnvironment } from '../../src/index.js';
import { newEnvironment, release } from '../unit/constructs/fixture.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

function deployments(install: AgentSandboxInstall): Array<Record<string, any>> {
  return install.objects.map((o) => o.toJson()).filter((o) => o.kind === 'Deployment');
}

describe('case duplicate-controller-deployment: duplicate controller Deployment', () => {
  test.each(['v0.4.6', 'v0.5.0', 'v0.5.6', 'v1.0.3'] as const)(
    '%s with extensions: one Deployment with --extensions',
    async (tag) => {
      const install = new AgentSandboxInstall(new Chart(new App(), 'c'), 'i', {
        release: await release(tag),
        extensions: true,
      });
      const deps = deployments(install);
      expect(deps).toHaveLength(1);
      expect(deps[0]!.spec.template.spec.containers[0].args).toContain('--extensions');
    },
  );

  test('without extensions: one Deployment without --extensions', async () => {
    const deps = deployments(
      new AgentSandboxInstall(new Chart(new App(), 'c'), 'i', { release: await release('v0.5.0'), extensions: false }),
    );
    expect(deps).toHaveLength(1);
    expect(deps[0]!.spec.template.spec.containers[0].args).not.toContain('--extensions');
  });

  test('a second Deployment with the same identity anywhere in the environment is refused', async () => {
    const env = newEnvironment(await release('v0.5.0'), 'sbx');
    new ApiObject(env, 'extra-controller', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'agent-sandbox-controller', namespace: 'agent-sandbox-system' },
      spec: {},
    });
    let err: unknown;
    try {
      synthesizeEnvironment(env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DuplicateObjectError);
    expect((err as DuplicateObjectError).reason).toBe('DuplicateObject');
    expect((err as DuplicateObjectError).duplicates).toEqual([
      {
        object: {
          group: 'apps',
          kind: 'Deployment',
          namespace: 'agent-sandbox-system',
          name: 'agent-sandbox-controller',
        },
        paths: ['sbx/install/Deployment.agent-sandbox-system.agent-sandbox-controller', 'sbx/extra-controller'],
      },
    ]);
  });

  test('the descriptor records whether the controller runs extensions', async () => {
    const s = synthesizeEnvironment(newEnvironment(await release('v0.5.0'), 'sbx', { install: { extensions: false } }));
    expect(s.descriptor.install).toMatchObject({ extensions: false, controllerDeployment: 'agent-sandbox-controller' });
    expect(s.descriptor.capabilities.map((c) => c.capability)).not.toContain('extensions-api');
  });
});
