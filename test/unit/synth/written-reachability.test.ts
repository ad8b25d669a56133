/**
 * Reachability checked on what is actually written (issue 27, item 2): the router → sandbox runtime path is checked
 * from the construct props when the SandboxNetworkPolicy is declared, and again on the rendered objects, so a JSON
 * patch on the policy (its ingress port, peers or pod selector), the template (its pod labels, Managed policy, the
 * runtime's --listen-host or probe) or the router (its pod labels) fails synthesis naming the patched ApiObject's
 * construct path, with the rule code. A deliberate exception is acknowledged and recorded in the descriptor and lock.
 */
import { jest } from '@jest/globals';
import { JsonPatch, Testing } from 'cdk8s';
import {
  AgentEnvironment,
  ConstructError,
  environmentsLock,
  OutputRuleError,
  SANDBOXD_RUNTIME,
  sandboxdPodSpec,
  synthesizeEnvironment,
  type LoadedRelease,
  type SandboxNetworkPolicy,
  type SandboxRouter,
  type SandboxTemplate,
} from '../../../src/index.js';
import { k8s } from '../../../src/constructs/k8s.js';
import { newEnvironment, release } from '../constructs/fixture.js';
import { thrownBy } from '../thrown.js';

jest.setTimeout(120_000);

const SANDBOXD = 'registry.example.internal/agent-sandbox/sandboxd:v1.0.3';
const ROUTER_IMAGE = 'registry.example.internal/agent-sandbox/sandbox-router-go:v1.0.3';

interface Parts {
  env: AgentEnvironment;
  shell: SandboxTemplate;
  router: SandboxRouter;
  policy: SandboxNetworkPolicy;
}

/** v1.0.3: sandboxd on the pod network behind the environment's own policy that admits the router on 8888. */
function build(rel: LoadedRelease): Parts {
  const env = newEnvironment(rel, 'dev', { defaultNamespace: 'dev-sandboxes' });
  const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  const shell = env.addTemplate('shell', {
    runtimeClass: rc,
    podSpec: sandboxdPodSpec({ image: SANDBOXD, release: 'v1.0.3', resources: { cpu: '250m', memory: '256Mi' } }),
    runtime: SANDBOXD_RUNTIME,
    runtimeReadinessProbe: true,
  });
  const router = env.addRouter('router', {
    image: ROUTER_IMAGE,
    authorization: { mode: 'tokenreview' },
    callers: [],
    sandboxPorts: [8080],
    apiServer: [{ cidr: '10.0.0.1/32', port: 6443 }],
  });
  const policy = env.addNetworkPolicy('shell-policy', { template: shell, router });
  return { env, shell, router, policy };
}

/**
 * The policy's first ingress port (8080, the one the router's egress allows). A typed object (KubeNetworkPolicy)
 * passes its patched JSON through its props' toJson, which keeps a port only as an IntOrString: a bare number patched
 * in is dropped, and the rule then admits every TCP port.
 */
const INGRESS_PORT = '/spec/ingress/0/ports/0/port';
const routerDeployment = (r: SandboxRouter) => r.objects.find((o) => o.kind === 'Deployment')!;
const routerPolicy = (r: SandboxRouter) => r.objects.find((o) => o.kind === 'NetworkPolicy')!;
const rulesOf = (err: OutputRuleError) => err.violations.map((v) => [v.rule, v.path, v.field]);

let rel: LoadedRelease;
beforeAll(async () => {
  rel = await release('v1.0.3');
});

test('unpatched, the router path synthesizes', () => {
  const { env } = build(rel);
  expect(synthesizeEnvironment(env).descriptor.networkPolicies.map((p) => p.name)).toEqual(['shell-sandbox-policy']);
});

describe('a patch that breaks the router → runtime path fails synthesis, naming the patched ApiObject', () => {
  test("the policy's ingress port replaced (RuntimePortNotAllowed)", () => {
    const { env, policy } = build(rel);
    policy.apiObject.addJsonPatch(JsonPatch.replace(INGRESS_PORT, k8s.IntOrString.fromNumber(9999)));
    const err = thrownBy(() => synthesizeEnvironment(env), OutputRuleError, 'OutputRuleBroken');
    expect(rulesOf(err)).toEqual([['RuntimePortNotAllowed', 'dev/shell-policy/Resource', 'spec.ingress']]);
    expect(err.violations[0]!.object).toMatchObject({ kind: 'NetworkPolicy', name: 'shell-sandbox-policy' });
  });

  // Case from a new user's trial: a bare number patched as a port is dropped by cdk8s, so the rule admits every port.
  test("the policy's ingress port patched as a bare number: dropped, the entry admits every port (PolicyPortMissing)", () => {
    const { env, policy } = build(rel);
    policy.apiObject.addJsonPatch(JsonPatch.replace(INGRESS_PORT, 9999));
    const err = thrownBy(() => synthesizeEnvironment(env), OutputRuleError, 'OutputRuleBroken');
    expect(rulesOf(err)).toEqual([['PolicyPortMissing', 'dev/shell-policy/Resource', 'spec.ingress[0].ports[0]']]);
    expect(err.violations[0]!.value).toEqual({ protocol: 'TCP' });
    // the same objects under Testing.synth (cdk8s's own validation)
    // prose: cdk8s validations carry text only; the rule code is in it
    expect(() => Testing.synth(env)).toThrow(/PolicyPortMissing/);
  });

  test('the template label the policy selects removed from the pods (PolicyMissesSandboxPods)', () => {
    const { env, shell } = build(rel);
    shell.apiObject.addJsonPatch(JsonPatch.remove('/spec/podTemplate/metadata/labels/agentplane.dev~1template'));
    const err = thrownBy(() => synthesizeEnvironment(env), OutputRuleError, 'OutputRuleBroken');
    expect(rulesOf(err)).toEqual([
      ['PolicyMissesSandboxPods', 'dev/shell/Resource', 'spec.podTemplate.metadata.labels'],
    ]);
  });

  test("the policy's podSelector patched to other pods (PolicyMissesSandboxPods on the policy)", () => {
    const { env, policy } = build(rel);
    policy.apiObject.addJsonPatch(JsonPatch.replace('/spec/podSelector/matchLabels/agentplane.dev~1template', 'other'));
    const err = thrownBy(() => synthesizeEnvironment(env), OutputRuleError, 'OutputRuleBroken');
    expect(rulesOf(err)).toEqual([['PolicyMissesSandboxPods', 'dev/shell-policy/Resource', 'spec.podSelector']]);
  });

  test("the router's pod label patched away from what the policy admits (RouterPeerMismatch on the router)", () => {
    const { env, router } = build(rel);
    routerDeployment(router).addJsonPatch(JsonPatch.replace('/spec/template/metadata/labels/app', 'other-router'));
    const err = thrownBy(() => synthesizeEnvironment(env), OutputRuleError, 'OutputRuleBroken');
    expect(err.violations.map((v) => [v.rule, v.path])).toContainEqual([
      'RouterPeerMismatch',
      routerDeployment(router).node.path,
    ]);
    expect(routerDeployment(router).node.path.startsWith('dev/router/')).toBe(true);
  });

  test("the router's egress port replaced (RuntimePortNotAllowed on the router's policy)", () => {
    const { env, router } = build(rel);
    const json = routerPolicy(router).toJson() as { spec: { egress: Array<{ ports?: Array<{ port: number }> }> } };
    const at = json.spec.egress.findIndex((e) => e.ports?.some((p) => p.port === 8080));
    routerPolicy(router).addJsonPatch(JsonPatch.replace(`/spec/egress/${at}/ports`, [{ protocol: 'TCP', port: 7777 }]));
    const err = thrownBy(() => synthesizeEnvironment(env), OutputRuleError, 'OutputRuleBroken');
    expect(rulesOf(err)).toEqual([['RuntimePortNotAllowed', routerPolicy(router).node.path, 'spec.egress']]);
  });

  test('sandboxd told --listen-host=127.0.0.1 by a patch (RuntimeListensOnLoopback and ReadinessProbeUnreachable)', () => {
    const { env, shell } = build(rel);
    const args = (shell.apiObject.toJson() as any).spec.podTemplate.spec.containers[0].args as string[];
    shell.apiObject.addJsonPatch(
      JsonPatch.replace(
        '/spec/podTemplate/spec/containers/0/args',
        args.map((a) => (a.startsWith('--listen-host') ? '--listen-host=127.0.0.1' : a)),
      ),
    );
    const err = thrownBy(() => synthesizeEnvironment(env), OutputRuleError, 'OutputRuleBroken');
    expect(err.violations.map((v) => [v.rule, v.path, v.value ?? null])).toEqual([
      ['ReadinessProbeUnreachable', 'dev/shell/Resource', null],
      ['RuntimeListensOnLoopback', 'dev/shell/Resource', '127.0.0.1'],
    ]);
  });

  test('a template patched to Managed routes through the controller policy that cannot admit this router', () => {
    const env = newEnvironment(rel, 'dev', { defaultNamespace: 'dev-sandboxes' });
    const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    const shell = env.addTemplate('shell', {
      runtimeClass: rc,
      podSpec: sandboxdPodSpec({ image: SANDBOXD, release: 'v1.0.3', resources: { cpu: '250m', memory: '256Mi' } }),
      runtime: SANDBOXD_RUNTIME,
      networkPolicyManagement: 'Unmanaged',
    });
    env.addRouter('router', {
      image: ROUTER_IMAGE,
      namespace: 'routing',
      authorization: { mode: 'tokenreview' },
      callers: [],
    });
    expect(() => synthesizeEnvironment(env)).not.toThrow();
    shell.apiObject.addJsonPatch(JsonPatch.replace('/spec/networkPolicyManagement', 'Managed'));
    const err = thrownBy(() => synthesizeEnvironment(env), OutputRuleError, 'OutputRuleBroken');
    expect(rulesOf(err)).toEqual([['RouterPeerMismatch', 'dev/shell/Resource', 'spec.networkPolicyManagement']]);
  });

  test('cdk8s synthesis refuses the same patch', () => {
    const { env, policy } = build(rel);
    policy.apiObject.addJsonPatch(JsonPatch.replace(INGRESS_PORT, k8s.IntOrString.fromNumber(9999)));
    const err = thrownBy(() => Testing.synth(env), ConstructError, 'ConstructInvalid');
    expect(err.path).toBe('dev');
  });
});

test('acknowledged: the port patch synthesizes and is recorded in the descriptor and the lock', () => {
  const { env, policy } = build(rel);
  policy.apiObject.addJsonPatch(JsonPatch.replace(INGRESS_PORT, k8s.IntOrString.fromNumber(9999)));
  env.acknowledge({ rule: 'RuntimePortNotAllowed', path: policy, reason: 'runtime reached through a sidecar on 9999' });
  const s = synthesizeEnvironment(env);
  expect(s.descriptor.acknowledgements).toEqual([
    { rule: 'RuntimePortNotAllowed', path: 'dev/shell-policy', reason: 'runtime reached through a sidecar on 9999' },
  ]);
  expect(environmentsLock(rel, [s.descriptor]).acknowledgements).toEqual({
    'dev/RuntimePortNotAllowed/dev/shell-policy': 'runtime reached through a sidecar on 9999',
  });
});
