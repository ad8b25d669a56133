/**
 * Probe of `router` (FACTS.md §6, §8, §10.5): discovered = Service `<ns>/<service>` exists (or, for a router run
 * outside the cluster, its URL answers); compatible = `GET /healthz` on the proxy port answers `{"status":"ok"}`
 * (`sandbox-router/README.md@v0.5.6`); configured = every template's policy admits the router's namespace and pod
 * labels (Managed default: pods `app: sandbox-router` in `agent-sandbox-system`,
 * `extensions/controllers/sandboxtemplate_controller.go@v0.5.6`; Unmanaged: the environment's own ingress peers).
 * `verified` comes from the workload probe: a sandbox's runtime health answered through the router.
 */
import { httpCall } from '../../adapter/runtime/http.js';
import { DEFAULT_LIMITS } from '../../adapter/runtime/limits.js';
import type { VerifyPlan } from '../plan.js';
import type { Probe } from '../runner.js';
import { isPlainObject } from '../../model/objects.js';
import { Facts, reads, type ProbeDeps } from './common.js';
import { selects } from './network.js';

/** Upstream's default ingress peer of a Managed template policy. */
export const MANAGED_ROUTER_PEER = { namespace: 'agent-sandbox-system', podLabels: { app: 'sandbox-router' } } as const;

/** Templates whose policies do not admit the router, with why (pure). */
export function routerAdmission(plan: VerifyPlan): string[] {
  const router = plan.router;
  if (!router) return [];
  const problems: string[] = [];
  for (const t of plan.templates) {
    const peers =
      t.networkPolicyManagement === 'Managed'
        ? [MANAGED_ROUTER_PEER]
        : plan.networkPolicies
            .filter((p) => p.namespace === t.namespace && p.template === t.name)
            .flatMap((p) => p.ingressFrom);
    const ok = peers.some(
      (p) => p.namespace === router.namespace && selects({ matchLabels: { ...p.podLabels } }, router.podLabels),
    );
    if (!ok)
      problems.push(
        `template ${t.namespace}/${t.name} (${t.networkPolicyManagement}) admits ${peers.map((p) => `${p.namespace}/${JSON.stringify(p.podLabels)}`).join(', ') || 'no ingress peers'}, not the router ${router.namespace}/${JSON.stringify(router.podLabels)}`,
      );
  }
  return problems;
}

/** Whether a `/healthz` body is the router's `{"status":"ok"}`. */
function healthyBody(body: string): boolean {
  try {
    const parsed: unknown = JSON.parse(body);
    return isPlainObject(parsed) && parsed['status'] === 'ok';
  } catch {
    return false;
  }
}

export function routerProbe(deps: ProbeDeps): Probe {
  return {
    id: 'router',
    after: [],
    covers: ['router'],
    timeoutStep: 'compatible',
    deadlineMs: 15_000,
    async run() {
      const f = new Facts('router');
      const router = deps.plan.router;
      if (!router)
        return f.add('discovered', 'missing', 'environment', 'NoRouterDeclared', 'the environment declares no router')
          .list;
      const subject = `Service ${router.namespace}/${router.service}`;
      const svc = await reads(deps).service(router.namespace, router.service);
      let health: { ok: boolean; text: string; durationMs: number } | undefined;
      if (router.url) {
        const r = await httpCall(
          { baseUrl: router.url.replace(/\/+$/, ''), headers: {}, describe: `router ${router.url}` },
          { method: 'GET', path: '/healthz' },
          { ...DEFAULT_LIMITS, deadlineMs: deps.plan.probeTimeoutMs },
          `router GET /healthz at ${router.url}`,
        );
        if (r.kind === 'ok') {
          const body = r.value.body.toString('utf8');
          health = {
            ok: r.value.status === 200 && healthyBody(body),
            text: `${r.value.status} ${body.slice(0, 80)}`,
            durationMs: r.value.durationMs,
          };
        } else health = { ok: false, text: r.kind === 'failed' ? r.error.message : r.message, durationMs: 0 };
      }
      if (svc.kind === 'ok' && svc.value)
        f.proven(
          'discovered',
          subject,
          'RouterServiceFound',
          `router Service ${router.namespace}/${router.service} exists`,
        );
      else if (svc.kind === 'ok' && health?.ok)
        f.proven(
          'discovered',
          `router ${router.url}`,
          'RouterAnswersOutsideCluster',
          `no Service ${router.namespace}/${router.service}, but a router answers at ${router.url} (outside the cluster)`,
        );
      else if (svc.kind === 'ok')
        f.add(
          'discovered',
          'missing',
          subject,
          'RouterServiceNotFound',
          `router Service ${router.namespace}/${router.service} does not exist`,
        );
      else f.failedCall('discovered', subject, svc);
      if (!health)
        f.add(
          'compatible',
          'unknown',
          `router ${router.namespace}/${router.service}`,
          'NoRouterUrl',
          'no router URL to call /healthz (pass --router-url)',
        );
      else if (health.ok)
        f.proven('compatible', `router ${router.url}`, 'RouterHealthy', `GET /healthz answered ${health.text}`, {
          durationMs: health.durationMs,
        });
      else
        f.add('compatible', 'missing', `router ${router.url}`, 'RouterUnhealthy', `GET /healthz: ${health.text}`, {
          durationMs: health.durationMs,
        });
      const problems = routerAdmission(deps.plan);
      if (problems.length === 0)
        f.proven(
          'configured',
          `router ${router.namespace}`,
          'RouterAdmittedByPolicies',
          `every template's policy admits router pods ${JSON.stringify(router.podLabels)} in ${router.namespace}`,
        );
      for (const p of problems) f.add('configured', 'missing', `router ${router.namespace}`, 'RouterNotAdmitted', p);
      return f.list;
    },
  };
}
