/**
 * Probe of the `controller` capability (and the `--extensions` half of `extensions-api`).
 *
 * Deployment mode (`k8s/controller.yaml@tag`: Deployment `agent-sandbox-system/agent-sandbox-controller`):
 * discovered = the Deployment exists; compatible = its image is the pinned one (or the environment's declared mirror
 * of it); configured = Available=True at the Deployment's current generation AND every right the pinned RBAC grants
 * (plus known upstream gaps; in the namespaces the environment's `rbac` prop narrowed a resource to, see
 * {@link scopedNeeds}) is allowed for its ServiceAccount by SubjectAccessReview (case controller-rbac-gaps).
 * External mode (the controller runs outside the cluster, e.g. the test cluster): discovered = its ServiceAccount
 * exists; compatible = the live CRDs' release label equals the pinned release (the binary's version cannot be read from
 * the API; the evidence says so); configured = the SubjectAccessReviews as above.
 * `verified` comes from the workload probe: a Sandbox the controller reconciled to Ready at its current generation.
 */
import { roleView } from '../../adapter/kubernetes/views.js';
import { mapLimit } from '../../model/arrays.js';
import type { Evidence } from '../evidence.js';
import type { Probe } from '../runner.js';
import { Facts, reads, type ProbeDeps } from './common.js';

/** One right to check: SubjectAccessReview resource attributes (no namespace = cluster-wide). */
export interface Need {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
}

/**
 * Rights the controller needs although the pinned RBAC of some tags lacks them (case controller-rbac-gaps):
 * core-group `events` create for leader-election events (kubernetes-sigs/agent-sandbox#1079, fixed in v0.5.6 only).
 */
export const KNOWN_GAPS: readonly Need[] = [{ verb: 'create', group: '', resource: 'events' }];

/**
 * The rights granted to the controller by the pinned release's ClusterRoles and Roles named `agent-sandbox-controller*`
 * (`k8s/rbac.generated.yaml@tag`, `k8s/extensions-rbac.generated.yaml@tag`, `k8s/controller.yaml@tag`), plus
 * {@link KNOWN_GAPS}; the extensions ClusterRole only when `extensions` is true. Deduplicated, in file order.
 */
export function controllerNeeds(objects: Iterable<readonly object[]>, extensions: boolean): Need[] {
  const out = new Map<string, Need>();
  const add = (n: Need): void => {
    out.set(`${n.verb} ${n.group}/${n.resource}/${n.subresource ?? ''} ${n.namespace ?? '*'} ${n.name ?? ''}`, n);
  };
  for (const list of objects) {
    for (const o of list) {
      const role = roleView(o);
      const name = role?.meta.name ?? '';
      if (!role || !name.startsWith('agent-sandbox-controller')) continue;
      if (name.includes('extensions') && !extensions) continue;
      const namespace = role.kind === 'Role' ? role.meta.namespace : undefined;
      for (const rule of role.rules) {
        for (const group of rule.apiGroups) {
          for (const res of rule.resources) {
            const [resource, subresource] = res.split('/');
            for (const verb of rule.verbs) {
              const names = rule.resourceNames.length ? rule.resourceNames : [undefined];
              for (const n of names)
                add({
                  verb,
                  group,
                  resource: resource!,
                  ...(subresource ? { subresource } : {}),
                  ...(namespace ? { namespace } : {}),
                  ...(n ? { name: n } : {}),
                });
            }
          }
        }
      }
    }
  }
  for (const gap of KNOWN_GAPS) add(gap);
  return [...out.values()];
}

/**
 * The needs as the environment scoped them: a cluster-wide need on a resource the install's `rbac` prop narrowed to
 * namespaces (`plural` or `plural.group`, e.g. `events`, `events.events.k8s.io`) becomes one need per namespace, so a
 * narrowing the environment chose is checked where it grants, not reported as a missing cluster-wide right. Other
 * needs are kept as they are.
 */
export function scopedNeeds(
  needs: readonly Need[],
  narrowed: ReadonlyArray<{ readonly resources: readonly string[]; readonly namespaces: readonly string[] }> = [],
): Need[] {
  const namespacesOf = new Map<string, readonly string[]>();
  for (const n of narrowed) for (const r of n.resources) namespacesOf.set(r, n.namespaces);
  const out = new Map<string, Need>();
  for (const need of needs) {
    const namespaces =
      need.namespace === undefined
        ? namespacesOf.get(need.group ? `${need.resource}.${need.group}` : need.resource)
        : undefined;
    for (const namespace of namespaces ?? [need.namespace]) {
      const n = namespace === undefined ? need : { ...need, namespace };
      out.set(describeNeed(n), n);
    }
  }
  return [...out.values()];
}

/** `create events` / `update sandboxes.agents.x-k8s.io/finalizers in ns` — how a right is named in evidence. */
export function describeNeed(n: Need): string {
  const res = `${n.resource}${n.group ? `.${n.group}` : ''}${n.subresource ? `/${n.subresource}` : ''}`;
  return `${n.verb} ${res}${n.name ? ` "${n.name}"` : ''}${n.namespace ? ` in ${n.namespace}` : ' (cluster-wide)'}`;
}

export function controllerProbe(
  deps: ProbeDeps,
  opts: { mode: 'deployment' | 'external'; extensions: boolean; image?: string; needs: readonly Need[] },
): Probe {
  return {
    id: 'controller',
    after: ['install'],
    covers: ['controller', 'extensions-api'],
    timeoutStep: 'configured',
    deadlineMs: 30_000,
    async run(ctx) {
      const { plan, facts } = deps;
      const read = reads(deps);
      const f = new Facts('controller');
      const ext = new Facts('extensions-api');
      const { namespace, deployment, serviceAccount } = plan.controller;
      const subject = `Deployment ${namespace}/${deployment}`;
      let running = false;
      if (opts.mode === 'deployment') {
        const r = await read.deployment(namespace, deployment);
        if (r.kind !== 'ok') f.failedCall('discovered', subject, r);
        else if (r.value === undefined)
          f.add(
            'discovered',
            'missing',
            subject,
            'DeploymentNotFound',
            `controller Deployment ${namespace}/${deployment} not found`,
          );
        else {
          const d = r.value;
          f.proven('discovered', subject, 'DeploymentFound', `controller Deployment ${namespace}/${deployment} exists`);
          const image = d.image;
          const want = opts.image ?? plan.controller.image ?? facts.controllerImage;
          if (image === want)
            f.proven('compatible', subject, 'ImagePinned', `controller image is the pinned ${image}`, {
              field: 'spec.template.spec.containers[0].image',
              value: image,
            });
          else
            f.add(
              'compatible',
              'missing',
              subject,
              'ImageDiffers',
              `controller image is ${image || 'unset'}, pinned is ${want}`,
              { field: 'spec.template.spec.containers[0].image', value: image },
            );
          const args = d.args;
          if (opts.extensions) {
            if (args.includes('--extensions') || args.includes('--extensions=true'))
              ext.proven('configured', subject, 'ExtensionsEnabled', 'controller runs with --extensions', {
                field: 'args',
                value: args.join(' '),
              });
            else
              ext.add(
                'configured',
                'missing',
                subject,
                'ExtensionsDisabled',
                'controller runs without --extensions: claims, templates and pools are never reconciled (cmd/agent-sandbox-controller/main.go@v0.5.6)',
                { field: 'args', value: args.join(' ') },
              );
          }
          const gen = d.meta.generation;
          const available = d.condition('Available');
          const availableStatus = !available.present
            ? 'absent'
            : { true: 'True', false: 'False', unknown: 'Unknown' }[available.value];
          if (d.observedGeneration !== gen) {
            f.add(
              'configured',
              'unknown',
              subject,
              'StaleObservedGeneration',
              d.observedGeneration === undefined
                ? `Deployment status was never written (spec at generation ${gen}): no deployment controller has observed it; if the Agent Sandbox controller runs outside the cluster, pass --controller external`
                : `Deployment status is for generation ${d.observedGeneration}, spec is at ${gen}: rollout not observed yet`,
              { field: 'status.observedGeneration' },
            );
          } else if (available.value === 'true' && d.updatedReplicas >= 1) {
            running = true;
            f.proven(
              'configured',
              subject,
              'ControllerAvailable',
              `controller Available with ${d.availableReplicas} replica(s) at generation ${gen}`,
              { field: 'status.conditions[Available]', value: 'True' },
            );
          } else {
            f.add(
              'configured',
              'missing',
              subject,
              'ControllerNotAvailable',
              `controller is not Available (${available.present ? available.reason : 'no Available condition'}); the install stays at compatible until it is`,
              { field: 'status.conditions[Available]', value: availableStatus },
            );
          }
        }
      } else {
        const saSubject = `ServiceAccount ${namespace}/${serviceAccount}`;
        const sa = await read.serviceAccount(namespace, serviceAccount);
        if (sa.kind !== 'ok') f.failedCall('discovered', saSubject, sa);
        else if (sa.value === undefined)
          f.add(
            'discovered',
            'missing',
            saSubject,
            'ServiceAccountNotFound',
            `the controller's ServiceAccount ${namespace}/${serviceAccount} does not exist`,
          );
        else
          f.proven(
            'discovered',
            saSubject,
            'ServiceAccountFound',
            `controller declared out-of-cluster; its ServiceAccount ${namespace}/${serviceAccount} exists`,
          );
        const label = ctx.evidence.find(
          (e) => e.capability === 'sandbox-api' && e.step === 'compatible' && e.verdict === 'proven',
        );
        const labelMissing = ctx.evidence.find(
          (e) => e.capability === 'sandbox-api' && e.step === 'compatible' && e.verdict !== 'proven',
        );
        if (label && !labelMissing)
          f.proven(
            'compatible',
            'install',
            'InstallMatchesRelease',
            `controller version is not readable from the API (it runs outside the cluster); the install's CRDs are those pinned for ${facts.tag}`,
          );
        else
          f.add(
            'compatible',
            'unknown',
            'install',
            'InstallDiffersFromRelease',
            `controller version is not readable (out-of-cluster) and the install's CRDs do not match ${facts.tag}`,
          );
        running = true;
        if (opts.extensions) {
          const stamped = await templateStamped(deps);
          if (stamped)
            ext.proven(
              'configured',
              stamped,
              'TemplatesStamped',
              'the extensions controller reconciles templates: it stamped agents.x-k8s.io/sandbox-template-ref-hash',
              { field: 'metadata.labels' },
            );
          else
            ext.add(
              'configured',
              'unknown',
              'SandboxTemplates',
              'TemplatesNotStamped',
              'no declared SandboxTemplate carries the controller-stamped agents.x-k8s.io/sandbox-template-ref-hash label yet, so the extensions controller is not seen running',
            );
        }
      }
      f.list.push(...(await rbacEvidence(deps, opts.needs)));
      if (!running) ctx.note('controller not running: RBAC checked anyway');
      return [...f.list, ...ext.list] as Evidence[];
    },
  };
}

async function templateStamped(deps: ProbeDeps): Promise<string | undefined> {
  const read = reads(deps);
  for (const t of deps.plan.templates) {
    const r = await read.template(t.namespace, t.name);
    if (r.kind === 'ok' && r.value?.meta.labels['agents.x-k8s.io/sandbox-template-ref-hash'])
      return `SandboxTemplate ${t.namespace}/${t.name}`;
  }
  return undefined;
}

/**
 * SubjectAccessReviews in flight at once: a review is a cheap, stateless authorizer call, so 16 keep the 60-odd of the
 * pinned RBAC to four round trips, far below the API server's in-flight limit (400 by default).
 */
const SAR_PARALLELISM = 16;

/** SubjectAccessReviews for each need, as the controller's ServiceAccount; one piece of `configured` evidence listing every missing right. */
async function rbacEvidence(deps: ProbeDeps, needs: readonly Need[]): Promise<Evidence[]> {
  const { namespace, serviceAccount } = deps.plan.controller;
  const user = `system:serviceaccount:${namespace}:${serviceAccount}`;
  const f = new Facts('controller');
  const missing: string[] = [];
  const unknown: string[] = [];
  const started = Date.now();
  // SubjectAccessReviews are independent: SAR_PARALLELISM at a time, each paced by the client's shared rate limit.
  const answers = await mapLimit(needs, SAR_PARALLELISM, (n) =>
    deps.cluster.canI(user, {
      verb: n.verb,
      group: n.group,
      resource: n.resource,
      ...(n.subresource ? { subresource: n.subresource } : {}),
      ...(n.namespace ? { namespace: n.namespace } : {}),
      ...(n.name ? { name: n.name } : {}),
    }),
  );
  needs.forEach((n, i) => {
    const r = answers[i]!;
    if (r.kind !== 'ok') unknown.push(`${describeNeed(n)} (${r.kind === 'failed' ? r.error.message : r.kind})`);
    else if (!r.value.allowed) missing.push(describeNeed(n));
  });
  const subject = `RBAC of ${user}`;
  const durationMs = Date.now() - started;
  if (unknown.length > 0)
    f.add(
      'configured',
      'unknown',
      subject,
      'AccessReviewFailed',
      `could not check ${unknown.length} right(s) by SubjectAccessReview: ${unknown.slice(0, 3).join('; ')}`,
      { durationMs },
    );
  if (missing.length > 0)
    f.add(
      'configured',
      'missing',
      subject,
      'RightsMissing',
      `controller lacks ${missing.length} right(s): ${missing.join('; ')}`,
      { value: missing.join('; '), durationMs },
    );
  const narrowed = deps.plan.controller.rbacNarrowed ?? [];
  const scope =
    narrowed.length === 0
      ? ''
      : `, with ${narrowed.map((n) => `${n.resources.join(', ')} in ${n.namespaces.join(', ')}`).join('; ')} as the environment narrowed them (rbac prop)`;
  if (unknown.length === 0 && missing.length === 0)
    f.proven(
      'configured',
      subject,
      'RightsGranted',
      `all ${needs.length} rights of the pinned RBAC are allowed (SubjectAccessReview)${scope}`,
      { durationMs },
    );
  return f.list;
}
