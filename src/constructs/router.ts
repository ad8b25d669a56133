/**
 * SandboxRouter: the Go sandbox-router from the release's deploy manifests (`sandbox-router/deploy/*.yaml@v0.5.6`),
 * moved into one namespace, with the image given as a prop (upstream publishes no pinned router image and its manifest
 * says `:latest`, FACTS §10.6 and case 15) and an explicit authorization mode (upstream defaults to allow-all).
 * Its pods carry both upstream's labels and `app: sandbox-router`, which the controller's managed template policy admits
 * (`sandboxtemplate_controller.go@v0.5.6`), and `namespace` / `podLabels` are exported so policies and clients derive
 * from one value (FACTS §10.5).
 */
import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { z } from 'zod';
import type { KubeObject, LoadedRelease } from '../releases/index.js';
import { ConstructError, UnsupportedByReleaseError } from './errors.js';
import { assertPinned } from './images.js';
import { isPlainObject } from '../model/objects.js';
import { addObject, child, list, stampRelease, type Json } from './kube-object.js';
import { setPhase } from './phases.js';
import { parseProps } from './props.js';
import { requireContext } from './template.js';

/** How the router authorizes requests (`--authz-mode`, `sandbox-router/config/flags.go@v0.5.6`). Required: there is no default. */
export type RouterAuthorization =
  /** Bearer tokens checked with TokenReview; `requireToken` (default `true`) refuses token-less requests. */
  | { readonly mode: 'tokenreview'; readonly requireToken?: boolean; readonly audiences?: readonly string[] }
  /** HMAC tokens bound to (namespace, name, exp); key from Secret `secretName` / `secretKey` (default `secret`, ≥ 32 bytes). */
  | { readonly mode: 'scoped-token'; readonly secretName: string; readonly secretKey?: string }
  /** No authorization. Must be acknowledged explicitly. */
  | { readonly mode: 'allow-all'; readonly acknowledgeUnauthenticated: true };

/** Props of {@link SandboxRouter}. */
export interface SandboxRouterProps {
  /** Router image, pinned by tag (and digest where known). Required. */
  readonly image: string;
  /** Authorization mode. Required; never allow-all unless acknowledged. */
  readonly authorization: RouterAuthorization;
  /** Namespace. Default: the controller namespace of the release (`agent-sandbox-system`), where the default template policy expects the router. */
  readonly namespace?: string;
  /** Replicas. Default `2` (upstream's deployment). */
  readonly replicas?: number;
  /** Ports the router may dial on sandbox pods (its NetworkPolicy egress). Default `[8888]` (upstream). */
  readonly sandboxPorts?: readonly number[];
  /** Pod-IP cache (`--cache-enabled`; needs the pods ClusterRole). Default `true` (upstream deploy example). */
  readonly cache?: boolean;
}

const PropsSchema = z
  .object({
    image: z.string().min(1),
    authorization: z.discriminatedUnion('mode', [
      z.object({ mode: z.literal('tokenreview'), requireToken: z.boolean().default(true), audiences: z.array(z.string().min(1)).optional() }).strict(),
      z.object({ mode: z.literal('scoped-token'), secretName: z.string().min(1), secretKey: z.string().min(1).default('secret') }).strict(),
      z
        .object({
          mode: z.literal('allow-all'),
          acknowledgeUnauthenticated: z.literal(true, { message: 'allow-all lets anyone who reaches the router run commands in any sandbox: set acknowledgeUnauthenticated: true to accept that' }),
        })
        .strict(),
    ]),
    namespace: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label').optional(),
    replicas: z.number().int().min(1).default(2),
    sandboxPorts: z.array(z.number().int().min(1).max(65535)).min(1).default([8888]),
    cache: z.boolean().default(true),
  })
  .strict();

const DEPLOY_DIR = 'sandbox-router/deploy/';
const FILES = ['serviceaccount.yaml', 'rbac.yaml', 'deployment.yaml', 'service.yaml', 'pdb.yaml', 'networkpolicy.yaml'];
const TOKENREVIEW_FILE = 'rbac-tokenreview.yaml';
const SCOPED_TOKEN_DIR = '/etc/sandbox-router/scoped-token';
const CLUSTER_SCOPED = new Set(['ClusterRole', 'ClusterRoleBinding']);

/** Upstream router flags AgentPlane sets itself; any upstream value for them is replaced. */
const OWNED_FLAGS = ['--authz-', '--cache-enabled'];

/**
 * The router: ServiceAccount, RBAC, Deployment, Service `sandbox-router-svc`, PodDisruptionBudget, NetworkPolicy.
 * @throws UnsupportedByReleaseError when the release has no router manifests (v0.4.6, v0.5.0); ConstructPropsError;
 *   UnpinnedImageError.
 */
export class SandboxRouter extends Construct {
  readonly namespace: string;
  /** Service name clients and tunnels use. */
  readonly serviceName: string;
  /** Proxy port of the Service. */
  readonly port: number;
  /** Labels every router pod carries (use as the NetworkPolicy peer). */
  readonly podLabels: Readonly<Record<string, string>>;
  readonly image: string;
  readonly authorizationMode: RouterAuthorization['mode'];
  /** Ports the router may dial on sandbox pods (its NetworkPolicy egress). */
  readonly sandboxPorts: readonly number[];
  readonly objects: readonly ApiObject[];

  constructor(scope: Construct, id: string, props: SandboxRouterProps) {
    super(scope, id);
    const ctx = requireContext(this, 'SandboxRouter');
    const p = parseProps(this, 'SandboxRouter', PropsSchema, props);
    const release: LoadedRelease = ctx.release;
    const facts = release.facts;
    assertPinned(this.node.path, 'SandboxRouter image', p.image, ctx.requireDigests);
    this.image = p.image;
    this.authorizationMode = p.authorization.mode;
    const controllerNs = release.objects.get('k8s/controller.yaml')?.find((o) => o.kind === 'Namespace')?.metadata?.name ?? 'agent-sandbox-system';
    this.namespace = p.namespace ?? controllerNs;

    const files = [...FILES, ...(p.authorization.mode === 'tokenreview' ? [TOKENREVIEW_FILE] : [])];
    const objs: Json[] = [];
    for (const f of files) {
      const parsed = release.objects.get(DEPLOY_DIR + f);
      if (parsed === undefined) {
        throw new UnsupportedByReleaseError(
          this.node.path,
          `release ${facts.tag} has no ${DEPLOY_DIR}${f}: the Go sandbox-router exists from v0.5.1 on (sandbox-router/@v0.5.6)`,
          'pin v0.5.6 to deploy the router from the release, or leave the router out of this environment',
        );
      }
      for (const o of parsed) objs.push(structuredClone(o) as Json);
    }

    let deployment: Json | undefined;
    let service: Json | undefined;
    for (const o of objs) {
      const meta = child(o, 'metadata');
      if (!CLUSTER_SCOPED.has(String(o['kind']))) meta['namespace'] = this.namespace;
      if (Array.isArray(o['subjects'])) for (const s of o['subjects']) if (isPlainObject(s) && s['namespace'] !== undefined) s['namespace'] = this.namespace;
      if (o['kind'] === 'Deployment') deployment = o;
      if (o['kind'] === 'Service') service = o;
    }
    if (deployment === undefined || service === undefined) throw new ConstructError(this.node.path, `release ${facts.tag} router manifests lack a Deployment or Service`, 'report this: the pinned router manifests changed shape');
    const selector = child(child(child(deployment, 'spec'), 'selector'), 'matchLabels') as Record<string, string>;
    this.podLabels = { ...selector, app: 'sandbox-router' };
    this.serviceName = String(child(service, 'metadata')['name']);
    const svcPorts = list(child(service, 'spec'), 'ports');
    this.port = Number(isPlainObject(svcPorts[0]) ? svcPorts[0]['port'] : 8080);

    const spec = child(deployment, 'spec');
    spec['replicas'] = p.replicas;
    const tmpl = child(spec, 'template');
    Object.assign(child(child(tmpl, 'metadata'), 'labels'), this.podLabels);
    const podSpec = child(tmpl, 'spec');
    const container = list(podSpec, 'containers').find(isPlainObject);
    if (container === undefined) throw new ConstructError(this.node.path, 'router Deployment has no container', 'report this: the pinned router manifests changed shape');
    container['image'] = p.image;
    const args = list(container, 'args').filter((a) => !OWNED_FLAGS.some((f) => String(a).startsWith(f)));
    args.push(`--cache-enabled=${p.cache}`, `--authz-mode=${p.authorization.mode}`);
    if (p.authorization.mode === 'tokenreview') {
      args.push(`--authz-tokenreview-require-token=${p.authorization.requireToken}`);
      if (p.authorization.audiences !== undefined) args.push(`--authz-tokenreview-audiences=${p.authorization.audiences.join(',')}`);
    }
    if (p.authorization.mode === 'scoped-token') {
      args.push(`--authz-scoped-token-secret-file=${SCOPED_TOKEN_DIR}/${p.authorization.secretKey}`);
      list(container, 'volumeMounts').push({ name: 'scoped-token', mountPath: SCOPED_TOKEN_DIR, readOnly: true });
      list(podSpec, 'volumes').push({ name: 'scoped-token', secret: { secretName: p.authorization.secretName } });
    }
    container['args'] = args;
    this.sandboxPorts = [...p.sandboxPorts];

    const objects: ApiObject[] = [];
    for (const o of objs) {
      if (o['kind'] === 'NetworkPolicy') this.narrowEgress(o, p.sandboxPorts);
      if (o['kind'] === 'ClusterRole' && !p.cache) continue;
      if (o['kind'] === 'ClusterRoleBinding' && !p.cache && String(child(o, 'metadata')['name']) === 'sandbox-router') continue;
      stampRelease(o, facts.tag, facts.commit);
      const obj = addObject(this, o as KubeObject);
      if (['Deployment', 'Service', 'PodDisruptionBudget'].includes(String(o['kind']))) setPhase(obj, 'router');
      objects.push(obj);
    }
    this.objects = objects;
  }

  /** Replaces the ports of the upstream egress rule that opens TCP 8888 to every pod with `ports`. */
  private narrowEgress(policy: Json, ports: readonly number[]): void {
    for (const rule of list(child(policy, 'spec'), 'egress')) {
      if (!isPlainObject(rule) || !Array.isArray(rule['ports'])) continue;
      if (rule['ports'].some((port) => isPlainObject(port) && port['port'] === 8888)) rule['ports'] = ports.map((port) => ({ protocol: 'TCP', port }));
    }
  }
}
