/**
 * SandboxRouter: the Go sandbox-router from the release's deploy manifests (`sandbox-router/deploy/*.yaml@v0.5.6`),
 * moved into one namespace, with the image given as a prop (upstream publishes no pinned router image and its manifest
 * says `:latest`, `dev/tools/tag-promote-images@v0.5.6`, case unpinned-image-tags) and an explicit authorization mode
 * (upstream defaults to allow-all). Its pods carry both upstream's labels and `app: sandbox-router`, which the
 * controller's managed template policy admits (`sandboxtemplate_controller.go@v0.5.6`), and `namespace` / `podLabels`
 * are exported so policies and clients derive from one value (upstream's own deploy files use other labels and
 * namespace up to v0.5.6, `sandbox-router/deploy/*.yaml@v0.5.6`; from v1.0.3 they use `agent-sandbox-system` and
 * `app: sandbox-router` too, `sandbox-router/deploy/*.yaml@v1.0.3`). Its own NetworkPolicy admits only the declared `callers` on the
 * proxy port and only the declared `metricsScraper` on the metrics port (upstream admits every namespace on the proxy
 * port, case router-podip-ssrf); every Managed template of the environment must admit it through the controller's fixed
 * peer (case netpol-router-peer-mismatch, {@link routerPeerProblems}).
 */
import type { ApiObject } from './cdk8s.js';
import { Construct } from 'constructs';
import { brand, sameCopies } from './package-copies.js';
import { z } from 'zod';
import {
  formatGoDuration,
  routerLimitFacts,
  routerTimeouts,
  type KubeObject,
  type LoadedRelease,
  type RouterLimitFacts,
  type RouterTimeouts,
} from '../releases/index.js';
import { ConstructError, ConstructPropsError, UnsupportedByReleaseError } from './errors.js';
import { familyOfTag } from '../model/releases.js';
import { addProblemCheck } from './problems.js';
import { assertPinned } from './images.js';
import { isPlainObject } from '../model/objects.js';
import { addObject, child, list, stampRelease, type Json } from './kube-object.js';
import { setPhase } from './phases.js';
import { parseProps } from './props.js';
import { UnreachableError } from './bounds-errors.js';
import { requireContext, SandboxTemplate } from './template.js';
import { contextScope } from './context.js';

/** Pods in one namespace, selected by labels (all pods of the namespace when `podLabels` is left out). */
export interface RouterPeer {
  readonly namespace: string;
  /** @default - all pods of the namespace */
  readonly podLabels?: Readonly<Record<string, string>>;
}

/**
 * The only router the controller-managed template policy admits: pods `app: sandbox-router` in namespace
 * `agent-sandbox-system` (`extensions/controllers/sandboxtemplate_controller.go@v0.5.6`, unchanged at `@v1.0.3`); a code
 * constant upstream.
 */
export const CONTROLLER_POLICY_ROUTER_PEER = {
  namespace: 'agent-sandbox-system',
  podLabels: { app: 'sandbox-router' },
} as const;

/** How the router authorizes requests (`--authz-mode`, `sandbox-router/config/flags.go@v0.5.6`). Required: there is no default. */
export type RouterAuthorization =
  /** Bearer tokens checked with TokenReview. */
  | {
      readonly mode: 'tokenreview';
      /**
       * Refuse requests without a token.
       * @default true
       */
      readonly requireToken?: boolean;
      /** @default - not passed: TokenReview with the API server's own audiences */
      readonly audiences?: readonly string[];
    }
  /**
   * Scoped tokens: v1 HMAC tokens bound to (namespace, name, exp), key from Secret `secretName` / `secretKey` (≥ 32
   * bytes); and from v1.0.3 v2 Ed25519 tokens bound to (namespace, name, uid, port, method, path, exp), verified with
   * the key set of `verificationKeys` (`sandbox-router/authz/scopedtoken_v2.go@v1.0.3`). Give `secretName`, or
   * `verificationKeys`, or both with `v1AcceptUntil`.
   */
  | {
      readonly mode: 'scoped-token';
      /**
       * Secret holding the v1 HMAC key (`--authz-scoped-token-secret-file`).
       * @default - none: v1 tokens are not accepted (only with `verificationKeys`, v1.0.3+)
       */
      readonly secretName?: string;
      /** @default 'secret' */
      readonly secretKey?: string;
      /**
       * v1.0.3+: Secret holding the scoped-token v2 key set (JSON `{"keys":[{"kid","publicKey"}]}`, unpadded base64url
       * Ed25519 public keys; `--authz-scoped-token-verification-keys-file`). Enables v2; the router needs its pod cache
       * (`cache: true`) (`sandbox-router/config/flags.go@v1.0.3`). Refused on v0.5.6 (UnsupportedByReleaseError).
       * @default - none: v1 only
       */
      readonly verificationKeys?: {
        readonly secretName: string;
        /** @default 'keys.json' */
        readonly secretKey?: string;
      };
      /**
       * v1.0.3+: RFC3339 time from which v1 tokens are refused (`--authz-scoped-token-v1-accept-until`, exclusive);
       * required when both `secretName` and `verificationKeys` are given (`sandbox-router/config/config.go@v1.0.3`).
       * @default - none
       */
      readonly v1AcceptUntil?: string;
    }
  /** No authorization. Must be acknowledged explicitly. */
  | { readonly mode: 'allow-all'; readonly acknowledgeUnauthenticated: true };

/** An API server endpoint the router may dial: a CIDR and a TCP port (the address after the Service's DNAT). */
export interface RouterApiServerEndpoint {
  readonly cidr: string;
  readonly port: number;
}

/** Props of {@link SandboxRouter}. */
export interface SandboxRouterProps {
  /** Router image, pinned by tag (and digest where known). Required. */
  readonly image: string;
  /** Authorization mode. Required; never allow-all unless acknowledged. */
  readonly authorization: RouterAuthorization;
  /**
   * Namespace, where the default template policy expects the router.
   * @default - the controller namespace of the release (`agent-sandbox-system`)
   */
  readonly namespace?: string;
  /**
   * Replicas.
   * @default 2 (upstream's deployment)
   */
  readonly replicas?: number;
  /**
   * Ports the router may dial on sandbox pods (its NetworkPolicy egress).
   * @default [8888] (upstream)
   */
  readonly sandboxPorts?: readonly number[];
  /**
   * Pod-IP cache (`--cache-enabled`; needs the pods ClusterRole).
   * @default true (upstream deploy example)
   */
  readonly cache?: boolean;
  /**
   * Addresses of the API server the router's pod dials (an egress rule with an ipBlock per entry). Upstream's policy
   * admits only pods of namespace `default` on 443/6443 (`sandbox-router/deploy/networkpolicy.yaml@v0.5.6`); an API
   * server that is no pod there (its endpoints, after the `kubernetes` Service's DNAT) is refused by an enforcing CNI,
   * and the router with its cache on never syncs and never becomes ready.
   * @default - none: upstream's rule alone
   */
  readonly apiServer?: readonly RouterApiServerEndpoint[];
  /** Who may call the router on its proxy port (its NetworkPolicy ingress). Required; `[]` admits nobody. */
  readonly callers: readonly RouterPeer[];
  /**
   * Who may scrape the metrics port.
   * @default - nobody
   */
  readonly metricsScraper?: RouterPeer;
  /**
   * The router's longest wait for a sandbox's response headers, seconds (`--response-header-timeout`). A python runtime
   * answers `/execute` only when the command ends, so this is the longest command through the router; past it the
   * router answers 502 (case router-timeout-layers). Refused on a release whose router has no such flag.
   * @default 30 (the Go router's own default, `sandbox-router/config/config.go@v0.5.6`; not passed)
   */
  readonly responseHeaderTimeoutSeconds?: number;
  /**
   * The router's whole-request budget, seconds (`--proxy-timeout`).
   * @default 180 (upstream's Deployment passes `--proxy-timeout=180s`, `sandbox-router/deploy/deployment.yaml@v0.5.6`)
   */
  readonly proxyTimeoutSeconds?: number;
}

const PeerSchema = z
  .object({
    namespace: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a namespace name'),
    podLabels: z.record(z.string(), z.string()).optional(),
  })
  .strict();

const PropsSchema = z
  .object({
    image: z.string().min(1),
    authorization: z.discriminatedUnion('mode', [
      z
        .object({
          mode: z.literal('tokenreview'),
          requireToken: z.boolean().default(true),
          audiences: z.array(z.string().min(1)).optional(),
        })
        .strict(),
      z
        .object({
          mode: z.literal('scoped-token'),
          secretName: z.string().min(1).optional(),
          secretKey: z.string().min(1).default('secret'),
          verificationKeys: z
            .object({ secretName: z.string().min(1), secretKey: z.string().min(1).default('keys.json') })
            .strict()
            .optional(),
          v1AcceptUntil: z
            .string()
            .regex(
              /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
              'must be an RFC3339 time, e.g. 2027-01-01T00:00:00Z',
            )
            .optional(),
        })
        .strict()
        .superRefine((a, ctx) => {
          if (a.secretName === undefined && a.verificationKeys === undefined)
            ctx.addIssue({
              code: 'custom',
              path: ['secretName'],
              message: 'give secretName (v1 HMAC key), verificationKeys (v2 key set, v1.0.3+), or both',
            });
          if (a.secretName !== undefined && a.verificationKeys !== undefined && a.v1AcceptUntil === undefined)
            ctx.addIssue({
              code: 'custom',
              path: ['v1AcceptUntil'],
              message: 'required when both v1 (secretName) and v2 (verificationKeys) are configured',
            });
          if (a.v1AcceptUntil !== undefined && (a.secretName === undefined || a.verificationKeys === undefined))
            ctx.addIssue({
              code: 'custom',
              path: ['v1AcceptUntil'],
              message: 'only meaningful with both secretName (v1) and verificationKeys (v2)',
            });
        }),
      z
        .object({
          mode: z.literal('allow-all'),
          acknowledgeUnauthenticated: z.literal(true, {
            message:
              'allow-all lets anyone who reaches the router run commands in any sandbox: set acknowledgeUnauthenticated: true to accept that',
          }),
        })
        .strict(),
    ]),
    namespace: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label')
      .optional(),
    replicas: z.number().int().min(1).default(2),
    sandboxPorts: z.array(z.number().int().min(1).max(65535)).min(1).default([8888]),
    cache: z.boolean().default(true),
    apiServer: z
      .array(
        z
          .object({
            cidr: z.string().regex(/^[0-9a-fA-F.:]+\/\d{1,3}$/, 'must be a CIDR, e.g. 10.0.0.1/32'),
            port: z.number().int().min(1).max(65535),
          })
          .strict(),
      )
      .optional(),
    callers: z.array(PeerSchema, {
      message: 'required: the namespaces/pods that may call the router (an empty list admits nobody)',
    }),
    metricsScraper: PeerSchema.optional(),
    responseHeaderTimeoutSeconds: z.number().int().min(1).max(86_400).optional(),
    proxyTimeoutSeconds: z.number().int().min(1).max(86_400).optional(),
  })
  .strict();

const DEPLOY_DIR = 'sandbox-router/deploy/';
const FILES = ['serviceaccount.yaml', 'rbac.yaml', 'deployment.yaml', 'service.yaml', 'pdb.yaml', 'networkpolicy.yaml'];
const TOKENREVIEW_FILE = 'rbac-tokenreview.yaml';
const SCOPED_TOKEN_DIR = '/etc/sandbox-router/scoped-token';
const CLUSTER_SCOPED = new Set(['ClusterRole', 'ClusterRoleBinding']);

/** Upstream router flags AgentPlane sets itself; any upstream value for them is replaced. */
const OWNED_FLAGS = ['--authz-', '--cache-enabled'];
const SCOPED_TOKEN_V2_DIR = '/etc/sandbox-router/scoped-token-v2';

/**
 * Router options that change who may call a sandbox, or how, and that this construct does not model: browser path
 * routing and cookie credentials (v1.0.1+), the HTTPS listener and its TLS profile (`--tls-min-version`,
 * `--tls-cipher-suites` v1.0.3; the construct serves plain HTTP), mTLS, loopback pod IPs, and a config file that could
 * set any of them (`sandbox-router/config/flags.go@v1.0.3`, `sandbox-router/config/file.go@v1.0.3`). Written by an
 * escape hatch (a JsonPatch on the Deployment) or found in upstream's args they are refused
 * ({@link RouterOptionNotModeledError}); `--authz-*` and `--cache-enabled` are owned and must be the values written.
 */
const UNMODELED_FLAGS = [
  'path-routing-prefix',
  'https-bind-address',
  'tls-cert-file',
  'tls-key-file',
  'tls-client-ca-file',
  'tls-min-version',
  'tls-cipher-suites',
  'mtls-mode',
  'allow-loopback-pod-ip',
  'config',
];
/** Environment variables the router reads for the same settings (`sandbox-router/config/flags.go@v1.0.3`, `file.go@v1.0.3`). */
const UNMODELED_ENV = ['TLS_MIN_VERSION', 'TLS_CIPHER_SUITES', 'SANDBOX_ROUTER_CONFIG'];

/** The flag name of a Go flag argument (`--name=v`, `-name v`), or undefined. */
function flagName(arg: string): string | undefined {
  return /^--?([a-z0-9][a-z0-9-]*)(=|$)/.exec(arg)?.[1];
}

/** Whether `name` is a flag this construct refuses unless it wrote it itself. */
function guardedFlag(name: string): boolean {
  return UNMODELED_FLAGS.includes(name) || name.startsWith('authz-') || name === 'cache-enabled';
}

/**
 * A router option that changes who may call a sandbox was set where the construct does not model it (an escape hatch
 * or the pinned manifests): it is refused rather than deployed unchecked. `option` is the flag or variable, `value`
 * the argument as written.
 */
export class RouterOptionNotModeledError extends ConstructError {
  override readonly reason = 'RouterOptionNotModeled';
  constructor(
    path: string,
    readonly option: string,
    readonly value: string,
    readonly release: string,
    detail: string,
    hint: string,
  ) {
    super(path, detail, hint);
  }
}

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
  /** Whether the environment accepted a router that authenticates nobody (allow-all; written into the descriptor). */
  readonly acknowledgeUnauthenticated: boolean;
  /** Whether a request without a Bearer token is refused (tokenreview with `requireToken`, and scoped-token). */
  readonly requiresToken: boolean;
  /** Ports the router may dial on sandbox pods. */
  readonly sandboxPorts: readonly number[];
  /** Who may reach the proxy port. */
  readonly callers: readonly RouterPeer[];
  /**
   * Whether the router calls the API server: its Pod-IP cache watches pods, tokenreview posts TokenReviews
   * (`sandbox-router/deploy/networkpolicy.yaml@v0.5.6`, the API server rule's comment).
   */
  readonly callsApiServer: boolean;
  /** The API server endpoints its NetworkPolicy admits beside upstream's rule (the `apiServer` prop). */
  readonly apiServer: readonly RouterApiServerEndpoint[];
  /** The router container's arguments as this construct wrote them (the rendered Deployment is checked against them). */
  readonly args: readonly string[];
  /** Scoped-token v2 (Ed25519) verification is on (v1.0.3+). */
  readonly scopedTokenV2: boolean;
  /** The release's router and its timeout flags. */
  readonly limitFacts: RouterLimitFacts;
  /** The timeouts the router runs with, from the args written (its defaults where none is passed). */
  readonly timeouts: RouterTimeouts;
  /** The longest synchronous call through the router, ms: the smaller of its response-header and proxy timeouts. */
  readonly syncLimitMs: number;
  readonly objects: readonly ApiObject[];
  /** The pinned release tag. */
  readonly release: string;

  constructor(scope: Construct, id: string, props: SandboxRouterProps) {
    super(sameCopies(scope, id), id);
    const ctx = requireContext(this, 'SandboxRouter');
    const p = parseProps(this, 'SandboxRouter', PropsSchema, props);
    const release: LoadedRelease = ctx.release;
    const facts = release.facts;
    this.release = facts.tag;
    assertPinned(this.node.path, 'SandboxRouter image', p.image, ctx.requireDigests);
    this.image = p.image;
    this.authorizationMode = p.authorization.mode;
    this.acknowledgeUnauthenticated =
      p.authorization.mode === 'allow-all' && p.authorization.acknowledgeUnauthenticated;
    this.requiresToken =
      p.authorization.mode === 'scoped-token' ||
      (p.authorization.mode === 'tokenreview' && p.authorization.requireToken);
    const controllerNs =
      release.objects.get('k8s/controller.yaml')?.find((o) => o.kind === 'Namespace')?.metadata?.name ??
      'agent-sandbox-system';
    this.namespace = p.namespace ?? controllerNs;
    ctx.useNamespace(this.namespace);
    this.sandboxPorts = [...p.sandboxPorts];
    this.callsApiServer = p.cache || p.authorization.mode === 'tokenreview';
    this.apiServer = (p.apiServer ?? []).map((e) => ({ cidr: e.cidr, port: e.port }));
    this.callers = p.callers.map(routerPeer);

    const auth = p.authorization;
    this.scopedTokenV2 = auth.mode === 'scoped-token' && auth.verificationKeys !== undefined;
    if (auth.mode === 'scoped-token' && (auth.verificationKeys !== undefined || auth.v1AcceptUntil !== undefined)) {
      if (familyOfTag(facts.tag) !== 'v1.0')
        throw new UnsupportedByReleaseError(
          this.node.path,
          auth.verificationKeys !== undefined ? 'authorization.verificationKeys' : 'authorization.v1AcceptUntil',
          facts.tag,
          `scoped-token v2 (--authz-scoped-token-verification-keys-file, --authz-scoped-token-v1-accept-until) exists from v1.0.3 (sandbox-router/config/flags.go@v1.0.3); the router of ${facts.tag} would exit on the unknown flag`,
          'use secretName (v1 HMAC tokens) on this release, or pin v1.0.3',
        );
      if (!p.cache)
        throw new ConstructPropsError(this.node.path, 'SandboxRouter', [
          {
            prop: 'cache',
            reason: 'ScopedTokenV2NeedsCache',
            value: false,
            message:
              'cache: scoped-token v2 verification (authorization.verificationKeys) requires --cache-enabled (sandbox-router/config/flags.go@v1.0.3); leave cache on',
          },
        ]);
    }

    // Every pinned release is of a known family, so its router facts exist.
    const limitFacts = routerLimitFacts(facts.tag)!;
    this.limitFacts = limitFacts;
    const timeoutFlags: Array<[string, number | undefined, string | undefined]> = [
      ['responseHeaderTimeoutSeconds', p.responseHeaderTimeoutSeconds, limitFacts.flags.responseHeaderTimeout],
      ['proxyTimeoutSeconds', p.proxyTimeoutSeconds, limitFacts.flags.proxyTimeout],
    ];
    for (const [prop, value, flag] of timeoutFlags)
      if (value !== undefined && flag === undefined)
        throw new UnsupportedByReleaseError(
          this.node.path,
          prop,
          facts.tag,
          `the ${limitFacts.router} router of ${facts.tag} takes no flag for ${prop} (${limitFacts.cite}); ${prop} = ${value}`,
          limitFacts.flags.proxyTimeout === undefined
            ? `leave ${prop} out; the python router's only limit is the PROXY_TIMEOUT_SECONDS variable`
            : `leave ${prop} out on ${facts.tag}`,
        );

    const files = [...FILES, ...(p.authorization.mode === 'tokenreview' ? [TOKENREVIEW_FILE] : [])];
    const objs: Json[] = [];
    for (const f of files) {
      const parsed = release.objects.get(DEPLOY_DIR + f);
      if (parsed === undefined) {
        throw new UnsupportedByReleaseError(
          this.node.path,
          'router',
          facts.tag,
          `release ${facts.tag} has no ${DEPLOY_DIR}${f}: the Go sandbox-router exists from v0.5.1 on (sandbox-router/@v0.5.6)`,
          'pin v0.5.6 or v1.0.3 to deploy the router from the release, or leave the router out of this environment',
        );
      }
      for (const o of parsed) objs.push(structuredClone(o) as Json);
    }

    let deployment: Json | undefined;
    let service: Json | undefined;
    for (const o of objs) {
      const meta = child(o, 'metadata');
      if (!CLUSTER_SCOPED.has(String(o['kind']))) meta['namespace'] = this.namespace;
      if (Array.isArray(o['subjects']))
        for (const s of o['subjects'])
          if (isPlainObject(s) && s['namespace'] !== undefined) s['namespace'] = this.namespace;
      if (o['kind'] === 'Deployment') deployment = o;
      if (o['kind'] === 'Service') service = o;
    }
    if (deployment === undefined || service === undefined)
      throw new ConstructError(
        this.node.path,
        `release ${facts.tag} router manifests lack a Deployment or Service`,
        'report this: the pinned router manifests changed shape',
      );
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
    if (container === undefined)
      throw new ConstructError(
        this.node.path,
        'router Deployment has no container',
        'report this: the pinned router manifests changed shape',
      );
    container['image'] = p.image;
    const upstreamArgs = list(container, 'args').filter((a) => !OWNED_FLAGS.some((f) => String(a).startsWith(f)));
    const unmodeled = upstreamArgs.map(String).find((a) => guardedFlag(flagName(a) ?? ''));
    if (unmodeled !== undefined)
      throw new RouterOptionNotModeledError(
        this.node.path,
        `--${flagName(unmodeled)}`,
        unmodeled,
        facts.tag,
        `the router manifests of ${facts.tag} pass ${unmodeled} (${DEPLOY_DIR}deployment.yaml@${facts.tag}), an option that changes who may call a sandbox and that this construct does not model`,
        'report this: the pinned router manifests changed shape',
      );
    // A timeout prop replaces upstream's flag of the same name (upstream passes --proxy-timeout=180s).
    const timeoutArgs = timeoutFlags.flatMap(([, value, flag]) =>
      value !== undefined && flag !== undefined ? [`${flag}=${formatGoDuration(value * 1000)}`] : [],
    );
    const replaced = new Set(timeoutArgs.map((a) => flagName(a)));
    const args: unknown[] = [...upstreamArgs.filter((a) => !replaced.has(flagName(String(a))))];
    args.push(...timeoutArgs);
    args.push(`--cache-enabled=${p.cache}`, `--authz-mode=${p.authorization.mode}`);
    if (p.authorization.mode === 'tokenreview') {
      args.push(`--authz-tokenreview-require-token=${p.authorization.requireToken}`);
      if (p.authorization.audiences !== undefined)
        args.push(`--authz-tokenreview-audiences=${p.authorization.audiences.join(',')}`);
    }
    if (auth.mode === 'scoped-token') {
      if (auth.secretName !== undefined) {
        args.push(`--authz-scoped-token-secret-file=${SCOPED_TOKEN_DIR}/${auth.secretKey}`);
        list(container, 'volumeMounts').push({ name: 'scoped-token', mountPath: SCOPED_TOKEN_DIR, readOnly: true });
        list(podSpec, 'volumes').push({ name: 'scoped-token', secret: { secretName: auth.secretName } });
      }
      if (auth.verificationKeys !== undefined) {
        args.push(
          `--authz-scoped-token-verification-keys-file=${SCOPED_TOKEN_V2_DIR}/${auth.verificationKeys.secretKey}`,
        );
        list(container, 'volumeMounts').push({
          name: 'scoped-token-v2',
          mountPath: SCOPED_TOKEN_V2_DIR,
          readOnly: true,
        });
        list(podSpec, 'volumes').push({
          name: 'scoped-token-v2',
          secret: { secretName: auth.verificationKeys.secretName },
        });
      }
      if (auth.v1AcceptUntil !== undefined) args.push(`--authz-scoped-token-v1-accept-until=${auth.v1AcceptUntil}`);
    }
    container['args'] = args;
    this.args = args.map(String);
    const env = Object.fromEntries(
      list(container, 'env')
        .filter(isPlainObject)
        .filter((e) => typeof e['value'] === 'string')
        .map((e) => [String(e['name']), String(e['value'])]),
    );
    this.timeouts = routerTimeouts(limitFacts, this.args, env);
    this.syncLimitMs = Math.min(this.timeouts.proxyTimeout.ms, this.timeouts.responseHeaderTimeout?.ms ?? Infinity);
    if (p.cache && container['startupProbe'] === undefined)
      container['startupProbe'] = cacheSyncStartupProbe(container);
    this.sandboxPorts = [...p.sandboxPorts];

    const objects: ApiObject[] = [];
    for (const o of objs) {
      if (o['kind'] === 'NetworkPolicy') {
        this.narrowEgress(o, p.sandboxPorts, p.apiServer ?? []);
        this.narrowIngress(
          o,
          containerPort(container, 'proxy', 8080),
          containerPort(container, 'metrics', 9090),
          this.callers,
          p.metricsScraper === undefined ? undefined : routerPeer(p.metricsScraper),
        );
      }
      if (o['kind'] === 'ClusterRole' && !p.cache) continue;
      if (o['kind'] === 'ClusterRoleBinding' && !p.cache && String(child(o, 'metadata')['name']) === 'sandbox-router')
        continue;
      stampRelease(o, facts.tag, facts.commit);
      const obj = addObject(this, o as KubeObject);
      if (['Deployment', 'Service', 'PodDisruptionBudget'].includes(String(o['kind']))) setPhase(obj, 'router');
      objects.push(obj);
    }
    this.objects = objects;
    addProblemCheck(this, () => routerPeerProblems(this));
  }

  /**
   * Replaces the `from` of the upstream proxy rule (every namespace) with `callers` and of the metrics rule (namespace
   * `monitoring`) with `scraper`; a rule with nobody to admit is dropped. The health-probe rule stays (kubelet probes).
   */
  private narrowIngress(
    policy: Json,
    proxyPort: number,
    metricsPort: number,
    callers: readonly RouterPeer[],
    scraper: RouterPeer | undefined,
  ): void {
    const spec = child(policy, 'spec');
    const hasPort = (rule: Json, port: number): boolean =>
      Array.isArray(rule['ports']) && rule['ports'].some((x) => isPlainObject(x) && x['port'] === port);
    const rules: Json[] = [];
    for (const rule of list(spec, 'ingress')) {
      if (!isPlainObject(rule)) continue;
      if (hasPort(rule, proxyPort)) {
        if (callers.length > 0) rules.push({ ...rule, from: callers.map(peerJson) });
      } else if (hasPort(rule, metricsPort)) {
        if (scraper !== undefined) rules.push({ ...rule, from: [peerJson(scraper)] });
      } else rules.push(rule);
    }
    spec['ingress'] = rules;
  }

  /**
   * Replaces the ports of the upstream egress rule that opens TCP 8888 to every pod with `ports`; adds one rule per
   * declared API server endpoint.
   */
  private narrowEgress(policy: Json, ports: readonly number[], apiServer: readonly RouterApiServerEndpoint[]): void {
    const spec = child(policy, 'spec');
    for (const rule of list(spec, 'egress')) {
      if (!isPlainObject(rule) || !Array.isArray(rule['ports'])) continue;
      if (rule['ports'].some((port) => isPlainObject(port) && port['port'] === 8888))
        rule['ports'] = ports.map((port) => ({ protocol: 'TCP', port }));
    }
    if (apiServer.length > 0)
      spec['egress'] = [
        ...list(spec, 'egress'),
        ...apiServer.map((e) => ({ to: [{ ipBlock: { cidr: e.cidr } }], ports: [{ protocol: 'TCP', port: e.port }] })),
      ];
  }
}
brand(SandboxRouter, 'SandboxRouter');

/** Longest wait of the router for its pod cache's first LIST before it binds any listener (`sandbox-router/cmd/main.go@v0.5.6`). */
const CACHE_SYNC_TIMEOUT_SECONDS = 60;
const STARTUP_PERIOD_SECONDS = 5;

/**
 * With its cache on, the router binds its health listener only after the first LIST of pods, waiting up to 60 s and
 * then exiting with its own error (`sandbox-router/cmd/main.go@v0.5.6`); upstream's liveness probe (5 s delay, 3 × 10 s)
 * kills it at about 35 s. This probe on the liveness probe's endpoint holds liveness back until that window has passed,
 * so a slow API server does not turn into a restart loop, and an unreachable one ends in the router's own message.
 */
function cacheSyncStartupProbe(container: Json): Json {
  const liveness = container['livenessProbe'];
  const httpGet =
    isPlainObject(liveness) && isPlainObject(liveness['httpGet'])
      ? { ...liveness['httpGet'] }
      : { path: '/healthz', port: 'healthz' };
  return {
    httpGet,
    periodSeconds: STARTUP_PERIOD_SECONDS,
    failureThreshold: Math.ceil(CACHE_SYNC_TIMEOUT_SECONDS / STARTUP_PERIOD_SECONDS) + 2,
  };
}

/** A parsed peer as a {@link RouterPeer}: its labels copied, the key absent when none were given. */
function routerPeer(peer: z.output<typeof PeerSchema>): RouterPeer {
  return peer.podLabels !== undefined
    ? { namespace: peer.namespace, podLabels: { ...peer.podLabels } }
    : { namespace: peer.namespace };
}

function peerJson(peer: RouterPeer): Json {
  return {
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': peer.namespace } },
    ...(peer.podLabels !== undefined ? { podSelector: { matchLabels: { ...peer.podLabels } } } : {}),
  };
}

function containerPort(container: Json, name: string, fallback: number): number {
  const port = list(container, 'ports').find((x) => isPlainObject(x) && x['name'] === name);
  return isPlainObject(port) ? Number(port['containerPort']) : fallback;
}

/**
 * Managed templates of the router's environment whose controller policy cannot admit this router (case
 * netpol-router-peer-mismatch): the controller's fixed peer ({@link CONTROLLER_POLICY_ROUTER_PEER}) must match the
 * router's namespace and pod labels. A template with custom managed rules or own policies is judged by those, not here.
 */
export function routerPeerProblems(router: SandboxRouter): UnreachableError[] {
  const scope = contextScope(router) ?? router.node.root;
  const templates = scope.node.findAll().filter((c): c is SandboxTemplate => c instanceof SandboxTemplate);
  const peer = CONTROLLER_POLICY_ROUTER_PEER;
  const matches =
    router.namespace === peer.namespace && Object.entries(peer.podLabels).every(([k, v]) => router.podLabels[k] === v);
  if (matches) return [];
  const problems: UnreachableError[] = [];
  for (const t of templates) {
    let management;
    try {
      management = t.networkPolicyManagement;
    } catch {
      continue; // the template reports its own conflict
    }
    if (management !== 'Managed' || t.hasCustomManagedRules) continue;
    const labels = Object.entries(router.podLabels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    problems.push(
      new UnreachableError(
        router.node.path,
        'RouterPeerMismatch',
        `template ${t.namespace}/${t.name} is Managed: the controller's policy ${t.name}-network-policy admits only pods app=sandbox-router in namespace ${peer.namespace} ` +
          `(extensions/controllers/sandboxtemplate_controller.go@v0.5.6), but this router runs in namespace ${router.namespace} with labels ${labels}, so it would not be admitted`,
        `declare env.addNetworkPolicy('<id>', { template, router }) for ${t.namespace}/${t.name} (it becomes Unmanaged and admits the router by its own namespace and labels), or deploy the router in ${peer.namespace}`,
        {
          template: `${t.namespace}/${t.name}`,
          router: { namespace: router.namespace, podLabels: { ...router.podLabels } },
          policy: {
            name: `${t.name}-network-policy`,
            admits: { namespace: peer.namespace, podLabels: { ...peer.podLabels } },
          },
        },
      ),
    );
  }
  return problems;
}

/**
 * Options on the rendered router Deployment (JsonPatches applied) that change who may call a sandbox and that the
 * construct did not write: an `--authz-*` / `--cache-enabled` argument other than its own, any flag of
 * {@link UNMODELED_FLAGS}, or an environment variable of {@link UNMODELED_ENV}. An escape hatch cannot slip them past
 * the authorization checks (the descriptor and client checks read the construct's props, not the patched Deployment).
 */
export function routerOptionProblems(router: SandboxRouter, deployment: Json): RouterOptionNotModeledError[] {
  const podSpec = child(child(child(deployment, 'spec'), 'template'), 'spec');
  const problems: RouterOptionNotModeledError[] = [];
  const release = router.release;
  const containers = list(podSpec, 'containers').filter(isPlainObject);
  const all = containers.flatMap((c) => [...list(c, 'command'), ...list(c, 'args')].map(String));
  for (const a of router.args.filter((x) => guardedFlag(flagName(x) ?? '')))
    if (!all.includes(a))
      problems.push(
        new RouterOptionNotModeledError(
          router.node.path,
          `--${flagName(a)}`,
          a,
          release,
          `the router Deployment no longer passes ${a}, which the SandboxRouter wrote (without it the router falls back to upstream's default, e.g. --authz-mode=allow-all, sandbox-router/config/config.go@v1.0.3)`,
          'remove the patch and set authorization / cache on the SandboxRouter',
        ),
      );
  for (const c of [...containers, ...list(podSpec, 'initContainers').filter(isPlainObject)]) {
    const name = String(c['name']);
    const argv = [...list(c, 'command'), ...list(c, 'args')].map(String);
    for (const a of argv) {
      const flag = flagName(a);
      if (flag === undefined || !guardedFlag(flag) || router.args.includes(a)) continue;
      problems.push(
        new RouterOptionNotModeledError(
          router.node.path,
          `--${flag}`,
          a,
          release,
          `container ${name} of the router Deployment passes ${a}, which the SandboxRouter did not write: ${UNMODELED_FLAGS.includes(flag) ? 'this construct does not model it (it changes who may call a sandbox, sandbox-router/config/flags.go@v1.0.3)' : 'authorization and the pod cache are set by its authorization and cache props'}`,
          UNMODELED_FLAGS.includes(flag)
            ? 'remove the patch; path routing, cookie credentials, HTTPS/TLS profile, mTLS and config files are not supported by SandboxRouter'
            : 'remove the patch and set authorization / cache on the SandboxRouter',
        ),
      );
    }
    for (const e of list(c, 'env')) {
      if (!isPlainObject(e) || !UNMODELED_ENV.includes(String(e['name']))) continue;
      problems.push(
        new RouterOptionNotModeledError(
          router.node.path,
          String(e['name']),
          String(e['name']),
          release,
          `container ${name} of the router Deployment sets ${String(e['name'])}, which the router reads as a TLS or config-file setting (sandbox-router/config/flags.go@v1.0.3) that this construct does not model`,
          'remove the variable; SandboxRouter serves plain HTTP and takes no config file',
        ),
      );
    }
  }
  return problems;
}
