/**
 * The capability adapter (docs/architecture.md, "The capability adapter"): the one narrow interface between the product and Agent Sandbox. Kubernetes
 * operations go through {@link KubeSessions}; commands go through {@link Executions} over one {@link Transport}. The
 * verifier uses it for the client path (its probe claims); it runs no commands through it, so it passes no transport.
 */
import { FAMILY_VERSION, familyConverts } from '../model/releases.js';
import { CORE_GROUP, EXTENSIONS_GROUP } from '../model/resources.js';
import { Cluster } from './kubernetes/cluster.js';
import { ClusterReads } from './kubernetes/reads.js';
import { KubeSessions, type KubeSessionsOptions, type SessionScope } from './kubernetes/sessions.js';
import {
  DEFAULT_LIMIT_RELEASE,
  Executions,
  type RuntimeBinding,
  type RuntimeSpec,
  type SupportLookup,
} from './runtime/executions.js';
import { readRouterLimits, type RouterLimitsReading } from './kubernetes/router-limits.js';
import { routerLimitFacts } from '../releases/router-limits.js';
import { RouterTransport } from './transports/router.js';
import type { CallLimits } from './runtime/limits.js';
import type { Transport } from './transports/types.js';
import type {
  CapabilityAdapter,
  CapabilityReport,
  ExecutionRef,
  ExecutionRequest,
  ExecutionStatus,
  FileDownload,
  FileDownloadRequest,
  FileTransfer,
  FileUploadRequest,
  Observation,
  Result,
  SessionRef,
  Termination,
} from './types.js';
import type { KubeClient } from './kubernetes/client.js';
import type { AdapterReason } from './reasons.js';

// The types the adapter's public signatures use, so the `/adapter` entry point documents and exports them.
export type {
  AdapterError,
  CapabilityAdapter,
  CapabilityReport,
  ExecutionLayer,
  ExecutionOutcome,
  ExecutionRef,
  ExecutionRequest,
  ExecutionStatus,
  FileContent,
  FileDownload,
  FileDownloadRequest,
  FileTransfer,
  FileUploadRequest,
  HttpRefusal,
  KubeRequest,
  Observation,
  Result,
  SessionPhase,
  SessionRef,
  SessionTemplate,
  StreamOutput,
  Termination,
} from './types.js';
export {
  CAPABILITY_REASONS,
  EXECUTION_REASONS,
  OBSERVATION_REASONS,
  TEMPLATE_REASONS,
  type AdapterReason,
  type CapabilityReason,
  type ExecutionReason,
  type ObservationReason,
  type TemplateReason,
} from './reasons.js';
export type { ApiConstructor, CallInfo, KubeConnectOptions } from './kubernetes/client.js';
// The value that connects: `connect({ kubeconfig?, context?, inCluster? })` (or `KubeClient.connect`) gives the
// KubeClient this adapter and the verifier (`/verify`) take.
export { connect, KubeClient } from './kubernetes/client.js';
export { KubeconfigError, type KubeconfigProblem } from './kubernetes/errors.js';
export type { KubeSessionsOptions, SessionScope } from './kubernetes/sessions.js';
export type { RuntimeSpec, SupportLookup } from './runtime/executions.js';
export type { CallLimits } from './runtime/limits.js';
export type { LayerLimit, RouterLimits, SyncCallLimits } from './runtime/layer-limits.js';
export type { RouterLimitsReading } from './kubernetes/router-limits.js';
export type { HttpEndpoint, RuntimeTarget, Transport } from './transports/types.js';

export interface KubeCapabilityAdapterOptions extends KubeSessionsOptions {
  readonly client: KubeClient;
  /**
   * Commands: without them the adapter runs none (`startExecution` is `unsupported`, `NoExecutionTransport`).
   * @default - none: the adapter runs no commands
   */
  readonly executions?: ExecutionOptions;
}

/** How commands are run: transport, the support states that gate them, and each template's runtime. */
export interface ExecutionOptions {
  /** How runtimes are reached; the production path to sandboxd is `port-forward`. */
  readonly transport: Transport;
  /** Support states from the verifier; `startExecution` needs `runtime-exec` `verified` for the session's template. */
  readonly supportStates: SupportLookup;
  /** The runtime a template's pods run (`template/<ns>/<name>` → spec); undefined = unknown, execution refused. */
  readonly runtimes: (template: `template/${string}/${string}`) => RuntimeSpec | undefined;
  /** @default - DEFAULT_LIMITS of the runtime layer: 30 s deadline, 1 MiB request, 4 MiB response */
  readonly limits?: Partial<CallLimits>;
  /**
   * Executions kept for `queryExecution`.
   * @default 256
   */
  readonly registryCapacity?: number;
  /**
   * Largest file one `uploadFile` or `downloadFile` moves, bytes; past it the transfer is `failed`, category `too-large`.
   * @default 67108864 (64 MiB, DEFAULT_MAX_FILE_BYTES of the runtime layer)
   */
  readonly maxFileBytes?: number;
  /**
   * The pinned release, whose router and runtime defaults apply where the cluster says nothing else.
   * @default - the release the install's `app.kubernetes.io/version` label names, else v1.0.3
   */
  readonly release?: string;
  /**
   * The router's Deployment, whose args and env set its timeouts (read when the transport is the router).
   * @default - agent-sandbox-system/sandbox-router
   */
  readonly routerDeployment?: { readonly namespace: string; readonly name: string };
}

/** How long the router's limits read from its Deployment are reused, ms. */
const ROUTER_LIMITS_TTL_MS = 60_000;

export class KubeCapabilityAdapter implements CapabilityAdapter {
  readonly sessions: KubeSessions;
  private readonly executions?: { readonly runner: Executions; readonly options: ExecutionOptions };
  private readonly client: KubeClient;
  private routerReading?: { readonly at: number; readonly value: Promise<RouterLimitsReading> };

  constructor(options: KubeCapabilityAdapterOptions) {
    this.client = options.client;
    this.sessions = new KubeSessions(options.client, options.labels ? { labels: options.labels } : {});
    const ex = options.executions;
    if (ex) {
      const reads = new ClusterReads(new Cluster(options.client));
      const transport = ex.transport;
      const runner = new Executions({
        transport,
        supportStates: ex.supportStates,
        // A call that lost its runtime reads the session's pod: a container killed for memory ends as `oom-killed`.
        pods: async (namespace, name) => {
          const r = await reads.pod(namespace, name);
          return r.kind === 'ok' ? r.value : undefined;
        },
        ...(ex.limits ? { limits: ex.limits } : {}),
        ...(ex.registryCapacity ? { capacity: ex.registryCapacity } : {}),
        ...(ex.maxFileBytes ? { maxFileBytes: ex.maxFileBytes } : {}),
        ...(ex.release ? { release: ex.release } : {}),
        ...(transport instanceof RouterTransport
          ? {
              routerLimits: async () => {
                const reading = await this.routerLimits();
                transport.useLimits(reading.limits);
                return reading.limits;
              },
            }
          : {}),
      });
      this.executions = { runner, options: ex };
    }
  }

  /**
   * The deployed router's limits (its Deployment's args and env over the release's defaults), reused for a minute.
   * The release is the adapter's `release` option, else the install's label, else v1.0.3.
   */
  routerLimits(): Promise<RouterLimitsReading> {
    const now = Date.now();
    if (this.routerReading && now - this.routerReading.at < ROUTER_LIMITS_TTL_MS) return this.routerReading.value;
    const value = (async () => {
      const release = await this.limitRelease();
      const reads = new ClusterReads(new Cluster(this.client));
      return readRouterLimits(reads, release, this.executions?.options.routerDeployment);
    })();
    this.routerReading = { at: now, value };
    return value;
  }

  /** The release whose defaults apply: the option, else a known release the install's label names, else v1.0.3. */
  private async limitRelease(): Promise<string> {
    const option = this.executions?.options.release;
    if (option) return option;
    const live = await this.sessions.liveRelease();
    const tag = live.kind === 'ok' ? live.value.tag : undefined;
    return tag !== undefined && routerLimitFacts(tag) !== undefined ? tag : DEFAULT_LIMIT_RELEASE;
  }

  /** See `KubeSessions.createFromTemplate`: idempotent by operation id; v0.4 → `unsupported`. */
  createFromTemplate(scope: SessionScope, templateVersion: string, operationId: string): Promise<Result<SessionRef>> {
    return this.sessions.createFromTemplate(scope, templateVersion, operationId);
  }

  /** See `KubeSessions.observe`: phase from current-generation conditions; claims judged by their bound Sandbox. */
  observe(ref: SessionRef): Promise<Result<Observation>> {
    return this.sessions.observe(ref);
  }

  /** See `KubeSessions.terminate`: preconditioned on uid (and `intentVersion` when not `''`); gone → `already-gone`. */
  terminate(ref: SessionRef, intentVersion: string): Promise<Result<Termination>> {
    return this.sessions.terminate(ref, intentVersion);
  }

  /**
   * What the adapter can tell from the API alone: `sandbox-api` and `extensions-api` (discovered when the group is served,
   * compatible when it serves the version the adapter uses for that family) and `conversion` (v0.5: compatible when the
   * Sandbox CRD uses the Webhook strategy with a CA bundle; unsupported on v0.4 and v1.0, which serve one version). Never above `compatible`:
   * configured and verified need the verifier's probes.
   */
  async capabilities(clusterIdentity: string): Promise<CapabilityReport> {
    const rel = await this.sessions.liveRelease(true);
    if (rel.kind !== 'ok') {
      const why = rel.kind === 'failed' ? rel.error.message : rel.message;
      return {
        cluster: clusterIdentity,
        capabilities: [
          {
            name: 'sandbox-api',
            state: 'absent',
            reason: 'ClusterUnreadable',
            message: `could not read the cluster: ${why}`,
          },
        ],
      };
    }
    const r = rel.value;
    const want = r.family === undefined ? 'v1beta1' : FAMILY_VERSION[r.family];
    const api = (versions: readonly string[], group: string): Support =>
      versions.length === 0
        ? { state: 'absent', reason: 'GroupNotServed', message: `${group} is not served` }
        : versions.includes(want)
          ? { state: 'compatible', reason: 'VersionServed', message: `${group} serves ${versions.join(', ')}` }
          : {
              state: 'discovered',
              reason: 'VersionNotServed',
              message: `${group} serves ${versions.join(', ')}, not ${want}`,
            };
    const conversion = ((): Support => {
      if (r.family === undefined || !familyConverts(r.family))
        return {
          state: 'unsupported',
          reason: 'FamilyConvertsNothing',
          message: `family ${r.family ?? 'none'} serves one API version and converts nothing`,
        };
      const crd = r.sandboxCrd;
      if (!crd)
        return {
          state: 'discovered',
          reason: 'CrdUnreadable',
          message: 'Sandbox CRD not readable: cannot check its conversion stanza',
        };
      if (crd.conversion !== 'Webhook')
        return {
          state: 'discovered',
          reason: 'ConversionNotWebhook',
          message: `Sandbox CRD conversion strategy is ${crd.conversion}, not Webhook`,
        };
      return crd.caBundle
        ? {
            state: 'compatible',
            reason: 'ConversionWebhookReady',
            message: 'Sandbox CRD converts through a webhook with a CA bundle',
          }
        : {
            state: 'discovered',
            reason: 'ConversionCaBundleMissing',
            message: 'Sandbox CRD conversion webhook has no caBundle yet',
          };
    })();
    const runner = this.executions?.runner;
    const executionLimits = runner
      ? await Promise.all([runner.limitsFor({ kind: 'python-runtime' }), runner.limitsFor({ kind: 'sandboxd' })])
      : undefined;
    return {
      cluster: clusterIdentity,
      capabilities: [
        { name: 'sandbox-api', ...api(r.coreVersions, CORE_GROUP) },
        { name: 'extensions-api', ...api(r.extensionsVersions, EXTENSIONS_GROUP) },
        { name: 'conversion', ...conversion },
      ],
      ...(executionLimits ? { executionLimits } : {}),
    };
  }

  /**
   * Observes the session; it must be Ready with a pod IP or pod name, made from a known template whose runtime is known and
   * whose `runtime-exec` is verified. Then starts the command (limits checked before sending).
   */
  async startExecution(executionId: string, request: ExecutionRequest): Promise<Result<ExecutionRef>> {
    if (!this.executions) return noExecutions();
    const bound = await this.bind(request.session);
    if (bound.kind !== 'ok') return bound;
    return this.executions.runner.start(executionId, request, bound.value);
  }

  /**
   * Writes a file into the session's runtime through its file API (never argv), streamed, at most `maxFileBytes`
   * (`failed`, category `too-large`, past it). Same session checks and gate as {@link startExecution}.
   */
  async uploadFile(request: FileUploadRequest): Promise<Result<FileTransfer>> {
    if (!this.executions) return noExecutions();
    const bound = await this.bind(request.session);
    if (bound.kind !== 'ok') return bound;
    return this.executions.runner.upload(request, bound.value);
  }

  /** Reads a file from the session's runtime through its file API, at most `maxFileBytes`; checks as {@link uploadFile}. */
  async downloadFile(request: FileDownloadRequest): Promise<Result<FileDownload>> {
    if (!this.executions) return noExecutions();
    const bound = await this.bind(request.session);
    if (bound.kind !== 'ok') return bound;
    return this.executions.runner.download(request, bound.value);
  }

  /** The runtime of a Ready session: its template, the template's declared runtime and the pod. */
  private async bind(session: SessionRef): Promise<Result<RuntimeBinding>> {
    const runtimes = this.executions!.options.runtimes;
    const obs = await this.sessions.observe(session);
    if (obs.kind !== 'ok') return obs;
    const o = obs.value;
    if (o.phase !== 'Ready')
      return {
        kind: 'rejected',
        reason: notReadyReason(o),
        message: `session ${o.ref.namespace}/${o.ref.name} is ${o.phase} (${o.message}), not Ready: no call was made to its runtime`,
      };
    if (!o.template)
      return {
        kind: 'rejected',
        reason: 'TemplateUnknown',
        message: `cannot tell which template session ${o.ref.namespace}/${o.ref.name} was made from (no agents.x-k8s.io/sandbox-template-ref annotation)`,
      };
    const template = `template/${o.ref.namespace}/${o.template}` as const;
    const runtime = runtimes(template);
    if (!runtime)
      return {
        kind: 'unsupported',
        capability: 'runtime-exec',
        state: 'absent',
        reason: 'NoRuntimeDeclared',
        message: `no runtime is declared for ${template}`,
      };
    const target = {
      namespace: o.ref.namespace,
      sandboxName: o.sandboxName ?? o.ref.name,
      ...(o.podName ? { podName: o.podName } : {}),
      ...(o.podIPs[0] ? { podIP: o.podIPs[0] } : {}),
    };
    return { kind: 'ok', value: { template, runtime, target } };
  }

  /** Status of an execution started by this adapter instance; unknown or evicted ids are `rejected`. */
  async queryExecution(executionId: string): Promise<Result<ExecutionStatus>> {
    return this.executions ? this.executions.runner.query(executionId) : noExecutions();
  }
}

/** The stable reason a not-Ready session takes no command: suspended, terminating, unbound claim, ended, else not Ready. */
function notReadyReason(o: Observation): AdapterReason {
  if (o.phase === 'Suspended') return 'SessionSuspended';
  if (o.phase === 'Terminating') return 'SessionTerminating';
  if (o.phase === 'Gone') return 'SessionGone';
  if (o.phase === 'Finished' || o.phase === 'Failed') return 'SessionEnded';
  if (o.ref.via === 'claim' && !o.sandboxName) return 'SessionUnbound';
  return 'SessionNotReady';
}

/** One capability's state in a {@link CapabilityReport}, with its code and words. */
type Support = Omit<CapabilityReport['capabilities'][number], 'name'>;

function noExecutions(): Result<never> {
  return {
    kind: 'unsupported',
    capability: 'runtime-exec',
    state: 'absent',
    reason: 'NoExecutionTransport',
    message: 'this adapter was built without a runtime transport: it runs no commands',
  };
}
