/**
 * SandboxClientDecl: the application's client SDK as part of the environment (`env.addClient`). It makes no objects;
 * it is recorded in the descriptor, the lock and the compatibility tuple, and synthesis refuses, naming both sides,
 * an environment this client cannot use in its declared mode (facts: `src/releases/client-sdk.ts`, cited
 * `k8s_agent_sandbox/<file>@<version>`), including a release that does not serve the API versions the client talks.
 */
import type { ErrorReason } from '../model/error-reasons.js';
import { Construct } from 'constructs';
import { sameCopies } from './package-copies.js';
import { z } from 'zod';
import {
  CLIENT_MODES,
  CLIENT_SDK_VERSIONS,
  clientSdkFacts,
  type ClientMode,
  type ClientModeFacts,
  type ClientSdk,
  type ClientSdkFacts,
} from '../releases/index.js';
import type { LoadedRelease } from '../releases/index.js';
import { ConstructError, ConstructPropsError, type PropProblem } from './errors.js';
import { parseProps } from './props.js';
import type { SandboxRouter } from './router.js';
import { routerLimitSetting } from './exec-limits.js';
import { requireContext, type SandboxTemplate } from './template.js';
import { SandboxWarmPool } from './warm-pool.js';

/** Props of {@link SandboxClientDecl}. */
export interface SandboxClientProps {
  /** The SDK, as published: `k8s-agent-sandbox` (PyPI). */
  readonly sdk: ClientSdk;
  /** Its exact version; facts are recorded for `0.5.6` and `1.0.8` (`CLIENT_SDK_VERSIONS`). */
  readonly version: string;
  /** Connection mode, named after the client's config class (see `CLIENT_MODES`). */
  readonly mode: ClientMode;
  /**
   * The pool the application passes to `create_sandbox(warmpool=…)`.
   * @default - none: every pool of the environment must suit the client
   */
  readonly warmPool?: SandboxWarmPool;
  /**
   * `server_port` of python-runtime modes.
   * @default 8888
   */
  readonly serverPort?: number;
  /**
   * `router_namespace` of the tunnel mode.
   * @default - the client's router Service namespace (`agent-sandbox-system`)
   */
  readonly routerNamespace?: string;
  /**
   * The longest command the application runs through this client, seconds (its `run(..., timeout=)`). Synthesis
   * refuses an environment where a layer on the client's path ends a synchronous command sooner: the router's
   * response-header or proxy timeout (router modes), the runtime's exec limit (`SANDBOX_EXEC_TIMEOUT_SECONDS`).
   * @default - none declared: only the warning when a router's limit is below a runtime's exec limit
   */
  readonly commandTimeoutSeconds?: number;
}

const PropsSchema = z
  .object({
    sdk: z.enum(Object.keys(CLIENT_SDK_VERSIONS) as [ClientSdk, ...ClientSdk[]]),
    version: z.string().min(1),
    mode: z.enum(CLIENT_MODES),
    warmPool: z.instanceof(SandboxWarmPool, { message: 'must be a SandboxWarmPool construct' }).optional(),
    serverPort: z.number().int().min(1).max(65535).default(8888),
    routerNamespace: z.string().min(1).optional(),
    commandTimeoutSeconds: z.number().int().min(1).max(86_400).optional(),
  })
  .strict();

/** What a client needs of the environment, as far as a refusal names it. */
export interface ClientNeeds {
  /** `group/version`s the client reads and writes (SandboxClaim, Sandbox). */
  readonly apiVersions?: readonly string[];
  readonly runtimeApi?: string;
  /** Runtime (or router sandbox) ports it dials that the environment lacks. */
  readonly ports?: readonly number[];
  /** The router Service it port-forwards to, `<namespace>/<name>:<port>`. */
  readonly routerService?: string;
  /** `pod-network`: it reaches the runtime from outside the pod. */
  readonly listener?: 'pod-network';
  readonly service?: true;
  /** The credentials the client sends the router: `none`, or a Bearer token of the application's (`extra_headers`). */
  readonly authorization?: 'none' | 'bearer';
  /** The longest command it runs, seconds (its `commandTimeoutSeconds`). */
  readonly commandTimeoutSeconds?: number;
}

/** What the environment offers instead, as far as a refusal names it; `router: null` when it declares none. */
export interface EnvironmentOffers {
  /** The pinned release tag and the `group/version`s of SandboxClaim and Sandbox it serves. */
  readonly release?: string;
  readonly served?: readonly string[];
  /** The template, `<namespace>/<name>`, its runtime kind, ports and bind host. */
  readonly template?: string;
  readonly runtime?: string;
  readonly ports?: readonly number[];
  readonly bind?: string;
  readonly warmPools?: readonly string[];
  /** The router Service, `<namespace>/<name>:<port>`. */
  readonly router?: string | null;
  readonly sandboxPorts?: readonly number[];
  readonly service?: boolean;
  /** The router's authorization mode. */
  readonly authorization?: string;
  /** The longest synchronous call the router allows, seconds, and the flag that decides it. */
  readonly routerLimit?: { readonly seconds: number; readonly setting: string };
  /** The runtime's exec limit, seconds, and where it was read. */
  readonly execLimit?: { readonly seconds: number; readonly from: string };
}

/**
 * The client cannot use the environment as declared; the message names the client side and the environment side,
 * `client`, `needs` and `offers` carry them typed.
 */
export class ClientIncompatibleError extends ConstructError {
  /** Reason: `ClientCommandExceedsRouterLimit`, `ClientCommandExceedsExecLimit`, `ClientApiNotServed`, `ClientRuntimeApi`, `ClientRuntimePort`, `ClientRuntimeLoopback`, `ClientNoPool`, `ClientNoRouter`, `ClientRouterService`, `ClientRouterAuth`, `ClientRouterEgress`, `ClientNoService`. */
  override readonly reason: ErrorReason;
  constructor(
    path: string,
    reason: ErrorReason,
    message: string,
    hint: string,
    readonly client: { readonly sdk: string; readonly version: string; readonly mode: string },
    readonly needs: ClientNeeds,
    readonly offers: EnvironmentOffers,
  ) {
    super(path, message, hint);
    this.reason = reason;
  }
}

type Fail = (code: ErrorReason, message: string, hint: string, needs: ClientNeeds, offers: EnvironmentOffers) => never;

/** What the environment tells the client check (kept narrow so the check needs no environment import). */
export interface ClientEnvironmentView {
  readonly warmPools: readonly SandboxWarmPool[];
  readonly router?: SandboxRouter;
}

/** One declared client. */
export class SandboxClientDecl extends Construct {
  readonly sdk: ClientSdk;
  readonly version: string;
  readonly mode: ClientMode;
  readonly facts: ClientSdkFacts;
  readonly modeFacts: ClientModeFacts;
  readonly warmPool?: SandboxWarmPool;
  /** Runtime ports the client dials or names: `server_port` (python-runtime modes) or sandboxd's REST + gRPC ports. */
  readonly ports: readonly number[];
  readonly routerNamespace?: string;
  /** The longest command the application runs through it, seconds, when declared. */
  readonly commandTimeoutSeconds?: number;
  /** The environment's pinned release. */
  readonly release: LoadedRelease;

  constructor(scope: Construct, id: string, props: SandboxClientProps) {
    super(sameCopies(scope, id), id);
    const ctx = requireContext(this, 'SandboxClient');
    const p = parseProps(this, 'SandboxClient', PropsSchema, props);
    const facts = clientSdkFacts(p.sdk, p.version);
    if (facts === undefined) {
      const problem: PropProblem = {
        prop: 'version',
        reason: 'UnknownClientVersion',
        value: p.version,
        message: `version: no facts recorded for client ${p.sdk} ${p.version} (got ${JSON.stringify(p.version)})`,
      };
      throw new ConstructPropsError(
        this.node.path,
        'SandboxClient',
        [problem],
        `use one of ${CLIENT_SDK_VERSIONS[p.sdk].join(', ')} (facts come from that version's source)`,
      );
    }
    const modeFacts = facts.modes[p.mode];
    if (modeFacts === undefined)
      throw new ConstructPropsError(
        this.node.path,
        'SandboxClient',
        [
          {
            prop: 'mode',
            reason: 'UnknownClientMode',
            value: p.mode,
            message: `mode: client ${p.sdk} ${p.version} has no ${p.mode} mode (k8s_agent_sandbox/models.py@${p.version}; it has ${Object.keys(facts.modes).join(', ')})`,
          },
        ],
        `use one of ${Object.keys(facts.modes).join(', ')}, or a client version that has ${p.mode}`,
      );
    this.release = ctx.release;
    this.sdk = p.sdk;
    this.version = p.version;
    this.mode = p.mode;
    this.facts = facts;
    this.modeFacts = modeFacts;
    if (p.warmPool !== undefined) this.warmPool = p.warmPool;
    this.ports = this.modeFacts.runtimeApi === 'python-runtime' ? [p.serverPort] : [...this.modeFacts.ports];
    if (this.modeFacts.routerService !== undefined)
      this.routerNamespace = p.routerNamespace ?? this.modeFacts.routerService.defaultNamespace;
    if (p.commandTimeoutSeconds !== undefined) this.commandTimeoutSeconds = p.commandTimeoutSeconds;
  }

  /** `k8s-agent-sandbox 1.0.8 (mode router)`. */
  get label(): string {
    return `client ${this.sdk} ${this.version} (mode ${this.mode})`;
  }

  /** The pools the application may claim from. */
  pools(env: ClientEnvironmentView): readonly SandboxWarmPool[] {
    return this.warmPool !== undefined ? [this.warmPool] : env.warmPools;
  }

  /**
   * Refuses an environment this client cannot use in its mode.
   * @throws ClientIncompatibleError naming the client side and the environment side.
   */
  check(env: ClientEnvironmentView): void {
    const f = this.modeFacts;
    const cite = f.cite;
    const client = { sdk: this.sdk, version: this.version, mode: this.mode };
    const fail: Fail = (code, message, hint, needs, offers) => {
      throw new ClientIncompatibleError(
        this.node.path,
        code,
        `${this.label}: ${message} [${code}]`,
        hint,
        client,
        needs,
        offers,
      );
    };
    this.checkApi(fail);
    const pools = this.pools(env);
    if (pools.length === 0) {
      fail(
        'ClientNoPool',
        `claims from a SandboxWarmPool by name (create_sandbox(warmpool=…), ${this.facts.cite['claimsFrom']}), but the environment declares no SandboxWarmPool`,
        "add a pool of a template the client can use (env.addWarmPool) and pass it as the client's warmPool",
        {},
        { warmPools: [] },
      );
    }
    if (f.via === 'router') {
      const router = env.router;
      if (router === undefined)
        fail(
          'ClientNoRouter',
          `sends every call through the sandbox router (${f.transport}; ${cite}), but the environment declares no SandboxRouter`,
          'add a router (env.addRouter), or pick a mode that dials the pod',
          {},
          { router: null },
        );
      const rs = f.routerService;
      if (
        rs !== undefined &&
        (router!.serviceName !== rs.name || router!.port !== rs.port || router!.namespace !== this.routerNamespace)
      ) {
        fail(
          'ClientRouterService',
          `port-forwards to svc/${rs.name}:${rs.port} in namespace ${this.routerNamespace} (${cite}), but the environment's router is Service ${router!.namespace}/${router!.serviceName} port ${router!.port}`,
          "set the client's routerNamespace to the router's namespace (the Service name and port are fixed by the client)",
          { routerService: `${this.routerNamespace}/${rs.name}:${rs.port}` },
          { router: `${router!.namespace}/${router!.serviceName}:${router!.port}` },
        );
      }
      // Only SandboxDirectConnectionConfig sends headers of the application's own (extra_headers, e.g. a Bearer token);
      // the tunnel and gateway modes send none, and every router mode sends X-Sandbox-Pod-IP, which scoped-token refuses.
      const bearer = this.mode === 'router' && this.facts.extraHeaders;
      if (router!.requiresToken && (!bearer || router!.authorizationMode === 'scoped-token'))
        fail(
          'ClientRouterAuth',
          `sends ${bearer ? 'X-Sandbox-Pod-IP, which scoped-token refuses (authz/scopedtoken.go@v0.5.6)' : 'no Authorization header'} (${this.facts.cite['routerHeaders']}), but the router ${router!.namespace}/${router!.serviceName} (${router!.node.path}) refuses ${router!.authorizationMode === 'scoped-token' ? 'requests without a scoped token' : 'requests without a Bearer token'} (authorization ${router!.authorizationMode})`,
          bearer
            ? "use authorization tokenreview and pass the token in the client's extra_headers"
            : `${this.facts.extraHeaders ? 'use mode router with a token in extra_headers' : 'use client 1.0.8 (mode router with a token in extra_headers)'}, or a router whose callers are gated elsewhere (tokenreview with requireToken: false, or allow-all; the tunnel's port-forward is authorized by the API server)`,
          { authorization: bearer ? 'bearer' : 'none' },
          { authorization: router!.authorizationMode },
        );
      const need = this.commandTimeoutSeconds;
      // A python runtime answers only when the command ends: the router's limit bounds the command.
      if (need !== undefined && f.runtimeApi === 'python-runtime' && need * 1000 > router!.syncLimitMs) {
        const setting = routerLimitSetting(router!);
        fail(
          'ClientCommandExceedsRouterLimit',
          `runs commands of up to ${need} s through the router (commandTimeoutSeconds), but the router ${router!.namespace}/${router!.serviceName} (${router!.node.path}) ends a synchronous call after ${router!.syncLimitMs / 1000} s (${setting}, ${router!.limitFacts.cite})`,
          `set the router's responseHeaderTimeoutSeconds and proxyTimeoutSeconds to at least ${need}, or lower the client's commandTimeoutSeconds`,
          { commandTimeoutSeconds: need },
          { routerLimit: { seconds: router!.syncLimitMs / 1000, setting } },
        );
      }
      const missing = this.ports.filter((port) => !router!.sandboxPorts.includes(port));
      if (missing.length > 0)
        fail(
          'ClientRouterEgress',
          `asks the router for sandbox port ${missing.join(', ')} (X-Sandbox-Port), but the router may dial only ${router!.sandboxPorts.join(', ')} (its NetworkPolicy egress, ${router!.node.path})`,
          `add ${missing.join(', ')} to the router's sandboxPorts`,
          { ports: missing },
          { sandboxPorts: router!.sandboxPorts },
        );
    }
    for (const pool of pools) this.checkTemplate(pool, pool.template, fail);
  }

  /** Refuses a release that does not serve the API versions the client creates claims and reads sandboxes at. */
  private checkApi(fail: Fail): void {
    const f = this.facts;
    const rel = this.release.facts;
    const served = (kind: 'SandboxClaim' | 'Sandbox'): string[] =>
      rel.crds[kind].versions.filter((v) => v.served).map((v) => `${rel.crds[kind].group}/${v.name}`);
    const offered = [...served('SandboxClaim'), ...served('Sandbox')];
    const wanted = [f.claimApiVersion, f.sandboxApiVersion];
    const missing = wanted.filter((v) => !offered.includes(v));
    if (missing.length > 0)
      fail(
        'ClientApiNotServed',
        `creates SandboxClaims at ${f.claimApiVersion} and reads Sandboxes at ${f.sandboxApiVersion} (${f.cite['claimApiVersion']}), but release ${rel.tag} serves ${offered.join(', ')} (k8s/crds/*.yaml@${rel.tag})`,
        `pick the client that goes with release ${rel.tag} (docs/clients.md), or pin a release that serves ${missing.join(', ')}`,
        { apiVersions: wanted },
        { release: rel.tag, served: offered },
      );
  }

  private checkTemplate(pool: SandboxWarmPool, t: SandboxTemplate, fail: Fail): void {
    const f = this.modeFacts;
    const template = `${t.namespace}/${t.name}`;
    const side = `pool ${pool.namespace}/${pool.name} uses template ${t.namespace}/${t.name} whose runtime is ${t.runtime.kind} (container ${t.runtime.container}, ports ${t.runtime.ports.join(', ')})`;
    if (t.runtime.kind !== f.runtimeApi) {
      fail(
        'ClientRuntimeApi',
        `speaks the ${f.runtimeApi} API (${f.calls.map((c) => c.request.split(' ').slice(0, 2).join(' ').replace(/<.*$/, '…')).join(', ')}; ${f.cite}), but ${side}`,
        t.runtime.kind === 'custom'
          ? `declare the template's runtime kind (runtime: { kind: '${f.runtimeApi}', … }) if its server speaks that API`
          : `pick a ${t.runtime.kind} mode of the client, or a template whose runtime serves the ${f.runtimeApi} API`,
        { runtimeApi: f.runtimeApi },
        { template, runtime: t.runtime.kind },
      );
    }
    const missing = this.ports.filter((port) => !t.runtime.ports.includes(port));
    if (missing.length > 0)
      fail(
        'ClientRuntimePort',
        `dials runtime port ${missing.join(', ')} (${f.cite}), but ${side}`,
        "set the client's port to the runtime's, or the runtime's ports to the client's",
        { ports: missing },
        { template, ports: t.runtime.ports },
      );
    const bind = t.runtimeBind;
    if (f.needsPodNetworkListener && bind !== undefined && !bind.podNetwork) {
      fail(
        'ClientRuntimeLoopback',
        `reaches the runtime over the pod network (${f.transport}; ${f.cite}), but ${side} and its ${t.runtime.kind} binds ${bind.host} only under release ${t.release.facts.tag} (${bind.cite})`,
        t.runtime.kind === 'sandboxd' && bind.from === 'release'
          ? 'nothing outside the pod can reach a loopback listener: use a python-runtime template with a router mode, or pin a v1.0.x release, whose sandboxd binds the pod network (--listen-host)'
          : 'nothing outside the pod can reach a loopback listener: let the runtime listen on the pod network (e.g. --listen-host=0.0.0.0)',
        { listener: 'pod-network' },
        { template, runtime: t.runtime.kind, bind: bind.host },
      );
    }
    const need = this.commandTimeoutSeconds;
    const exec = t.runtimeExecLimit;
    if (need !== undefined && exec !== undefined && need * 1000 > exec.ms)
      fail(
        'ClientCommandExceedsExecLimit',
        `runs commands of up to ${need} s (commandTimeoutSeconds), but ${side} stops a command after ${exec.ms / 1000} s (${exec.cite})`,
        `set SANDBOX_EXEC_TIMEOUT_SECONDS on container ${t.runtime.container} to at least ${need}, or lower the client's commandTimeoutSeconds`,
        { commandTimeoutSeconds: need },
        { template, execLimit: { seconds: exec.ms / 1000, from: exec.from } },
      );
    if (f.needsService && t.service !== true)
      fail(
        'ClientNoService',
        `reads Sandbox.status.serviceFQDN (${f.cite}), but template ${t.namespace}/${t.name} does not set service: true`,
        'set service: true on the template',
        { service: true },
        { template, service: false },
      );
  }
}
