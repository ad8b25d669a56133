/**
 * Case recreate-adopts-stale-template (adapter side): the template hash a session actually got. The case's live state,
 * as objects: pool `py-pool` (replicas 2, Recreate) serving template `py`, whose image went from `:1.0` to `:1.1`; both
 * old members carried the old blueprint hash, one is Terminating, claim `c7` was bound to the other. The adapter stored
 * the members' hash labels on `c7` when creating it (adoption then removed the label from the Sandbox). The real
 * controller producing these states is exercised in test/cluster/adapter-template-hash.test.ts.
 */
import { POOL_HASHES_ANNOTATION } from '../../src/adapter/kubernetes/resources.js';
import {
  listedHashes,
  parseListedHashes,
  poolMembers,
  templateState,
  TEMPLATE_HASH_LABEL,
  type LabelledSandbox,
} from '../../src/adapter/kubernetes/template-hash.js';

const H_OLD = '776636bb';
/** As the controller writes a member of a Managed template without custom rules: secure defaults applied (utils.go@v0.5.6). */
const podTemplate = (image: string) => ({
  podTemplate: {
    spec: {
      automountServiceAccountToken: false,
      dnsPolicy: 'None',
      dnsConfig: { nameservers: ['8.8.8.8', '1.1.1.1'] },
      containers: [{ name: 'runtime', image, resources: {} }],
    },
  },
});
const owner = (kind: string, name: string) => [{ kind, name, controller: true }];
const poolMember = (name: string, extra: Record<string, unknown> = {}): LabelledSandbox => ({
  metadata: {
    name,
    labels: { [TEMPLATE_HASH_LABEL]: H_OLD, 'agents.x-k8s.io/warm-pool-sandbox': 'x' },
    ownerReferences: owner('SandboxWarmPool', 'py-pool'),
    ...extra,
  },
  spec: podTemplate('registry.example/runtime:1.0'),
});
const template = {
  metadata: { name: 'py', generation: 2 },
  spec: { podTemplate: { spec: { containers: [{ name: 'runtime', image: 'registry.example/runtime:1.1' }] } } },
};

test('c7 is bound to an old-template sandbox: hash from the listing on the claim, current hash unknown (rollout pending), stale with the image', () => {
  // At create: both members listed with their labels and stored on the claim as an annotation.
  const annotation = JSON.stringify(listedHashes([poolMember('py-pool-a'), poolMember('py-pool-b')]));
  const c7 = { metadata: { name: 'c7', annotations: { [POOL_HASHES_ANNOTATION]: annotation } } };
  // Now: py-pool-a Terminating; py-pool-b adopted by c7 (labels gone, owner the claim, spec unchanged).
  const live = [
    poolMember('py-pool-a', { deletionTimestamp: '2026-11-29T10:00:00Z' }),
    {
      metadata: {
        name: 'py-pool-b',
        labels: { 'agents.x-k8s.io/launch-type': 'warm' },
        ownerReferences: owner('SandboxClaim', 'c7'),
      },
      spec: podTemplate('registry.example/runtime:1.0'),
    },
  ];
  const members = poolMembers(live, 'py-pool');
  expect(members).toEqual([]);
  const listed = parseListedHashes(c7.metadata.annotations[POOL_HASHES_ANNOTATION])!;
  const state = templateState(live[1]!, template, members, { listed });
  expect(state).toEqual({
    templateHash: H_OLD,
    staleTemplate: true,
    templateReason: 'TemplateStale',
    templateMessage:
      `Sandbox py-pool-b has hash ${H_OLD} (label ${TEMPLATE_HASH_LABEL} of pool member py-pool-b, listed before the claim was created); ` +
      "current hash unknown: none of the 0 live pool member(s) is at template py's current blueprint yet (rollout pending, pool at 0, or OnReplenish keeping old members); " +
      'stale against template py generation 2: podTemplate.spec.containers[0].image: registry.example/runtime:1.0 ≠ template registry.example/runtime:1.1',
  });
});

test('once a fresh member exists, its hash is the current one and differs from what c7 got', () => {
  const fresh: LabelledSandbox = {
    metadata: {
      name: 'py-pool-c',
      labels: { [TEMPLATE_HASH_LABEL]: '708b7854' },
      ownerReferences: owner('SandboxWarmPool', 'py-pool'),
    },
    spec: podTemplate('registry.example/runtime:1.1'),
  };
  const adopted: LabelledSandbox = {
    metadata: { name: 'py-pool-b', ownerReferences: owner('SandboxClaim', 'c7') },
    spec: podTemplate('registry.example/runtime:1.0'),
  };
  const state = templateState(adopted, template, [fresh], { listed: { [H_OLD]: ['py-pool-a', 'py-pool-b'] } });
  expect(state).toMatchObject({
    templateHash: H_OLD,
    currentTemplateHash: '708b7854',
    staleTemplate: true,
    templateReason: 'TemplateStale',
  });
});

test('without a listing (claim made by another client) and no member sharing its blueprint, the hash stays unknown but staleness is still told', () => {
  const adopted: LabelledSandbox = {
    metadata: { name: 'py-pool-b', ownerReferences: owner('SandboxClaim', 'c7') },
    spec: podTemplate('registry.example/runtime:1.0'),
  };
  const state = templateState(adopted, template, [], {});
  expect(state.templateHash).toBeUndefined();
  expect(state).toMatchObject({ staleTemplate: true, templateReason: 'TemplateStale' });
  // prose: the message says why the bound hash is unknown, which the stale verdict's code does not
  expect(state.templateMessage).toMatch(
    /^Sandbox py-pool-b's hash: adoption removed the label .* no live pool member has Sandbox py-pool-b's blueprint: unknown; /,
  );
});
