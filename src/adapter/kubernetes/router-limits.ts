/**
 * The deployed router's limits: its release's defaults, overridden by the flags and variables of its Deployment's
 * container (read as a view, `deploymentView`). Case router-timeout-layers.
 */
import { routerLimitFacts } from '../../releases/router-limits.js';
import { routerLimits, type RouterLimits } from '../runtime/layer-limits.js';
import type { ClusterReads } from './reads.js';

/** Where the router's Deployment is: the SandboxRouter construct's default namespace and upstream's name. */
export const DEFAULT_ROUTER_DEPLOYMENT = { namespace: 'agent-sandbox-system', name: 'sandbox-router' } as const;

/** The router's limits and whether its Deployment said anything (`deployment`) or only the release's defaults apply. */
export interface RouterLimitsReading {
  readonly limits: RouterLimits;
  /** `read`: from the Deployment; `absent`: no such Deployment; `unreadable`: the read failed (why in `message`). */
  readonly deployment: 'read' | 'absent' | 'unreadable';
  /** For `unreadable`: the failed read's message. */
  readonly message?: string;
}

/**
 * Reads the router Deployment `at` and derives its limits under `release`; without a readable Deployment, the
 * release's defaults (the router's values when nothing sets them).
 * @throws Error when `release` is of no known family (a caller's mistake, not the cluster's state).
 */
export async function readRouterLimits(
  reads: ClusterReads,
  release: string,
  at: { readonly namespace: string; readonly name: string } = DEFAULT_ROUTER_DEPLOYMENT,
): Promise<RouterLimitsReading> {
  const facts = routerLimitFacts(release);
  if (facts === undefined) throw new Error(`no router facts for release ${release}`);
  const d = await reads.deployment(at.namespace, at.name);
  if (d.kind !== 'ok')
    return {
      limits: routerLimits(facts),
      deployment: 'unreadable',
      message: d.kind === 'failed' ? d.error.message : d.message,
    };
  if (d.value === undefined) return { limits: routerLimits(facts), deployment: 'absent' };
  return {
    limits: routerLimits(facts, { name: `${at.namespace}/${at.name}`, args: d.value.args, env: d.value.env }),
    deployment: 'read',
  };
}
