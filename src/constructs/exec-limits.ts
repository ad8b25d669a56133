/**
 * Time limits of synchronous commands at synthesis (case router-timeout-layers): a template's runtime exec limit, and
 * the router's limits beside it. A python runtime answers `/execute` only when the command ends, so through a router
 * whose response-header or proxy timeout is shorter than the runtime's exec limit a command the runtime would finish
 * fails at the router as a 502. Synthesis warns about that pair, and a declared client whose longest command passes a
 * limit on its path is refused (the client check, client.ts).
 */
import { runtimeExecLimitFacts, type RouterLimitFacts, type RouterTimeouts } from '../releases/index.js';
import type { Json } from './kube-object.js';
import type { EnvironmentProblem } from './problems.js';
import type { TemplateRuntime } from './template-runtime.js';

/** What these rules read of a SandboxRouter (structural, so this file needs no import of router.ts). */
export interface LimitedRouter {
  readonly node: { readonly path: string };
  /** The longest synchronous call through it, ms. */
  readonly syncLimitMs: number;
  readonly timeouts: RouterTimeouts;
  readonly limitFacts: RouterLimitFacts;
}

/** A template's runtime exec limit, and where it was read. */
export interface TemplateExecLimit {
  readonly ms: number;
  /** `env`: the runtime container's `SANDBOX_EXEC_TIMEOUT_SECONDS`; `release`: the release's default. */
  readonly from: 'env' | 'release';
  readonly cite: string;
}

/** Margin a router's limit keeps over the runtime's exec limit, ms, so the runtime's own timeout answer gets through. */
export const ROUTER_EXEC_MARGIN_MS = 5_000;

/**
 * The exec limit of a python runtime container: its literal `SANDBOX_EXEC_TIMEOUT_SECONDS` (a finite number > 0,
 * else the runtime falls back to its default, `examples/python-runtime-sandbox/main.py@v0.5.6`), or the release's
 * default. Undefined for runtimes with no synchronous exec limit (sandboxd streams; custom is unknown) and for
 * releases whose python runtime has none.
 */
export function templateExecLimit(tag: string, podSpec: Json, runtime: TemplateRuntime): TemplateExecLimit | undefined {
  if (runtime.kind !== 'python-runtime') return undefined;
  const facts = runtimeExecLimitFacts(tag, 'python-runtime');
  if (facts.execLimitMs === undefined) return undefined;
  const container = (podSpec['containers'] as Json[]).find((c) => c['name'] === runtime.container);
  const env = Array.isArray(container?.['env']) ? (container['env'] as Json[]) : [];
  const raw = env.find((e) => e['name'] === facts.env && typeof e['value'] === 'string')?.['value'];
  const seconds = raw === undefined ? NaN : Number(raw);
  if (Number.isFinite(seconds) && seconds > 0)
    return {
      ms: Math.round(seconds * 1000),
      from: 'env',
      cite: `podSpec container ${runtime.container} env ${facts.env}`,
    };
  return { ms: facts.execLimitMs, from: 'release', cite: facts.cite };
}

/** A router whose limit on a synchronous call is below a template's runtime exec limit (plus the margin). */
export interface RouterLimitWarning extends EnvironmentProblem {
  readonly reason: 'RouterLimitBelowExecLimit';
  /** The router's construct path and its limit, ms, with the setting that decides it. */
  readonly router: { readonly path: string; readonly syncLimitMs: number; readonly setting: string };
  /** `namespace/name` of the template and its runtime's exec limit, ms. */
  readonly template: string;
  readonly execLimitMs: number;
}

/** The setting that decides a router's synchronous limit, as a flag name. */
export function routerLimitSetting(router: LimitedRouter): string {
  const header = router.timeouts.responseHeaderTimeout;
  return header !== undefined && header.ms <= router.timeouts.proxyTimeout.ms
    ? (router.limitFacts.flags.responseHeaderTimeout ?? 'response-header-timeout')
    : (router.limitFacts.flags.proxyTimeout ?? router.limitFacts.proxyTimeoutEnv);
}

/** Warnings for every python-runtime template whose exec limit the router would cut short. */
export function routerLimitWarnings(
  router: LimitedRouter,
  templates: ReadonlyArray<{
    readonly namespace: string;
    readonly name: string;
    readonly execLimit?: TemplateExecLimit;
  }>,
): RouterLimitWarning[] {
  const setting = routerLimitSetting(router);
  const warnings: RouterLimitWarning[] = [];
  for (const t of templates) {
    if (t.execLimit === undefined || router.syncLimitMs >= t.execLimit.ms + ROUTER_EXEC_MARGIN_MS) continue;
    const path = router.node.path;
    warnings.push({
      path,
      reason: 'RouterLimitBelowExecLimit',
      message: `${path}: the router ends a synchronous call after ${router.syncLimitMs / 1000} s (${setting}), below the ${t.execLimit.ms / 1000} s exec limit of template ${t.namespace}/${t.name} (${t.execLimit.cite}) plus a ${ROUTER_EXEC_MARGIN_MS / 1000} s margin: a longer command fails at the router with 502 while it keeps running; set responseHeaderTimeoutSeconds / proxyTimeoutSeconds on the router, or lower the runtime's limit`,
      router: { path, syncLimitMs: router.syncLimitMs, setting },
      template: `${t.namespace}/${t.name}`,
      execLimitMs: t.execLimit.ms,
    });
  }
  return warnings;
}
