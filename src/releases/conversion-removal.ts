/**
 * What leaving the conversion webhook takes (v0.5 -> v1.0): the v1.0 CRDs serve and store only v1beta1 and have no
 * `spec.conversion` (`k8s/crds/*.yaml@v1.0.3`), the controller has no webhook server, flags or cert Secret
 * (`cmd/agent-sandbox-controller/main.go@v1.0.3`), and four objects of the v0.5 install are no longer shipped
 * (`k8s/controller.yaml@v1.0.3`). Findings with stable reasons, and the steps they add to a plan's path before and after
 * the target is installed.
 */
import type { ReleaseTag } from './types.js';

/** A finding as upgrade-plan.ts's `UpgradeFinding` has it (declared here so the two files do not import each other). */
export interface RemovalFinding {
  readonly severity: 'migrate' | 'review';
  readonly topic: 'advice';
  readonly reason:
    | 'AlphaClientsBreak'
    | 'ConversionWebhookRemoved'
    | 'CrdsBeforeController'
    | 'WebhookFlagsRemoved'
    | 'OrphanedWebhookObjects';
  readonly message: string;
  readonly operations: ReadonlyArray<'createFromTemplate' | 'observe' | 'terminate' | 'capabilities'>;
  readonly source: string;
}

/** The namespace the upstream manifests install the controller into (`k8s/controller.yaml@v1.0.3`). */
export const CONTROLLER_NAMESPACE = 'agent-sandbox-system';

/** Objects a v0.5 install has that v1.0 no longer ships: delete them after the upgrade (`docs/api-migration-guide.md@v1.0.3`). */
export const WEBHOOK_ORPHANS: ReadonlyArray<{
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
}> = [
  { kind: 'Service', name: 'agent-sandbox-webhook-service', namespace: CONTROLLER_NAMESPACE },
  { kind: 'Secret', name: 'agent-sandbox-webhook-certs', namespace: CONTROLLER_NAMESPACE },
  { kind: 'Role', name: 'agent-sandbox-controller', namespace: CONTROLLER_NAMESPACE },
  { kind: 'RoleBinding', name: 'agent-sandbox-controller', namespace: CONTROLLER_NAMESPACE },
];

/** The JSON merge patch that removes a webhook conversion stanza, whoever owns its fields. */
export const CONVERSION_NONE_PATCH = '{"spec":{"conversion":{"strategy":"None","webhook":null}}}';

/** The controller flags of v0.5 that v1.0 no longer defines (an unknown flag makes the controller exit 2). */
export const REMOVED_WEBHOOK_FLAGS: readonly string[] = [
  '--webhook-port',
  '--webhook-cert-dir',
  '--webhook-cert-name',
  '--webhook-key-name',
  '--webhook-service-name',
  '--webhook-namespace',
  '--manage-webhook-certs',
  '--enable-webhook',
];

/** Findings and path steps of a move to `to`, a release without the conversion webhook, from one that had it. */
export function conversionRemovalFindings(to: ReleaseTag): {
  findings: RemovalFinding[];
  before: string[];
  after: string[];
} {
  const orphans = WEBHOOK_ORPHANS.map((o) => `${o.kind} ${o.name}`).join(', ');
  const alpha: RemovalFinding = {
    severity: 'migrate',
    topic: 'advice',
    reason: 'AlphaClientsBreak',
    message: `${to} serves only v1beta1: every request for v1alpha1 (manifests, kubectl, SDKs, Go clients) fails with 404; move every client to v1beta1 before installing ${to}`,
    operations: ['createFromTemplate', 'observe', 'terminate', 'capabilities'],
    source: 'docs/api-migration-guide.md@v1.0.3',
  };
  const conversion: RemovalFinding = {
    severity: 'migrate',
    topic: 'advice',
    reason: 'ConversionWebhookRemoved',
    message: `the ${to} CRDs have no spec.conversion; a caBundle written by another field manager (the v0.5 controller, a CA injector) survives a server-side apply and the CRD is refused: merge-patch each CRD with ${CONVERSION_NONE_PATCH} first`,
    operations: ['capabilities'],
    source: 'k8s/crds@' + to,
  };
  const order: RemovalFinding = {
    severity: 'migrate',
    topic: 'advice',
    reason: 'CrdsBeforeController',
    message: `apply the ${to} CRDs before the controller: a ${to} controller serves no webhook while the old CRDs still name it, so conversions (its own list/watch included) fail`,
    operations: ['createFromTemplate', 'observe', 'terminate', 'capabilities'],
    source: 'docs/api-migration-guide.md@v1.0.3',
  };
  const flags: RemovalFinding = {
    severity: 'review',
    topic: 'advice',
    reason: 'WebhookFlagsRemoved',
    message: `the ${to} controller no longer defines ${REMOVED_WEBHOOK_FLAGS.join(', ')}: passing any makes it exit 2`,
    operations: ['capabilities'],
    source: `cmd/agent-sandbox-controller/main.go@${to}`,
  };
  const orphaned: RemovalFinding = {
    severity: 'migrate',
    topic: 'advice',
    reason: 'OrphanedWebhookObjects',
    message: `${to} no longer ships ${orphans} in ${CONTROLLER_NAMESPACE}: delete them after the upgrade (not the ClusterRole or ClusterRoleBinding)`,
    operations: ['capabilities'],
    source: `k8s/controller.yaml@${to}`,
  };
  return {
    findings: [alpha, conversion, order, flags, orphaned],
    before: [
      `move every client to v1beta1 (${to} answers 404 for v1alpha1)`,
      `merge-patch the conversion off each Agent Sandbox CRD: kubectl patch crd NAME --type=merge -p '${CONVERSION_NONE_PATCH}'`,
      `apply the ${to} CRDs first, and only then the controller`,
    ],
    after: [`delete what ${to} no longer ships, in ${CONTROLLER_NAMESPACE}: ${orphans}`],
  };
}
