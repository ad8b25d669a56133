/**
 * Probe of `router` (`sandbox-router/README.md@v0.5.6`, `extensions/controllers/sandboxtemplate_controller.go@v0.5.6`): discovered = Service `<ns>/<service>` exists (or, for a router run
 * outside the cluster, its URL answers); compatible = `GET /healthz` on the proxy port answers `{"status":"ok"}`
 * (`sandbox-router/README.md@v0.5.6`); configured = the live NetworkPolicies selecting every template's pods admit the
 * live router pods (./router-admission.ts; case netpol-router-peer-mismatch). `verified` comes from the workload probe (a sandbox's runtime
 * answered through the router by name) and from the negative probes (./router-negative.ts; case router-podip-ssrf).
 */
import type { NetworkPolicyView } from '../../adapter/kubernetes/views.js';
import { httpCall } from '../../adapter/runtime/http.js';
import { DEFAULT_LIMITS } from '../../adapter/runtime/limits.js';
import type { Probe } from '../runner.js';
import { isPlainObject } from '../../model/objects.js';
import { Facts, reads, type ProbeDeps } from './common.js';
import { judgeAdmission, liveRouterPods, liveTemplatePodLabels } from './router-admission.js';

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
      const live = await liveRouterPods(deps, svc.kind === 'ok' ? svc.value : undefined);
      const notReady = !health?.ok && svc.kind === 'ok' && svc.value ? unreadyRouter(live) : undefined;
      // A router Service with no ready pod behind it: nothing would answer at any URL, so say that rather than ask for one.
      if (notReady !== undefined)
        f.add(
          'compatible',
          health ? 'missing' : 'unknown',
          `router ${router.namespace}/${router.service}`,
          'RouterPodsNotReady',
          `${notReady.text}: no router pod is ready, so nothing answers behind Service ${router.namespace}/${router.service}${health ? ` (GET /healthz: ${health.text})` : ''}; ${notReady.restarting ? `its container restarts: read why (kubectl -n ${router.namespace} logs <pod> --previous); a router with its Pod-IP cache on binds no port until it has listed pods, so an API server its NetworkPolicy refuses keeps it from starting (the router's apiServer prop)` : "get the router's pods (its Deployment) running and Ready"}`,
          { value: notReady.text },
        );
      else if (!health)
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
      await admissionEvidence(deps, f, live);
      return f.list;
    },
  };
}

/**
 * How many live router pods there are and how they were found, when none is ready, with what each restarting or waiting
 * pod's containers show (e.g. `CrashLoopBackOff, 4 restarts`); undefined when one is ready (or the list is unread).
 */
export function unreadyRouter(
  live: Awaited<ReturnType<typeof liveRouterPods>>,
): { text: string; restarting: boolean } | undefined {
  if (live.kind !== 'ok' || live.value.pods.some((p) => p.ready === true)) return undefined;
  const troubled = live.value.pods
    .filter((p) => (p.restarts ?? 0) > 0 || p.waiting !== undefined)
    .map((p) => `${p.name}: ${[p.waiting, `${p.restarts ?? 0} restarts`].filter(Boolean).join(', ')}`);
  return {
    text: `0 of ${live.value.pods.length} ${live.value.via} ready${troubled.length > 0 ? ` (${troubled.join('; ')})` : ''}`,
    restarting: live.value.pods.some((p) => (p.restarts ?? 0) > 0),
  };
}

/** `configured`: per template, whether the live policies selecting its pods admit the live router pods. */
async function admissionEvidence(
  deps: ProbeDeps,
  f: Facts,
  live: Awaited<ReturnType<typeof liveRouterPods>>,
): Promise<void> {
  const router = deps.plan.router!;
  const subject = `router ${router.namespace}`;
  if (live.kind !== 'ok') {
    f.failedCall('configured', `router pods in ${router.namespace}`, live);
    return;
  }
  const { pods, via } = live.value;
  if (pods.length === 0) {
    f.add(
      'configured',
      'unknown',
      subject,
      'RouterPodsNotFound',
      `no live router pods (${via}): whether template policies admit the router cannot be read from the cluster`,
      { value: via },
    );
    return;
  }
  const described = pods.map((p) => `${p.namespace}/${p.name} ${JSON.stringify(p.labels)}`).join(', ');
  const policies = new Map<string, NetworkPolicyView[]>();
  for (const t of deps.plan.templates) {
    const tsubject = `template ${t.namespace}/${t.name}`;
    const labels = await liveTemplatePodLabels(deps, t);
    if (labels.kind !== 'ok') {
      f.failedCall('configured', `${tsubject} pod labels`, labels);
      continue;
    }
    if (!labels.value) {
      f.add(
        'configured',
        'unknown',
        tsubject,
        'RouterAdmissionUnknown',
        `${tsubject}: no live pod and no SandboxTemplate to read pod labels from`,
      );
      continue;
    }
    if (!policies.has(t.namespace)) {
      const r = await reads(deps).networkPolicies(t.namespace);
      if (r.kind !== 'ok') {
        f.failedCall('configured', `NetworkPolicies in ${t.namespace}`, r);
        continue;
      }
      policies.set(t.namespace, r.value);
    }
    const a = judgeAdmission(t.namespace, labels.value.labels, policies.get(t.namespace)!, pods, t.ports.rest);
    const seen = `router pods ${described} (${via}); ${tsubject} pods from ${labels.value.source}; port ${t.ports.rest}`;
    if (a.verdict === 'admitted')
      f.proven(
        'configured',
        tsubject,
        'RouterAdmittedByPolicies',
        a.selecting.length === 0
          ? `no live NetworkPolicy restricts ingress to the pods of ${tsubject}; ${seen}`
          : `live NetworkPolicies ${a.selecting.join(', ')} admit every router pod; ${seen}`,
        { value: a.selecting.join(', ') },
      );
    else if (a.verdict === 'not-admitted')
      for (const name of a.selecting)
        f.add(
          'configured',
          'missing',
          tsubject,
          'RouterNotAdmitted',
          `router not admitted by NetworkPolicy ${name} (router pods ${a.routerPods.join(', ')}): no rule of the live policies selecting the pods of ${tsubject} admits them; ${seen}`,
          { field: 'NetworkPolicy', value: name, objects: [...a.routerPods] },
        );
    else
      f.add(
        'configured',
        'unknown',
        tsubject,
        'RouterAdmissionUnknown',
        `live NetworkPolicies ${a.selecting.join(', ')} name peers the verifier cannot judge for router pods ${a.routerPods.join(', ')} (a namespace label it did not read, a named port, or an ipBlock without the pod IP); ${seen}`,
      );
  }
  if (deps.plan.templates.length === 0)
    f.proven('configured', subject, 'RouterAdmittedByPolicies', `no template declared; router pods ${described}`);
}
