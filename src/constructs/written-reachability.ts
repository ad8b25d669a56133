/**
 * Reachability checked on the written objects (escape hatches applied), as the construct props are checked when the
 * constructs are built: the router's path to each sandbox runtime (cases netpol-router-peer-mismatch,
 * router-podip-ssrf) and the kubelet's readiness probe of the runtime. A patch on the SandboxNetworkPolicy (its pod
 * selector, ingress peers or ports), on the template (its pod labels, `networkPolicyManagement`, the runtime's
 * `--listen-host` or probe) or on the router (its pod labels, namespace, egress ports) is judged here; the violation
 * names the ApiObject whose written value breaks the path.
 */
import { isPlainObject } from '../model/objects.js';
import type { OutputRule } from '../model/output-rules.js';
import type { Json } from './kube-object.js';
import { LABEL_ENVIRONMENT, LABEL_TEMPLATE } from './metadata.js';
import type { SandboxNetworkPolicy } from './network-policy.js';
import { objectIdentity } from './output-checks.js';
import { templateRuntimeBind } from './readiness.js';
import type { RenderedObject } from './render.js';
import { CONTROLLER_POLICY_ROUTER_PEER, type SandboxRouter } from './router.js';
import type { SandboxTemplate } from './template.js';
import type { TemplateRuntimeBind } from './template-runtime.js';
import type { OutputRuleViolation } from './written-rules.js';

type Labels = Readonly<Record<string, string>>;

/** `obj[key]` as an object, `{}` when absent (read only: the rendered objects are not touched). */
function child(obj: unknown, key: string): Json {
  const cur = isPlainObject(obj) ? obj[key] : undefined;
  return isPlainObject(cur) ? cur : {};
}

/** `obj[key]` as an array, `[]` when absent. */
function list(obj: unknown, key: string): unknown[] {
  const cur = isPlainObject(obj) ? obj[key] : undefined;
  return Array.isArray(cur) ? cur : [];
}

/** The parts of an environment whose written objects the checks read. */
export interface ReachabilityParts {
  readonly environment: string;
  readonly templates: readonly SandboxTemplate[];
  readonly routers: readonly SandboxRouter[];
  readonly policies: readonly SandboxNetworkPolicy[];
}

function labelsOf(v: unknown): Labels {
  const out: Record<string, string> = {};
  if (isPlainObject(v)) for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

/** Whether a label selector (matchLabels + matchExpressions) selects pods labelled `labels`; absent selects all. */
export function selects(selector: unknown, labels: Labels): boolean {
  if (!isPlainObject(selector)) return true;
  for (const [k, v] of Object.entries(labelsOf(selector['matchLabels']))) if (labels[k] !== v) return false;
  for (const e of list(selector, 'matchExpressions')) {
    if (!isPlainObject(e)) return false;
    const key = String(e['key']);
    const values = list(e, 'values').map(String);
    const has = Object.hasOwn(labels, key);
    const ok =
      e['operator'] === 'In'
        ? has && values.includes(labels[key]!)
        : e['operator'] === 'NotIn'
          ? !has || !values.includes(labels[key]!)
          : e['operator'] === 'Exists'
            ? has
            : e['operator'] === 'DoesNotExist'
              ? !has
              : false;
    if (!ok) return false;
  }
  return true;
}

/** Whether a NetworkPolicy peer admits pods labelled `labels` in `namespace` (an ipBlock admits no pod for certain). */
function peerAdmits(peer: unknown, namespace: string, labels: Labels, policyNamespace: string): boolean {
  if (!isPlainObject(peer) || peer['ipBlock'] !== undefined) return false;
  const nsOk =
    peer['namespaceSelector'] === undefined
      ? namespace === policyNamespace
      : selects(peer['namespaceSelector'], { 'kubernetes.io/metadata.name': namespace });
  return nsOk && selects(peer['podSelector'], labels);
}

/** Whether a rule's `ports` admit one of `ports` on TCP (absent or empty admits every port). */
function portsAdmit(rule: Json, ports: readonly number[], named: Readonly<Record<string, number>>): boolean {
  const given = list(rule, 'ports');
  if (given.length === 0) return true;
  return given.some((p) => {
    if (!isPlainObject(p) || (p['protocol'] ?? 'TCP') !== 'TCP') return false;
    if (p['port'] === undefined) return true;
    const port = typeof p['port'] === 'string' ? named[p['port']] : Number(p['port']);
    if (port === undefined) return false;
    const end = typeof p['endPort'] === 'number' ? p['endPort'] : port;
    return ports.some((x) => x >= port && x <= end);
  });
}

/** Whether `a` holds every label of `b`. */
function holds(a: Labels, b: Labels): boolean {
  return Object.entries(b).every(([k, v]) => a[k] === v);
}

interface Written {
  readonly item: RenderedObject;
  readonly json: Json;
}

function writtenAt(objects: readonly RenderedObject[], path: string, kind?: string): Written | undefined {
  const item = objects.find(
    (o) =>
      (o.constructPath === path || o.constructPath.startsWith(`${path}/`)) &&
      (kind === undefined || o.object.kind === kind),
  );
  return item === undefined ? undefined : { item, json: item.object as unknown as Json };
}

function violation(rule: OutputRule, at: Written, field: string, value: unknown, message: string): OutputRuleViolation {
  const object = objectIdentity(at.item);
  return {
    rule,
    path: at.item.constructPath,
    object,
    field,
    ...(value !== undefined ? { value } : {}),
    message: `${object.kind} ${object.namespace === undefined ? '' : `${object.namespace}/`}${object.name}: ${message}`,
  };
}

/** The written template's pod: namespace, labels, pod spec, runtime container (undefined when gone), named ports. */
function podOf(t: Written, template: SandboxTemplate) {
  const podTemplate = child(child(t.json, 'spec'), 'podTemplate');
  const spec = child(podTemplate, 'spec');
  const runtime = list(spec, 'containers').find(
    (c): c is Json => isPlainObject(c) && c['name'] === template.runtime.container,
  );
  const named: Record<string, number> = {};
  for (const p of runtime === undefined ? [] : list(runtime, 'ports'))
    if (isPlainObject(p) && typeof p['name'] === 'string') named[p['name']] = Number(p['containerPort']);
  return {
    namespace: String(child(t.json, 'metadata')['namespace']),
    labels: labelsOf(child(podTemplate, 'metadata')['labels']),
    spec,
    runtime,
    named,
  };
}

/** Where the written runtime container binds; undefined for a custom runtime, a missing container or a refused flag. */
function writtenBind(template: SandboxTemplate, spec: Json, hasRuntime: boolean): TemplateRuntimeBind | undefined {
  if (!hasRuntime) return undefined;
  try {
    return templateRuntimeBind(template.node.path, template.release.facts.tag, spec, template.runtime);
  } catch {
    return undefined; // a --listen-host the release lacks: the template construct refuses it from its props
  }
}

/** The rules of reachability the written objects break. */
export function reachabilityViolations(
  parts: ReachabilityParts,
  objects: readonly RenderedObject[],
): OutputRuleViolation[] {
  const out: OutputRuleViolation[] = [];
  const routers = parts.routers.flatMap((r) => {
    const deployment = writtenAt(objects, r.node.path, 'Deployment');
    if (deployment === undefined) return [];
    const template = child(child(deployment.json, 'spec'), 'template');
    const namespace = String(child(deployment.json, 'metadata')['namespace']);
    const labels = labelsOf(child(template, 'metadata')['labels']);
    return [
      {
        router: r,
        deployment,
        namespace,
        labels,
        // a patch moved the router's pods out of the namespace or labels its construct gives them
        patched: namespace !== r.namespace || !holds(labels, r.podLabels),
        policy: writtenAt(objects, r.node.path, 'NetworkPolicy'),
      },
    ];
  });
  for (const template of parts.templates) {
    const t = writtenAt(objects, template.apiObject.node.path, 'SandboxTemplate');
    if (t === undefined) continue;
    const pod = podOf(t, template);
    const bind = writtenBind(template, pod.spec, pod.runtime !== undefined);

    // The kubelet probes the pod IP: a readiness probe over the network never reaches a runtime bound to loopback.
    const probe = pod.runtime?.['readinessProbe'];
    if (bind?.podNetwork === false && isPlainObject(probe) && (probe['httpGet'] ?? probe['tcpSocket']) !== undefined)
      out.push(
        violation(
          'ReadinessProbeUnreachable',
          t,
          `spec.podTemplate.spec.containers[${template.runtime.container}].readinessProbe`,
          undefined,
          `the runtime ${template.runtime.kind} binds ${bind.host} only (${bind.cite}); the kubelet probes the pod IP and can never reach it`,
        ),
      );

    // The controller's own policy admits only its fixed router peer (routerPeerProblems, from the props).
    const spec = child(t.json, 'spec');
    const managed = (spec['networkPolicyManagement'] ?? 'Managed') === 'Managed';
    const customIngress = isPlainObject(spec['networkPolicy']) && spec['networkPolicy']['ingress'] !== undefined;
    const peer = CONTROLLER_POLICY_ROUTER_PEER;
    if (managed && !customIngress)
      for (const r of routers) {
        if (r.namespace === peer.namespace && holds(r.labels, peer.podLabels)) continue;
        out.push(
          r.patched
            ? violation(
                'RouterPeerMismatch',
                r.deployment,
                'spec.template.metadata.labels',
                r.labels,
                `router pods (namespace ${r.namespace}) are not the pods app=sandbox-router in ${peer.namespace} that the controller's policy of Managed template ${pod.namespace}/${template.name} admits`,
              )
            : violation(
                'RouterPeerMismatch',
                t,
                'spec.networkPolicyManagement',
                spec['networkPolicyManagement'],
                `Managed: the controller's policy ${template.name}-network-policy admits only pods app=sandbox-router in ${peer.namespace}, not the router in ${r.namespace}`,
              ),
        );
      }
  }

  // Every port entry of a written NetworkPolicy names its port: without one it admits every port of its protocol
  // (what cdk8s writes when a JSON patch puts a bare number where an IntOrString goes).
  for (const item of objects) {
    if (item.object.kind !== 'NetworkPolicy') continue;
    const spec = child(item.object, 'spec');
    for (const direction of ['ingress', 'egress'] as const)
      list(spec, direction).forEach((rule, i) =>
        list(rule, 'ports').forEach((entry, j) => {
          if (isPlainObject(entry) && entry['port'] === undefined)
            out.push(
              violation(
                'PolicyPortMissing',
                { item, json: item.object as unknown as Json },
                `spec.${direction}[${i}].ports[${j}]`,
                entry,
                `${direction} rule ${i} has a port entry without a port: it admits every ${String(entry['protocol'] ?? 'TCP')} port`,
              ),
            );
        }),
      );
  }

  // The environment's own policies: select the template's pods, and admit the router on a runtime port it can reach.
  for (const np of parts.policies) {
    const w = writtenAt(objects, np.apiObject.node.path, 'NetworkPolicy');
    const t = writtenAt(objects, np.template.apiObject.node.path, 'SandboxTemplate');
    if (w === undefined || t === undefined) continue;
    const template = np.template;
    const pod = podOf(t, template);
    const policyNamespace = String(child(w.json, 'metadata')['namespace']);
    const spec = child(w.json, 'spec');
    const intended = { [LABEL_TEMPLATE]: template.name, [LABEL_ENVIRONMENT]: parts.environment };
    if (policyNamespace !== pod.namespace || !selects(spec['podSelector'], pod.labels)) {
      const selector = spec['podSelector'];
      const selectorPatched =
        policyNamespace !== np.namespace ||
        !isPlainObject(selector) ||
        Object.keys(selector).some((k) => k !== 'matchLabels') ||
        JSON.stringify(Object.entries(labelsOf(selector['matchLabels'])).sort()) !==
          JSON.stringify(Object.entries(intended).sort());
      out.push(
        selectorPatched
          ? violation(
              'PolicyMissesSandboxPods',
              w,
              'spec.podSelector',
              spec['podSelector'],
              `selects no pod of template ${pod.namespace}/${template.name}: its pods stay open to every peer`,
            )
          : violation(
              'PolicyMissesSandboxPods',
              t,
              'spec.podTemplate.metadata.labels',
              pod.labels,
              `its pods no longer carry the labels NetworkPolicy ${np.namespace}/${np.name} selects: they stay open to every peer`,
            ),
      );
      continue;
    }
    if (np.router === undefined) continue;
    const bind = writtenBind(template, pod.spec, pod.runtime !== undefined);
    if (bind?.podNetwork === false)
      out.push(
        violation(
          'RuntimeListensOnLoopback',
          t,
          `spec.podTemplate.spec.containers[${template.runtime.container}]`,
          bind.host,
          `the runtime ${template.runtime.kind} binds ${bind.host} only (${bind.cite}): the router dials the pod IP and can never reach it`,
        ),
      );
    const r = routers.find((x) => x.router === np.router);
    if (r === undefined) continue;
    const rules = list(spec, 'ingress').filter(isPlainObject);
    const fromRouter = rules.filter((rule) => {
      const from = list(rule, 'from');
      return from.length === 0 || from.some((p) => peerAdmits(p, r.namespace, r.labels, policyNamespace));
    });
    if (fromRouter.length === 0) {
      out.push(
        r.patched
          ? violation(
              'RouterPeerMismatch',
              r.deployment,
              'spec.template.metadata.labels',
              r.labels,
              `router pods (namespace ${r.namespace}) are not admitted by NetworkPolicy ${np.namespace}/${np.name}`,
            )
          : violation(
              'RouterPeerMismatch',
              w,
              'spec.ingress',
              spec['ingress'],
              `admits no router pod (namespace ${r.namespace}, labels ${JSON.stringify(r.labels)}) to template ${pod.namespace}/${template.name}`,
            ),
      );
      continue;
    }
    // A runtime port both admitted here and allowed by the router's egress (its own NetworkPolicy, when it has one).
    const ports = template.runtime.ports;
    const admitted = ports.filter((port) => fromRouter.some((rule) => portsAdmit(rule, [port], pod.named)));
    const rp = r.policy;
    const rpSpec = rp === undefined ? {} : child(rp.json, 'spec');
    const egressOn =
      rp !== undefined && list(rpSpec, 'policyTypes').includes('Egress') && selects(rpSpec['podSelector'], r.labels);
    const allowed = egressOn
      ? ports.filter((port) => list(rpSpec, 'egress').some((e) => isPlainObject(e) && portsAdmit(e, [port], {})))
      : ports;
    if (admitted.some((port) => allowed.includes(port))) continue;
    out.push(
      allowed.length === 0 && rp !== undefined
        ? violation(
            'RuntimePortNotAllowed',
            rp,
            'spec.egress',
            undefined,
            `the router's egress allows no runtime port ${ports.join(', ')} of template ${pod.namespace}/${template.name}`,
          )
        : violation(
            'RuntimePortNotAllowed',
            w,
            'spec.ingress',
            spec['ingress'],
            `admits the router to none of the runtime ports ${allowed.join(', ')} its egress allows (template ${pod.namespace}/${template.name}, ports ${ports.join(', ')})`,
          ),
    );
  }
  return out;
}
