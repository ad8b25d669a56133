import { Testing } from 'cdk8s';
import { VerifierAccess, verifierClusterRules, verifierSandboxRules } from '../../../src/constructs/verifier-access.js';
import { ConstructPropsError } from '../../../src/constructs/errors.js';
import { thrownBy } from '../thrown.js';

interface Obj {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Array<{ apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }>;
}

function synth(props: ConstructorParameters<typeof VerifierAccess>[2]): Obj[] {
  const chart = Testing.chart();
  new VerifierAccess(chart, 'verifier', props);
  return Testing.synth(chart) as Obj[];
}

describe('VerifierAccess', () => {
  test('emits a ServiceAccount, a ClusterRole + binding, and a Role + binding per namespace', () => {
    const objs = synth({
      namespace: 'agentplane',
      sandboxNamespaces: ['sbx', 'sbx'],
      routerNamespace: 'agent-sandbox-system',
    });
    expect(objs.map((o) => `${o.kind} ${o.metadata.namespace ?? '-'}/${o.metadata.name}`).sort()).toEqual([
      'ClusterRole -/agentplane-verifier',
      'ClusterRoleBinding -/agentplane-verifier',
      'Role agent-sandbox-system/agentplane-verifier',
      'Role kube-system/agentplane-verifier',
      'Role sbx/agentplane-verifier',
      'RoleBinding agent-sandbox-system/agentplane-verifier',
      'RoleBinding kube-system/agentplane-verifier',
      'RoleBinding sbx/agentplane-verifier',
      'ServiceAccount agentplane/agentplane-verifier',
    ]);
  });

  test('lists pods (read only) in the controller and router namespaces, for the images probe', () => {
    const rulesIn = (objs: ReturnType<typeof synth>, ns: string) =>
      objs.filter((o) => o.kind === 'Role' && o.metadata.namespace === ns).flatMap((o) => o.rules ?? []);
    const podRules = (objs: ReturnType<typeof synth>, ns: string) =>
      rulesIn(objs, ns).filter((r) => (r.resources as string[]).includes('pods'));
    const same = synth({
      namespace: 'agentplane',
      sandboxNamespaces: ['sbx'],
      routerNamespace: 'agent-sandbox-system',
    });
    expect(podRules(same, 'agent-sandbox-system')).toEqual([{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }]);
    const apart = synth({ namespace: 'agentplane', sandboxNamespaces: ['sbx'], routerNamespace: 'routing' });
    expect(podRules(apart, 'agent-sandbox-system')).toEqual([
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
    ]);
    expect(podRules(apart, 'routing')).toEqual([{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }]);
  });

  test('never grants pods/exec, pods/attach, secrets, wildcards, or writes beyond its own probe objects', () => {
    const rules = synth({
      namespace: 'agentplane',
      sandboxNamespaces: ['sbx'],
      routerNamespace: 'agent-sandbox-system',
    }).flatMap((o) => o.rules ?? []);
    const resources = rules.flatMap((r) => r.resources);
    expect(resources).not.toContain('pods/exec');
    expect(resources).not.toContain('pods/attach');
    expect(resources).not.toContain('secrets');
    expect(rules.flatMap((r) => [...r.verbs, ...r.resources, ...r.apiGroups])).not.toContain('*');
    const writers = rules.filter((r) => r.verbs.some((v) => ['create', 'delete', 'update', 'patch'].includes(v)));
    expect(
      writers
        .map(
          (r) =>
            `${r.resources.join(',')}:${r.verbs.filter((v) => v !== 'get' && v !== 'list' && v !== 'watch').join(',')}`,
        )
        .sort(),
    ).toEqual([
      'pods/portforward:create',
      'sandboxclaims,sandboxwarmpools:create,delete',
      'sandboxes:create,delete',
      'subjectaccessreviews:create',
    ]);
  });

  test('port-forward gets both verbs its WebSocket upgrade is authorized for (get, then create), and no others', () => {
    const pf = verifierSandboxRules({ portForward: true }).filter((r) => r.resources.includes('pods/portforward'));
    expect(pf).toEqual([{ apiGroups: [''], resources: ['pods/portforward'], verbs: ['get', 'create'] }]);
  });

  test('port-forward and SubjectAccessReview rights can be turned off', () => {
    expect(verifierSandboxRules({ portForward: false }).flatMap((r) => r.resources)).not.toContain('pods/portforward');
    expect(verifierClusterRules({ checkControllerRbac: false }).flatMap((r) => r.resources)).not.toContain(
      'subjectaccessreviews',
    );
  });

  test('patch on Sandboxes only for suspend-resume, and on nothing else', () => {
    const patched = (suspendResume?: boolean) =>
      verifierSandboxRules({ portForward: true, ...(suspendResume === undefined ? {} : { suspendResume }) })
        .filter((r) => r.verbs.includes('patch'))
        .map((r) => r.resources.join(','));
    expect([patched(), patched(false), patched(true)]).toEqual([[], [], ['sandboxes']]);
  });

  test('CRD reads are limited to the four Agent Sandbox CRDs by name', () => {
    const crd = verifierClusterRules({ checkControllerRbac: true }).find((r) =>
      r.resources.includes('customresourcedefinitions'),
    )!;
    expect(crd.verbs).toEqual(['get']);
    expect(crd.resourceNames).toHaveLength(4);
  });

  test('bad props name the construct path, the field and the value', () => {
    const err = thrownBy(
      () => synth({ namespace: 'Bad_NS', sandboxNamespaces: [] }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(err.problems.map(({ prop, reason, value }) => ({ prop, reason, value }))).toEqual([
      { prop: 'namespace', reason: 'InvalidFormat', value: 'Bad_NS' },
      { prop: 'sandboxNamespaces', reason: 'TooSmall', value: [] },
    ]);
  });
});
