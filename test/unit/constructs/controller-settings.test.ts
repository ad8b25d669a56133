/**
 * The controller install knobs (AgentSandboxInstallProps.controller, controller-deployment.ts): each valid value lands
 * at its field of the one controller Deployment; each invalid one stops construction with the construct path, the
 * prop and the value as JSON.
 */
import { jest } from '@jest/globals';
import { App, Chart } from 'cdk8s';
import {
  AgentSandboxInstall,
  ConstructPropsError,
  type ControllerDeploymentProps,
} from '../../../src/constructs/index.js';
import { release } from './fixture.js';

// loading a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

async function deployment(controller: ControllerDeploymentProps): Promise<Record<string, any>> {
  const chart = new Chart(new App(), 'c');
  const install = new AgentSandboxInstall(chart, 'install', { release: await release('v0.5.6'), controller });
  const deps = install.objects.map((o) => o.toJson() as Record<string, any>).filter((o) => o.kind === 'Deployment');
  expect(deps).toHaveLength(1);
  return deps[0]!;
}

test('left out, nothing is written: the pinned Deployment (v0.5.6) as it is', async () => {
  const d = await deployment({});
  expect(d.spec.replicas).toBe(1);
  expect(Object.keys(d.spec.template.spec).sort()).toEqual(['containers', 'serviceAccountName', 'volumes']);
  expect(d.spec.template.metadata).toEqual({
    labels: { app: 'agent-sandbox-controller', 'app.kubernetes.io/version': 'v0.5.6' },
  });
  expect(d.spec.template.spec.containers[0].resources).toBeUndefined();
  expect(d.spec.template.spec.containers[0].args).toEqual(['--leader-elect=true', '--extensions']);
});

test('every knob lands at its field', async () => {
  const tolerations = [{ key: 'dedicated', operator: 'Equal', value: 'agents', effect: 'NoSchedule' }];
  const affinity = {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] }],
      },
    },
  };
  const d = await deployment({
    replicas: 2,
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '512Mi' } },
    nodeSelector: { 'node-role.example.com/agents': 'true' },
    tolerations,
    affinity,
    podAnnotations: { 'prometheus.io/scrape': 'true' },
    podLabels: { team: 'platform', app: 'ignored-selector-stays' },
    imagePullSecrets: ['regcred'],
    priorityClassName: 'system-cluster-critical',
    extraArgs: ['--zap-log-level=debug'],
  });
  const pod = d.spec.template.spec;
  expect(d.spec.replicas).toBe(2);
  expect(pod.containers[0].resources).toEqual({
    requests: { cpu: '100m', memory: '128Mi' },
    limits: { memory: '512Mi' },
  });
  expect(pod.nodeSelector).toEqual({ 'node-role.example.com/agents': 'true' });
  expect(pod.tolerations).toEqual(tolerations);
  expect(pod.affinity).toEqual(affinity);
  expect(d.spec.template.metadata.annotations).toEqual({ 'prometheus.io/scrape': 'true' });
  // the selector label stays as pinned; the new one is added
  expect(d.spec.template.metadata.labels).toEqual({
    app: 'agent-sandbox-controller',
    'app.kubernetes.io/version': 'v0.5.6',
    team: 'platform',
  });
  expect(d.spec.selector.matchLabels).toEqual({ app: 'agent-sandbox-controller' });
  expect(pod.imagePullSecrets).toEqual([{ name: 'regcred' }]);
  expect(pod.priorityClassName).toBe('system-cluster-critical');
  expect(pod.containers[0].args).toEqual(['--leader-elect=true', '--extensions', '--zap-log-level=debug']);
});

test.each<[string, ControllerDeploymentProps, string, unknown]>([
  ['replicas below 0', { replicas: -1 }, 'controller.replicas', -1],
  ['replicas not an integer', { replicas: 1.5 }, 'controller.replicas', 1.5],
  [
    'a CPU that is no quantity',
    { resources: { requests: { cpu: 'lots' } } },
    'controller.resources.requests.cpu',
    'lots',
  ],
  [
    'an unknown resources key',
    { resources: { request: {} } as NonNullable<ControllerDeploymentProps['resources']> },
    'controller.resources',
    { request: {} },
  ],
  ['a nodeSelector value no label value', { nodeSelector: { zone: 'a b' } }, 'controller.nodeSelector.zone', 'a b'],
  ['a pod label key no label key', { podLabels: { 'Bad Key': 'x' } }, 'controller.podLabels.Bad Key', 'Bad Key'],
  [
    'an image pull secret no Secret name',
    { imagePullSecrets: ['Reg_Cred'] },
    'controller.imagePullSecrets.0',
    'Reg_Cred',
  ],
  [
    'a priority class no DNS name',
    { priorityClassName: 'High Priority' },
    'controller.priorityClassName',
    'High Priority',
  ],
  ['an extra arg that is no flag', { extraArgs: ['debug'] }, 'controller.extraArgs.0', 'debug'],
  [
    'an extra arg AgentPlane sets itself',
    { extraArgs: ['--extensions=false'] },
    'controller.extraArgs',
    ['--extensions=false'],
  ],
  ['an unknown knob', { replicaCount: 2 } as ControllerDeploymentProps, 'controller', { replicaCount: 2 }],
])('%s is refused with the construct path, the prop and the value', async (_what, controller, prop, value) => {
  const err = await deployment(controller).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConstructPropsError);
  expect((err as ConstructPropsError).reason).toBe('InvalidProps');
  const e = err as ConstructPropsError;
  expect(e.path).toBe('c/install');
  expect(e.construct).toBe('AgentSandboxInstall');
  const problem = e.problems.find((p) => p.prop === prop);
  expect(problem).toBeDefined();
  expect(problem!.value).toEqual(value);
  if (prop === 'controller.podLabels.Bad Key') expect(problem!.reason).toBe('InvalidKey');
});
