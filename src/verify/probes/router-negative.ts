/**
 * The router as an attack surface (case router-podip-ssrf): requests without credentials that a router must refuse.
 * (a) `X-Sandbox-ID: ../kube-system/x`, not a DNS label; (b) a Sandbox's name with `X-Sandbox-Pod-IP` naming an address
 * that is not its pod's; (c) `X-Sandbox-Pod-IP: 127.0.0.1`. Each counts only when refused with a 4xx and no upstream
 * connection was made, proved against a listener the verifier opens at the plan's canary host (where the router can
 * dial it): the header names that listener, so a router that forwards connects to it. Without a canary the refusal is
 * seen but the no-connection part stays unproven (unknown). A request for a Sandbox without credentials tells whether
 * the router authenticates anyone: one it lets through is a finding unless the environment acknowledged allow-all.
 * All evidence is on the `verified` step of `router`; it runs after the workloads, so a live Sandbox name is at hand.
 */
import { httpStatus, type StatusOutcome } from '../../adapter/runtime/http.js';
import { DEFAULT_LIMITS } from '../../adapter/runtime/limits.js';
import type { Verdict } from '../evidence.js';
import type { EvidenceReason } from '../reasons.js';
import type { Probe } from '../runner.js';
import { Facts, reads, selector, type ProbeDeps } from './common.js';
import { Canary, healthListenerPort, isLoopback, judgeControl, witnessAnswered } from './router-canary.js';

/** The three negative probes. */
export type NegativeKind = 'invalid-id' | 'foreign-pod-ip' | 'loopback-pod-ip';

/** The sandbox id of probe (a): a path, not a DNS label (case router-podip-ssrf). */
export const INVALID_SANDBOX_ID = '../kube-system/x';
/** How long after an answer a late connection to the canary still counts (a router may retry its dial). */
const LATE_DIAL_MS = 250;
/** Port named by (c) when the verifier does not share the router's loopback: nothing should listen on TCP 1. */
const UNOWNED_LOOPBACK_PORT = 1;

/** What one negative request got: an HTTP status code, or no usable answer (timeout, refused, redirect). */
export type NegativeAnswer = StatusOutcome;

/** Judges one negative probe (pure): a connection to the canary or a non-4xx answer means it was not refused. */
export function judgeNegative(
  answer: NegativeAnswer,
  owned: boolean,
  dialled: number,
): { verdict: Verdict; reason: EvidenceReason } {
  if (dialled > 0) return { verdict: 'missing', reason: 'RouterDialedCanary' };
  if ('failure' in answer) return { verdict: 'unknown', reason: 'RouterNegativeUnanswered' };
  if (answer.code >= 400 && answer.code < 500)
    return owned
      ? { verdict: 'proven', reason: 'RouterRefusedNegative' }
      : { verdict: 'unknown', reason: 'RouterNoConnectionUnproven' };
  return { verdict: 'missing', reason: 'RouterAcceptedNegative' };
}

/**
 * Judges the credential-less request (pure): 401/403 = the router demands credentials; an answer from past its
 * authorization (2xx, 5xx) = it authenticates nobody, acceptable only when acknowledged; anything else tells nothing.
 */
export function judgeAuthorization(
  answer: NegativeAnswer,
  acknowledged: boolean,
): { verdict: Verdict; reason: EvidenceReason } {
  if ('failure' in answer) return { verdict: 'unknown', reason: 'RouterAuthorizationUnknown' };
  if (answer.code === 401 || answer.code === 403) return { verdict: 'proven', reason: 'RouterRequiresCredentials' };
  if (answer.code >= 400 && answer.code < 500) return { verdict: 'unknown', reason: 'RouterAuthorizationUnknown' };
  return acknowledged
    ? { verdict: 'proven', reason: 'RouterUnauthenticatedAcknowledged' }
    : { verdict: 'missing', reason: 'RouterUnauthenticated' };
}

/** Path (c) asks for when judged against the router's health listener: its readiness endpoint answers 200. */
const WITNESS_PATH = '/readyz';

/**
 * The listener `X-Sandbox-Pod-IP: 127.0.0.1` reaches inside a router pod, for a verifier in another pod: the router's
 * health listener, bound on every address of the live pods (so on their loopback too) and seen answering at a pod IP.
 * A forwarding router would relay its 2xx, so a 4xx shows the request was not forwarded. Else why it is not at hand.
 */
async function loopbackWitness(deps: ProbeDeps): Promise<{ port: number; text: string } | { text: string }> {
  const router = deps.plan.router!;
  const via = `pods ${selector(router.podLabels)} in ${router.namespace}`;
  const read = await reads(deps).pods(router.namespace, selector(router.podLabels));
  if (read.kind !== 'ok')
    return {
      text: `the router pods could not be read (${read.kind === 'failed' ? read.error.message : read.message})`,
    };
  const found = read.value
    .filter((p) => !p.meta.deleting)
    .map((p) => ({ ip: p.ip, port: healthListenerPort(p.containers.flatMap((c) => c.args)) }));
  const port = found[0]?.port;
  if (found.length === 0 || port === undefined || found.some((x) => x.port !== port) || !found[0]!.ip)
    return {
      text: `no health listener bound on every address is common to the live router pods (${via}; --health-probe-bind-address=:<port> in each)`,
    };
  const ip = found[0]!.ip!;
  const answer = await httpStatus(
    { baseUrl: `http://${ip.includes(':') ? `[${ip}]` : ip}:${port}`, headers: {}, describe: `router pod ${ip}` },
    { method: 'GET', path: WITNESS_PATH },
    { ...DEFAULT_LIMITS, deadlineMs: deps.plan.probeTimeoutMs },
    `router health listener ${ip}:${port}`,
  );
  const got = 'failure' in answer ? answer.failure.message : `answered ${answer.code}`;
  return witnessAnswered(answer)
    ? {
        port,
        text: `the router pod's own health listener 127.0.0.1:${port} (bound on every address; GET ${WITNESS_PATH} at ${ip}:${port} ${got})`,
      }
    : { text: `the router pod's health listener GET ${WITNESS_PATH} at ${ip}:${port} ${got}` };
}

/** A live Sandbox to name in the probes (the workloads' probe sandboxes exist until cleanup), else a DNS label naming none. */
async function sandboxToName(deps: ProbeDeps): Promise<{ namespace: string; name: string; live: boolean }> {
  const namespaces = [...new Set(deps.plan.templates.map((t) => t.namespace))];
  const read = reads(deps);
  for (const ns of namespaces) {
    const r = await read.sandboxes(ns);
    const name = r.kind === 'ok' ? r.value[0]?.meta.name : undefined;
    if (name) return { namespace: ns, name, live: true };
  }
  return {
    namespace: namespaces[0] ?? deps.plan.router!.namespace,
    name: deps.workload.name('negative'),
    live: false,
  };
}

export function routerNegativeProbe(deps: ProbeDeps, after: readonly string[]): Probe {
  return {
    id: 'router-negative',
    after,
    covers: ['router'],
    timeoutStep: 'verified',
    deadlineMs: 4 * (deps.plan.probeTimeoutMs + LATE_DIAL_MS) + 10_000,
    async run(ctx) {
      const f = new Facts('router');
      const router = deps.plan.router!;
      if (!router.url)
        return f.add(
          'verified',
          'unknown',
          `router ${router.namespace}/${router.service}`,
          'NoRouterUrl',
          'no router URL for the negative probes (pass --router-url)',
        ).list;
      const url = router.url.replace(/\/+$/, '');
      const subject = `router ${url}`;
      const sb = await sandboxToName(deps);
      const named = sb.live
        ? `Sandbox ${sb.namespace}/${sb.name}`
        : `${sb.namespace}/${sb.name} (no live Sandbox; a DNS label naming none)`;
      const canaries: Canary[] = [];
      const open = async (host: string, ports: readonly number[] = []): Promise<Canary | string> => {
        const c = await Canary.open(host, ports);
        if (typeof c !== 'string') canaries.push(c);
        return c;
      };
      const send = async (
        headers: Record<string, string>,
        what: string,
        path = '/v1/health',
      ): Promise<NegativeAnswer> => {
        const answer = await httpStatus(
          { baseUrl: url, headers, describe: `router ${url}` },
          { method: 'GET', path },
          { ...DEFAULT_LIMITS, deadlineMs: deps.plan.probeTimeoutMs },
          `router ${what}`,
        );
        await new Promise((resolve) => setTimeout(resolve, LATE_DIAL_MS));
        return answer;
      };
      try {
        // Authorization: a Sandbox addressed by name, as clients do, with no credentials.
        const port = deps.plan.templates.find((t) => t.namespace === sb.namespace)?.ports.rest ?? 8080;
        const auth = await send(
          { 'X-Sandbox-ID': sb.name, 'X-Sandbox-Namespace': sb.namespace, 'X-Sandbox-Port': String(port) },
          'request without credentials',
        );
        const ack = router.acknowledgeUnauthenticated === true;
        const a = judgeAuthorization(auth, ack);
        const declared = router.authorizationMode
          ? `declared authorizationMode ${router.authorizationMode}${router.authorizationMode === 'allow-all' ? (ack ? ' (acknowledged)' : ' (not acknowledged)') : ''}`
          : 'no authorization mode declared';
        const got = 'failure' in auth ? auth.failure.message : `answered ${auth.code}`;
        const authText: Record<string, string> = {
          RouterRequiresCredentials: `a request for ${named} without credentials was refused (${got}); ${declared}`,
          RouterUnauthenticated: `the router authenticates nobody: a request for ${named} without credentials passed its authorization (${got}); ${declared}: anyone who reaches the router can use every sandbox`,
          RouterUnauthenticatedAcknowledged: `the router authenticates nobody: a request for ${named} without credentials passed its authorization (${got}); the environment acknowledged allow-all (acknowledgeUnauthenticated)`,
          RouterAuthorizationUnknown: `a request for ${named} without credentials ${got}, which does not tell whether the router authenticates callers; ${declared}`,
        };
        f.add('verified', a.verdict, subject, a.reason, authText[a.reason]!, {
          field: 'request without credentials',
          value: 'failure' in auth ? 'no answer' : String(auth.code),
        });

        // The canary listens where the router dials sandboxes: on a runtime port of the templates when it can bind one.
        const ports = [...new Set(deps.plan.templates.map((t) => t.ports.rest))];
        const canary = router.canaryHost ? await open(router.canaryHost, ports) : undefined;
        const shared = router.canaryHost !== undefined && isLoopback(router.canaryHost);
        const loopback = shared
          ? router.canaryHost === '127.0.0.1' && typeof canary === 'object'
            ? canary
            : await open('127.0.0.1')
          : undefined;
        const owned = (c: Canary | string | undefined): Canary | undefined => (typeof c === 'object' ? c : undefined);
        const noTarget = (c: Canary | string | undefined, fallback: string): string =>
          typeof c === 'string' ? `the verifier could not listen there (${c})` : fallback;
        const base = { 'X-Sandbox-Namespace': sb.namespace };
        let target = owned(canary);
        let unreachable: string | undefined;
        if (target && !shared) {
          // A pod IP proves nothing until the router is seen dialling it: a request it may forward names the canary.
          const before = target.connections;
          const answer = await send(
            {
              ...base,
              'X-Sandbox-ID': sb.name,
              'X-Sandbox-Pod-IP': target.host,
              'X-Sandbox-Port': String(target.port),
              ...(deps.routerToken ? { Authorization: `Bearer ${deps.routerToken}` } : {}),
            },
            'control request naming the canary',
          );
          const dialled = target.connections - before;
          const j = judgeControl(dialled);
          const got = 'failure' in answer ? answer.failure.message : `answered ${answer.code}`;
          const who = deps.routerToken ? "with the verifier's token" : 'without credentials (no router token)';
          const at = `the verifier's listener ${target.host}:${target.port}`;
          f.add(
            'verified',
            j.verdict,
            subject,
            j.reason,
            j.reason === 'RouterCanaryReached'
              ? `control: a request ${who} naming ${at} in X-Sandbox-Pod-IP was dialled (${dialled} connection(s), request "${target.request ?? '?'}"; it ${got}): the router reaches the canary`
              : `control: a request ${who} naming ${at} in X-Sandbox-Pod-IP was not dialled (it ${got}): the router cannot reach that address and port (its egress policy, routing) or refuses pod-IP headers from this caller, so the canary proves nothing`,
            {
              field: 'control X-Sandbox-Pod-IP <canary>',
              value:
                dialled > 0
                  ? `dialled ${target.host}:${target.port}`
                  : 'failure' in answer
                    ? 'no answer'
                    : String(answer.code),
            },
          );
          if (dialled === 0) {
            unreachable = `the router did not dial ${at} for the control request`;
            target = undefined;
          }
        }
        const cases: Array<{
          kind: NegativeKind;
          field: string;
          headers: Record<string, string>;
          target: Canary | undefined;
          witness?: string;
          path?: string;
          why?: string;
        }> = [];
        const why = (): string =>
          unreachable ?? noTarget(canary, 'no canary host (--router-canary-host) to point the request at');
        cases.push({
          kind: 'invalid-id',
          field: `(a) X-Sandbox-ID ${INVALID_SANDBOX_ID}`,
          headers: {
            ...base,
            'X-Sandbox-ID': INVALID_SANDBOX_ID,
            ...(target ? { 'X-Sandbox-Pod-IP': target.host, 'X-Sandbox-Port': String(target.port) } : {}),
          },
          target,
          ...(target ? {} : { why: why() }),
        });
        if (target)
          cases.push({
            kind: 'foreign-pod-ip',
            field: `(b) X-Sandbox-ID ${sb.name} + X-Sandbox-Pod-IP ${target.host}`,
            headers: {
              ...base,
              'X-Sandbox-ID': sb.name,
              'X-Sandbox-Pod-IP': target.host,
              'X-Sandbox-Port': String(target.port),
            },
            target,
          });
        const lo = owned(loopback);
        const witness = !shared && target ? await loopbackWitness(deps) : undefined;
        const loPort = lo ? lo.port : witness && 'port' in witness ? witness.port : UNOWNED_LOOPBACK_PORT;
        cases.push({
          kind: 'loopback-pod-ip',
          field: '(c) X-Sandbox-Pod-IP 127.0.0.1',
          headers: {
            ...base,
            'X-Sandbox-ID': sb.name,
            'X-Sandbox-Pod-IP': '127.0.0.1',
            'X-Sandbox-Port': String(loPort),
          },
          target: lo,
          ...(witness && 'port' in witness ? { witness: witness.text, path: WITNESS_PATH } : {}),
          ...(lo || (witness && 'port' in witness)
            ? {}
            : {
                why: noTarget(
                  loopback,
                  `the verifier does not share the router's loopback (canary host ${router.canaryHost ?? 'unset'} is not 127.0.0.0/8)${witness ? `, and ${witness.text}` : ''}; port ${UNOWNED_LOOPBACK_PORT} named instead`,
                ),
              }),
        });
        for (const c of cases) {
          ctx.note(`negative probe ${c.field}`);
          const before = c.target?.connections ?? 0;
          const answer = await send(c.headers, c.field, c.path);
          const dialled = (c.target?.connections ?? 0) - before;
          const j = judgeNegative(answer, c.target !== undefined || c.witness !== undefined, dialled);
          const at = c.target
            ? `the verifier's listener ${c.target.host}:${c.target.port}`
            : (c.witness ?? 'no listener of the verifier');
          const got = 'failure' in answer ? answer.failure.message : `answered ${answer.code}`;
          const text: Record<string, string> = {
            RouterRefusedNegative: c.witness
              ? `${c.field}: refused (${got}); forwarded, it would have met ${at}, which answers 2xx`
              : `${c.field}: refused (${got}) and ${at} saw no connection`,
            RouterDialedCanary: `${c.field}: the router connected to ${at} (${dialled} connection(s), request "${c.target?.request ?? '?'}"; it ${got}): it forwards what it should refuse`,
            RouterAcceptedNegative: `${c.field}: not refused: the router ${got} (a 2xx or 5xx means it passed validation and tried the upstream)`,
            RouterNoConnectionUnproven: `${c.field}: refused (${got}), but that no upstream connection was made is unproven: ${c.why ?? at}`,
            RouterNegativeUnanswered: `${c.field}: no usable answer (${got}); neither refusal nor forwarding is shown`,
          };
          f.add('verified', j.verdict, subject, j.reason, text[j.reason]!, {
            field: c.field,
            value:
              dialled > 0
                ? `dialled ${c.target!.host}:${c.target!.port}`
                : 'failure' in answer
                  ? 'no answer'
                  : String(answer.code),
          });
        }
        if (!target)
          f.add(
            'verified',
            'unknown',
            subject,
            'RouterNoConnectionUnproven',
            `(b) a pod-IP header naming an address not the sandbox's: not sent, ${unreachable ?? noTarget(canary, 'no canary host (--router-canary-host) of the verifier to name')}`,
            { field: '(b) X-Sandbox-Pod-IP <not the sandbox>' },
          );
      } finally {
        await Promise.all(canaries.map((c) => c.close()));
      }
      return f.list;
    },
  };
}
