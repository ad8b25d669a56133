/**
 * The effective limit of one synchronous runtime call, per transport (case router-timeout-layers): every layer the call
 * crosses has its own timeout (the router's response-header and proxy timeouts, the runtime's exec limit, the
 * adapter's longest deadline), and the smallest decides. A call whose deadline is longer is refused before anything
 * is sent, naming that layer and its value, instead of failing later as what looks like a connection error.
 */
import {
  formatGoDuration,
  routerTimeouts,
  runtimeExecLimitFacts,
  type RouterLimitFacts,
} from '../../releases/router-limits.js';
import type { LayerLimit, SyncCallLimits, TransportKind } from '../types.js';
import { MAX_DEADLINE_MS } from './limits.js';

export type { LayerLimit, SyncCallLimits };

/** The limits of one router, from its release's defaults and, when read, its Deployment's args and env. */
export interface RouterLimits {
  readonly release: string;
  readonly router: RouterLimitFacts['router'];
  /** Whether requests carry `X-Sandbox-Timeout` (only to routers that take it). */
  readonly honoursSandboxTimeout: boolean;
  /** Absent for the python router, which has no separate header wait. */
  readonly responseHeaderTimeout?: LayerLimit;
  readonly proxyTimeout: LayerLimit;
  /** `namespace/name` of the Deployment read, or absent when only the release's defaults are known. */
  readonly deployment?: string;
}

/** The router container's arguments and literal environment, as read from its Deployment. */
export interface DeployedRouter {
  /** `namespace/name`. */
  readonly name: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

const seconds = (ms: number): string => formatGoDuration(ms);
const SOURCES = { flag: 'deployment-flag', env: 'deployment-env', default: 'release-default' } as const;

/** The router's limits: its release's defaults, overridden by its Deployment's flags and variables when read. */
export function routerLimits(facts: RouterLimitFacts, deployed?: DeployedRouter): RouterLimits {
  const t = routerTimeouts(facts, deployed?.args, deployed?.env);
  const header = t.responseHeaderTimeout;
  return {
    release: facts.release,
    router: facts.router,
    honoursSandboxTimeout: facts.honoursSandboxTimeout,
    ...(header !== undefined
      ? {
          responseHeaderTimeout: {
            layer: 'router',
            setting: 'router-response-header-timeout',
            limitMs: header.ms,
            source: SOURCES[header.source],
            label: `router response-header timeout ${seconds(header.ms)}`,
          },
        }
      : {}),
    proxyTimeout: {
      layer: 'router',
      setting: 'router-proxy-timeout',
      limitMs: t.proxyTimeout.ms,
      source: SOURCES[t.proxyTimeout.source],
      label: `router proxy timeout ${seconds(t.proxyTimeout.ms)}`,
    },
    ...(deployed ? { deployment: deployed.name } : {}),
  };
}

/** What a runtime is, as far as its limits go. */
export interface RuntimeLimitSpec {
  readonly kind: 'sandboxd' | 'python-runtime';
  /** The runtime's own exec limit, ms (python runtime `SANDBOX_EXEC_TIMEOUT_SECONDS`); absent = the release's default. */
  readonly execLimitMs?: number;
}

const ADAPTER_LIMIT: LayerLimit = {
  layer: 'adapter',
  setting: 'adapter-max-deadline',
  limitMs: MAX_DEADLINE_MS,
  source: 'adapter',
  label: `adapter longest deadline ${seconds(MAX_DEADLINE_MS)}`,
};

/**
 * The layers of one synchronous call of `runtime` over `transport` under release `release`. The adapter's own HTTP
 * client takes every timeout from the call's deadline (http.ts `requestTimeouts`), so it adds no limit below the
 * adapter's longest deadline. Through a router that takes `X-Sandbox-Timeout` the call's deadline is sent there, so
 * only the router's proxy timeout (its cap) remains.
 */
export function syncCallLimits(
  transport: TransportKind,
  runtime: RuntimeLimitSpec,
  release: string,
  router?: RouterLimits,
): SyncCallLimits {
  const facts = runtimeExecLimitFacts(release, runtime.kind);
  const layers: LayerLimit[] = [ADAPTER_LIMIT];
  if (!facts.streaming) {
    const execMs = runtime.execLimitMs ?? facts.execLimitMs;
    if (execMs !== undefined)
      layers.push({
        layer: 'runtime',
        setting: 'runtime-exec-timeout',
        limitMs: execMs,
        source: runtime.execLimitMs !== undefined ? 'runtime-spec' : 'release-default',
        label: `runtime exec timeout ${seconds(execMs)}${facts.env ? ` (${facts.env})` : ''}`,
      });
    if (transport === 'router' && router) {
      if (router.responseHeaderTimeout) layers.push(router.responseHeaderTimeout);
      layers.push(router.proxyTimeout);
    }
  }
  layers.sort((a, b) => a.limitMs - b.limitMs);
  return { transport, runtime: runtime.kind, streaming: facts.streaming, layers, effective: layers[0]! };
}

/** The layer whose limit `deadlineMs` exceeds (the smallest), or undefined when the call fits every layer. */
export function exceededLayer(deadlineMs: number, limits: SyncCallLimits): LayerLimit | undefined {
  return deadlineMs > limits.effective.limitMs ? limits.effective : undefined;
}
