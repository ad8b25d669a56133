/**
 * The workload test: proves capabilities by using them the way a client does. Per declared template it creates
 * labelled probe objects — on v0.5 a SandboxClaim through the adapter's `createFromTemplate` (the client path) on the
 * template's declared warm pool, or on a one-replica SandboxWarmPool of its own when none is declared; on v0.4 a bare
 * Sandbox with the template's pod template — waits (watch, bounded) for the Sandbox to be Ready at its current
 * generation, then asks the runtime two distinct nonce commands over the client's transport.
 *
 * `verified` needs all of: Ready=True at the Sandbox's current generation (a claim is judged by its bound Sandbox, and
 * only once that Sandbox is controller-owned by the claim: case 01), and both nonces echoed exactly (no lucky single
 * success). A Ready pod whose runtime is silent, hangs past the deadline or answers wrong stays `configured`, with
 * evidence saying which (case 02, FACTS.md §10.1). Isolation (gVisor/Kata) is verified only by a kernel the runtime
 * reports from inside (isolation.ts: gVisor's `dmesg` starts with its boot line; Kata: `uname -r` differs from the node's kernel), else it stays
 * below verified naming the missing acceptance test. A probe that never gets Ready carries its pod's Warning events
 * (pod-events.ts), and a runtime class gets one `missing` line per node where pods under it got FailedCreatePodSandBox
 * (case 12). A template under a RuntimeClass that cannot run a pod (it does not exist, or no Ready node matches its
 * scheduling: runtime-class.ts) gets no probe object: its `verified` step is `missing`, the other capabilities' `unknown`,
 * each saying "not tried: …", and the probe finishes at once instead of waiting out the ready timeout. The objects are
 * deleted by the run's cleanup; an object whose create was refused is not tracked (workload.ts).
 */
import { claimPhase, sandboxPhase, type ClaimObject, type MissingReference, type SandboxObject } from '../../adapter/kubernetes/phase.js';
import { KubeSessions, sessionName } from '../../adapter/kubernetes/sessions.js';
import type { CapabilityName, Result } from '../../adapter/types.js';
import type { Obj, WaitOutcome } from '../../adapter/kubernetes/cluster.js';
import { formatMs, type Evidence } from '../evidence.js';
import type { TemplatePlan, WarmPoolPlan } from '../plan.js';
import type { Probe, ProbeRun } from '../runner.js';
import type { RuntimeCall, RuntimeProber, RuntimeTarget } from '../runtime-prober.js';
import { CLAIM_REFERENCE_GRACE_MS, referencedKind, stuckClaimMessage, type ReferencedObject } from './claim-reference.js';
import { apiVersionOf, Facts, ref, type ProbeDeps } from './common.js';
import { isolationEvidence } from './isolation.js';
import { describeWarning, nodeFailureEvidence, podWarnings } from './pod-events.js';
import { runtimeClassProbe } from './runtime-class.js';

const POD_NAME_ANNOTATION = 'agents.x-k8s.io/pod-name';

/** Outcome of waiting for the probe object. */
interface Readiness {
  readonly ready: boolean;
  readonly why: string;
  readonly sandbox?: Obj;
  readonly claim?: Obj;
  readonly waitedMs: number;
}

export function workloadProbe(deps: ProbeDeps, template: TemplatePlan, pool: WarmPoolPlan | undefined, after: readonly string[]): Probe {
  const tcap = `template/${template.namespace}/${template.name}` as const;
  const covers: CapabilityName[] = [tcap, 'runtime-exec', 'runtime-files', 'sandbox-api', 'controller', 'conversion', 'router'];
  if (pool) covers.push(`warm-pool/${pool.namespace}/${pool.name}`);
  if (deps.facts.family === 'v0.5') covers.push('extensions-api');
  if (template.runtimeClassName) covers.push(`runtime-class/${template.runtimeClassName}`);
  return {
    id: `workload/${template.namespace}/${template.name}`,
    after,
    covers,
    timeoutStep: 'verified',
    deadlineMs: deps.plan.readyTimeoutMs + 6 * deps.plan.probeTimeoutMs + 15_000,
    run: (ctx) => runWorkload(deps, template, pool, ctx),
  };
}

async function runWorkload(deps: ProbeDeps, template: TemplatePlan, pool: WarmPoolPlan | undefined, ctx: ProbeRun): Promise<Evidence[]> {
  const { plan, facts } = deps;
  const version = apiVersionOf(facts);
  const t = new Facts(`template/${template.namespace}/${template.name}`);
  const exec = new Facts('runtime-exec');
  const files = new Facts('runtime-files');
  const api = new Facts('sandbox-api');
  const ctrl = new Facts('controller');
  const conv = new Facts('conversion');
  const router = new Facts('router');
  const wp = pool ? new Facts(`warm-pool/${pool.namespace}/${pool.name}`) : undefined;
  const ext = facts.family === 'v0.5' ? new Facts('extensions-api') : undefined;
  const rc = template.runtimeClassName ? new Facts(`runtime-class/${template.runtimeClassName}`) : undefined;
  const all = (): Evidence[] => [t, exec, files, api, ctrl, conv, router, wp, ext, rc].flatMap((f) => f?.list ?? []);
  const everyone = [t, exec, files, api, ctrl, wp, ext, rc].filter((f): f is Facts => f !== undefined);

  // Runtime configuration facts (static, from the plan): what the runtime is and whether the client's transport can carry it.
  const runtimeSubject = `template ${template.namespace}/${template.name}`;
  if (template.runtime === 'custom') {
    const msg = 'the template runs a custom runtime the adapter does not speak: execution cannot be proven';
    exec.add('discovered', 'missing', runtimeSubject, msg);
    files.add('discovered', 'missing', runtimeSubject, msg);
    t.add('verified', 'unknown', runtimeSubject, msg);
    return all();
  }
  const runtime = template.runtime;
  exec.proven('discovered', runtimeSubject, `template runs ${template.runtime} (ports ${template.ports.rest}${template.ports.grpc ? `/${template.ports.grpc}` : ''})`);
  exec.proven('compatible', runtimeSubject, `${template.runtime} is a runtime the adapter speaks (FACTS.md §5)`);
  if (template.runtime === 'sandboxd' && plan.transport === 'router') {
    exec.add('configured', 'missing', runtimeSubject, 'transport router cannot carry sandboxd gRPC (the router forwards HTTP/1.1 only, sandbox-router/proxy/proxy.go@v0.5.6): use port-forward');
  } else {
    exec.proven('configured', runtimeSubject, `transport ${plan.transport} reaches ${template.runtime}`);
  }
  if (template.runtime === 'sandboxd') {
    files.proven('discovered', runtimeSubject, 'sandboxd serves /v1/files (REST)');
    files.proven('compatible', runtimeSubject, 'sandboxd file API spec v1 (sandboxd-spec/filesystem/v1/filesystem.yaml@v0.5.6)');
    files.proven('configured', runtimeSubject, `REST port ${template.ports.rest} reachable over ${plan.transport}`);
  } else {
    files.add('discovered', 'missing', runtimeSubject, 'the python runtime file API (multipart upload) is not probed by this verifier');
  }

  // A class that cannot run a pod (it does not exist, or no Ready node matches its scheduling) would only make the
  // probe object wait out the ready timeout: create nothing and say why.
  if (rc && template.runtimeClassName) {
    const blocked = await unschedulableClass(deps, template.runtimeClassName, ctx);
    if (blocked !== undefined) {
      const why = `not tried: ${blocked}, so no probe sandbox from this template could start; none was created`;
      ctx.note(why);
      for (const f of [t, wp]) f?.add('verified', 'missing', runtimeSubject, why);
      for (const f of [exec, files, api, ctrl, ext, rc]) f?.add('verified', 'unknown', runtimeSubject, why);
      return all();
    }
  }

  // Create the probe object: on v0.5 a claim (the client path) on the declared pool, or on a one-replica pool of our
  // own when the template has none; on v0.4 (no new provisioning through claims) a bare Sandbox from the template.
  let readiness: Readiness;
  if (facts.family === 'v0.5') {
    readiness = await claimAndWait(deps, template, pool, ctx);
  } else {
    if (wp) wp.add('verified', 'unknown', `warm pool ${pool!.namespace}/${pool!.name}`, `release ${facts.tag} is family v0.4: AgentPlane provisions no claims there (adapter createFromTemplate returns unsupported)`);
    readiness = await sandboxAndWait(deps, template, version, ctx);
  }
  const subject = readiness.sandbox ? `Sandbox ${template.namespace}/${readiness.sandbox.metadata?.name}` : `probe for ${template.namespace}/${template.name}`;
  if (!readiness.ready) {
    const podName = readiness.sandbox ? podNameOf(readiness.sandbox) : undefined;
    const warnings = podName ? await podWarnings(deps, template.namespace, podName) : [];
    const why = `${readiness.why}${warnings.length ? `; pod ${podName} events: ${warnings.slice(0, 5).map(describeWarning).join('; ')}` : ''}`;
    for (const f of everyone) f.add('verified', 'unknown', subject, why, { durationMs: readiness.waitedMs });
    if (rc && podName) await nodeFailureEvidence(deps, rc, template, podName);
    return all();
  }
  const sb = readiness.sandbox!;
  const sbName = sb.metadata?.name ?? '?';
  const gen = sb.metadata?.generation ?? 0;
  const readyMsg = `Sandbox ${sbName} Ready=True at its current generation ${gen} after ${formatMs(readiness.waitedMs)}`;
  for (const f of [t, exec, files, api]) f.proven('verified', subject, readyMsg, { field: 'status.conditions[Ready]', value: 'True', durationMs: readiness.waitedMs });
  ctrl.proven('verified', subject, `the controller reconciled ${sbName} to Ready at generation ${gen}`);
  if (readiness.claim) {
    const claimName = readiness.claim.metadata?.name ?? '?';
    const msg = `claim ${claimName} bound Sandbox ${sbName}, which it controls (adoption finished), Ready at generation ${gen}`;
    wp?.proven('verified', `SandboxClaim ${template.namespace}/${claimName}`, msg);
    ext?.proven('verified', `SandboxClaim ${template.namespace}/${claimName}`, msg);
  }

  // The pod: Ready, IP, node, runtime class.
  const podName = podNameOf(sb);
  const podR = await deps.cluster.pod(template.namespace, podName);
  const pod = podR.kind === 'ok' ? podR.value : undefined;
  const podIP = (pod?.status as { podIP?: string } | undefined)?.podIP ?? ((sb.status as { podIPs?: string[] } | undefined)?.podIPs ?? [])[0];
  const podReady = ((pod?.status as { conditions?: Array<{ type?: string; status?: string }> } | undefined)?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  const podState = pod ? `pod ${podName} Ready=${podReady ? 'True' : 'False'}${podIP ? ` IP ${podIP}` : ''}` : `pod ${podName} not readable (${podR.kind === 'ok' ? 'not found' : podR.kind})`;

  const target: RuntimeTarget = {
    kind: runtime,
    transport: plan.transport,
    namespace: template.namespace,
    sandbox: sbName,
    pod: podName,
    ...(podIP ? { podIP } : {}),
    restPort: template.ports.rest,
    ...(template.ports.grpc !== undefined ? { grpcPort: template.ports.grpc } : {}),
  };

  // Runtime: health, then two distinct nonces; each with its own deadline.
  ctx.note(`asking ${template.runtime} in ${sbName} over ${plan.transport} (deadline ${formatMs(plan.probeTimeoutMs)} per call)`);
  const runtimeOk = await proveExecution(deps.runtime, target, { probeTimeoutMs: plan.probeTimeoutMs, runId: deps.workload.runId, signal: ctx.signal }, exec, podState);
  for (const f of [t, api]) {
    if (runtimeOk) f.proven('verified', `runtime of ${sbName}`, `runtime answered two nonce commands over ${plan.transport}`);
    else f.add('verified', 'unknown', `runtime of ${sbName}`, `runtime API not verified (see runtime-exec); ${podState}`);
  }
  if (wp) {
    if (runtimeOk) wp.proven('verified', `runtime of ${sbName}`, 'runtime of the adopted sandbox answered');
    else wp.add('verified', 'unknown', `runtime of ${sbName}`, `runtime of the adopted sandbox did not answer correctly; ${podState}`);
  }

  // Files.
  if (template.runtime === 'sandboxd') {
    const path = `.agentplane-verify-${deps.workload.runId}`;
    const content = `agentplane-verify ${deps.workload.runId} ${Date.now()}`;
    const r = await deps.runtime.fileRoundTrip(target, path, content, plan.probeTimeoutMs);
    if (r.kind === 'answered' && r.value === content) files.proven('verified', `runtime of ${sbName}`, `wrote and read back ${path} (${content.length} bytes) over ${plan.transport}`, { durationMs: r.durationMs });
    else if (r.kind === 'answered') files.add('verified', 'missing', `runtime of ${sbName}`, `file read back differs from what was written (${JSON.stringify(r.value.slice(0, 60))})`, { durationMs: r.durationMs });
    else files.add('verified', 'unknown', `runtime of ${sbName}`, `file round trip: ${describeFailure(r, plan.probeTimeoutMs)}; ${podState}`, { durationMs: r.durationMs });
  }

  // Conversion round trip: read the Sandbox at v1alpha1 (served through the webhook on v0.5).
  if (facts.family === 'v0.5') {
    const r = await deps.cluster.getCustom(ref('Sandbox', 'v1alpha1', template.namespace), sbName);
    conversionReadEvidence(conv, `Sandbox ${template.namespace}/${sbName}`, r);
  }

  // Router: health of this sandbox's runtime through the router (HTTP/1.1).
  if (plan.router?.url) {
    const r = await deps.runtime.health(target, plan.probeTimeoutMs, 'router');
    if (r.kind === 'answered') router.proven('verified', `router ${plan.router.url}`, `${template.runtime} health of ${sbName} answered "${r.value}" through the router`, { durationMs: r.durationMs });
    else router.add('verified', 'unknown', `router ${plan.router.url}`, `health through the router: ${describeFailure(r, plan.probeTimeoutMs)}`, { durationMs: r.durationMs });
  }

  // Runtime class: the pod ran under it, on a matching node, and isolation shows from inside; and no sibling pod under
  // the class failed to get a sandbox on another node (the probe may have landed on the one node that works).
  if (rc && template.runtimeClassName) {
    await isolationEvidence(deps, rc, template.runtimeClassName, pod, target, runtimeOk);
    await nodeFailureEvidence(deps, rc, template, podName);
  }
  return all();
}

/**
 * Why no pod can run under RuntimeClass `name`, or undefined when nothing says so. Read from the runtime-class probe's
 * evidence (runtime-class.ts): `missing` at discovered (the class does not exist) or at compatible (no Ready node
 * matches its scheduling). A class the plan does not declare has no such probe, so the same check runs here. A class
 * that could not be read (403, timeout) is `unknown` there, not a reason to skip.
 */
export async function unschedulableClass(deps: ProbeDeps, name: string, ctx: ProbeRun): Promise<string | undefined> {
  const capability = `runtime-class/${name}`;
  const evidence = deps.plan.runtimeClasses.includes(name) ? ctx.evidence : await runtimeClassProbe(deps, name).run(ctx);
  const blocked = evidence.find((e) => e.capability === capability && e.verdict === 'missing' && (e.step === 'discovered' || e.step === 'compatible'));
  if (blocked === undefined) return undefined;
  if (blocked.step === 'discovered') return `RuntimeClass ${name} does not exist`;
  return `RuntimeClass ${name} has no Ready node matching its scheduling (${blocked.message.replace(/^no Ready node matches its scheduling: /, '')})`;
}

/**
 * Proves execution over the client's transport: two distinct nonce commands (`echo <nonce>`), each under its own
 * deadline; both must answer exit 0 with exactly the nonce. Adds `verified` evidence to `exec` and returns whether
 * both did. A silent or hanging runtime gives `unknown` (state stays configured), a wrong answer `missing`.
 */
export async function proveExecution(runtime: RuntimeProber, target: RuntimeTarget, opts: { probeTimeoutMs: number; runId: string; signal?: AbortSignal }, exec: Facts, podState: string): Promise<boolean> {
  const { probeTimeoutMs } = opts;
  const subject = `${target.kind} of ${target.sandbox} via ${target.transport}`;
  // Ready flips when the container starts, before the runtime listens (FACTS.md §10.1): a refused connection is
  // retried until the probe deadline; a hang is not (it already used the whole deadline).
  const contact = await firstContact(runtime, target, probeTimeoutMs, opts.signal);
  if (contact.kind !== 'answered') {
    exec.add('verified', 'unknown', subject, `runtime API did not answer: ${describeFailure(contact, probeTimeoutMs)}; ${podState}`, { field: 'health', durationMs: contact.durationMs });
    return false;
  }
  let ok = true;
  for (let round = 1; round <= 2; round += 1) {
    if (opts.signal?.aborted) {
      exec.add('verified', 'unknown', subject, 'interrupted before the nonce commands finished');
      return false;
    }
    const nonce = `agentplane-${opts.runId}-${round}-${Math.random().toString(36).slice(2, 10)}`;
    const r = await runtime.execute(target, ['echo', nonce], probeTimeoutMs);
    if (r.kind !== 'answered') {
      exec.add('verified', 'unknown', subject, `runtime API did not answer: ${describeFailure(r, probeTimeoutMs)}; ${podState}`, { field: `Execute(echo <nonce ${round}>)`, durationMs: r.durationMs });
      return false;
    }
    const out = r.value.stdout.trim();
    if (r.value.exitCode !== 0 || out !== nonce) {
      exec.add('verified', 'missing', subject, `runtime answered exit ${r.value.exitCode} "${out.slice(0, 80)}" to echo ${nonce}; expected exit 0 and the nonce`, { field: `Execute(echo <nonce ${round}>)`, value: out.slice(0, 80), durationMs: r.durationMs });
      ok = false;
    } else {
      exec.proven('verified', subject, `nonce ${round} echoed exactly (exit 0) in ${formatMs(r.durationMs)}`, { field: `Execute(echo <nonce ${round}>)`, value: nonce, durationMs: r.durationMs });
    }
  }
  return ok;
}

/** Evidence for `conversion` from a v1alpha1 read of a v1beta1 object: TLS failures contradict a configured webhook (case 08). */
export function conversionReadEvidence(conv: Facts, subject: string, r: Result<unknown>): void {
  if (r.kind === 'ok' && r.value) conv.proven('verified', subject, 'a v1alpha1 GET of the v1beta1 probe Sandbox succeeded (conversion round trip)');
  else if (r.kind === 'ok') conv.add('verified', 'unknown', subject, 'v1alpha1 GET found no object');
  else {
    const text = r.kind === 'failed' ? r.error.message : r.reason;
    if (/x509|certificate|tls|handshake/i.test(text)) conv.add('verified', 'contradicted', subject, `conversion webhook TLS failure although the CRDs carry a caBundle (CA/serving certificate mismatch): ${text}`);
    else conv.add('verified', 'unknown', subject, `v1alpha1 GET failed: ${text}`);
  }
}

/** Health calls until one is answered, retrying refused connections every 250 ms within `deadlineMs` in all. */
async function firstContact(runtime: RuntimeProber, target: RuntimeTarget, deadlineMs: number, signal?: AbortSignal): Promise<RuntimeCall<string>> {
  const started = Date.now();
  let attempts = 0;
  for (;;) {
    attempts += 1;
    const remaining = deadlineMs - (Date.now() - started);
    const r = await runtime.health(target, Math.max(1, remaining));
    if (r.kind !== 'silent' || signal?.aborted || deadlineMs - (Date.now() - started) < 250) {
      return r.kind === 'silent' ? { ...r, durationMs: Date.now() - started, detail: `${r.detail}; ${attempts} attempt(s) in ${formatMs(Date.now() - started)}` } : r;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function describeFailure(r: { kind: 'timeout' | 'silent' | 'error'; detail: string }, deadlineMs: number): string {
  if (r.kind === 'timeout') return `no answer in ${formatMs(deadlineMs)} (${r.detail})`;
  if (r.kind === 'silent') return `nothing answers (${r.detail})`;
  return r.detail;
}

function podNameOf(sb: Obj): string {
  const ann = (sb.metadata as { annotations?: Record<string, string> } | undefined)?.annotations ?? {};
  return ann[POD_NAME_ANNOTATION] ?? sb.metadata?.name ?? '?';
}

async function sandboxAndWait(deps: ProbeDeps, template: TemplatePlan, version: string, ctx: ProbeRun): Promise<Readiness> {
  const started = Date.now();
  const tref = ref('SandboxTemplate', version, template.namespace);
  const tpl = await deps.cluster.getCustom(tref, template.name);
  if (tpl.kind !== 'ok' || tpl.value === undefined) {
    return { ready: false, why: `cannot read SandboxTemplate ${template.namespace}/${template.name} to build the probe Sandbox${tpl.kind === 'failed' ? `: ${tpl.error.message}` : ''}`, waitedMs: Date.now() - started };
  }
  const podTemplate = ((tpl.value.spec as { podTemplate?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: unknown } } | undefined)?.podTemplate) ?? {};
  const sref = ref('Sandbox', version, template.namespace);
  const name = deps.workload.name(`t-${template.name}`);
  const labels = deps.workload.labels();
  const body: Obj = {
    apiVersion: `agents.x-k8s.io/${version}`,
    kind: 'Sandbox',
    metadata: { name, namespace: template.namespace, labels, annotations: { 'agentplane.dev/verify-template': template.name } } as Obj['metadata'],
    spec: { podTemplate: { metadata: { labels: { ...(podTemplate.metadata?.labels ?? {}), ...labels }, ...(podTemplate.metadata?.annotations ? { annotations: podTemplate.metadata.annotations } : {}) }, spec: podTemplate.spec ?? {} } },
  };
  deps.workload.track(sref, 'Sandbox', name);
  ctx.note(`creating probe Sandbox ${template.namespace}/${name}`);
  const created = await deps.cluster.createCustom(sref, body);
  deps.workload.created(sref, name, created);
  if (created.kind !== 'ok') return { ready: false, why: `could not create probe Sandbox ${name}: ${created.kind === 'failed' ? created.error.message : created.kind}`, waitedMs: Date.now() - started };
  const family = deps.facts.family;
  let last = 'no status yet';
  const w = await deps.cluster.waitFor(
    `/apis/agents.x-k8s.io/${version}/namespaces/${template.namespace}/sandboxes`,
    name,
    () => deps.cluster.getCustom(sref, name),
    (o) => {
      if (!o) return false;
      const p = sandboxPhase(o as SandboxObject, family);
      last = p.reason;
      return p.phase === 'Ready' || p.phase === 'Failed' || p.phase === 'Finished';
    },
    { timeoutMs: deps.plan.readyTimeoutMs, signal: ctx.signal },
  );
  if (w.kind === 'matched') {
    const p = sandboxPhase(w.obj as SandboxObject, family);
    return { ready: p.phase === 'Ready', why: p.phase === 'Ready' ? p.reason : `probe Sandbox ${name} ended ${p.phase}: ${p.reason}`, sandbox: w.obj, waitedMs: w.waitedMs };
  }
  if (w.kind === 'failed') return { ready: false, why: `watching probe Sandbox ${name} failed: ${w.error.message}`, waitedMs: w.waitedMs };
  const limit = ctx.signal.aborted ? 'interrupted before it was Ready' : `not Ready within ${formatMs(deps.plan.readyTimeoutMs)}`;
  return { ready: false, why: `probe Sandbox ${name} ${limit} (last: ${last})`, ...(w.last ? { sandbox: w.last } : {}), waitedMs: w.waitedMs };
}

async function claimAndWait(deps: ProbeDeps, template: TemplatePlan, declared: WarmPoolPlan | undefined, ctx: ProbeRun): Promise<Readiness> {
  const started = Date.now();
  let pool = declared;
  if (!pool) {
    // A one-replica pool of our own, labelled, so the claim path (the only v1beta1 way from template to sandbox) can run.
    const name = deps.workload.name(`p-${template.name}`);
    const pref = ref('SandboxWarmPool', 'v1beta1', template.namespace);
    deps.workload.track(pref, 'SandboxWarmPool', name);
    ctx.note(`template ${template.name} has no warm pool: creating probe SandboxWarmPool ${template.namespace}/${name} (replicas 1)`);
    const made = await deps.cluster.createCustom(pref, {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxWarmPool',
      metadata: { name, namespace: template.namespace, labels: deps.workload.labels() } as Obj['metadata'],
      spec: { replicas: 1, sandboxTemplateRef: { name: template.name } },
    });
    deps.workload.created(pref, name, made);
    if (made.kind !== 'ok') return { ready: false, why: `could not create probe SandboxWarmPool ${name}: ${made.kind === 'failed' ? made.error.message : made.reason}`, waitedMs: Date.now() - started };
    pool = { namespace: template.namespace, name, template: template.name, replicas: 1 };
  }
  const sessions = new KubeSessions(deps.cluster.client, { labels: deps.workload.labels() });
  const operationId = `agentplane-verify/${deps.workload.runId}/${pool.namespace}/${pool.name}`;
  const cref = ref('SandboxClaim', 'v1beta1', pool.namespace);
  const claimName = sessionName(pool.name, operationId);
  deps.workload.track(cref, 'SandboxClaim', claimName);
  ctx.note(`creating probe SandboxClaim ${pool.namespace}/${claimName} on pool ${pool.name}`);
  const created = await sessions.createFromTemplate({ namespace: pool.namespace, template: template.name, warmPool: pool.name }, '', operationId);
  deps.workload.created(cref, claimName, created);
  if (created.kind !== 'ok') return { ready: false, why: `could not create probe claim on ${pool.name}: ${created.kind === 'failed' ? created.error.message : created.reason}`, waitedMs: Date.now() - started };
  // 1) the claim names a Sandbox; 2) that Sandbox is Ready at its generation and controlled by the claim.
  // While the claim sits at TemplateNotFound/WarmPoolNotFound, wait at most the grace (case 05): the watch sees no event
  // while nothing changes, so the wait runs in slices of the grace and the condition's age is checked after each.
  const graceMs = deps.plan.claimReferenceGraceMs ?? CLAIM_REFERENCE_GRACE_MS;
  let claim: Obj | undefined;
  const stuck = (): MissingReference | undefined => {
    const m = claim ? claimPhase(claim as ClaimObject, undefined, 'v0.5').missingReference : undefined;
    return m && (m.ageMs ?? Date.now() - started) >= graceMs ? m : undefined;
  };
  let bound: WaitOutcome;
  for (;;) {
    const left = deps.plan.readyTimeoutMs - (Date.now() - started);
    bound = await deps.cluster.waitFor(
      `/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/${pool.namespace}/sandboxclaims`,
      claimName,
      () => deps.cluster.getCustom(cref, claimName),
      (o) => {
        claim = o;
        return typeof (o?.status as { sandbox?: { name?: string } } | undefined)?.sandbox?.name === 'string' || stuck() !== undefined;
      },
      { timeoutMs: Math.max(0, Math.min(left, graceMs)), signal: ctx.signal },
    );
    if (bound.kind !== 'timeout' || ctx.signal.aborted || stuck() || Date.now() - started >= deps.plan.readyTimeoutMs) break;
  }
  const held = stuck();
  if (held && (claim?.status as { sandbox?: { name?: string } } | undefined)?.sandbox?.name === undefined) {
    const target = await referencedObject(deps, pool, held);
    return { ready: false, why: stuckClaimMessage(pool.namespace, claimName, held, target), ...(claim ? { claim } : {}), waitedMs: Date.now() - started };
  }
  if (bound.kind !== 'matched') {
    const own = claim ? claimPhase(claim as ClaimObject, undefined, 'v0.5').reason : 'claim not readable';
    const limit = ctx.signal.aborted ? 'was interrupted before it bound a Sandbox' : `bound no Sandbox within ${formatMs(deps.plan.readyTimeoutMs)}`;
    return { ready: false, why: `claim ${claimName} ${limit} (${own})`, ...(claim ? { claim } : {}), waitedMs: Date.now() - started };
  }
  claim = bound.obj;
  const sbName = (claim.status as { sandbox: { name: string } }).sandbox.name;
  const sref = ref('Sandbox', 'v1beta1', pool.namespace);
  let last = '';
  const remaining = Math.max(1000, deps.plan.readyTimeoutMs - (Date.now() - started));
  const w = await deps.cluster.waitFor(
    `/apis/agents.x-k8s.io/v1beta1/namespaces/${pool.namespace}/sandboxes`,
    sbName,
    () => deps.cluster.getCustom(sref, sbName),
    (o) => {
      const p = claimPhase(claim as ClaimObject, o ? (o as SandboxObject) : 'missing', 'v0.5');
      last = p.reason;
      return p.phase === 'Ready' || p.phase === 'Failed' || p.phase === 'Finished';
    },
    { timeoutMs: remaining, signal: ctx.signal },
  );
  const waitedMs = Date.now() - started;
  if (w.kind === 'matched') {
    const p = claimPhase(claim as ClaimObject, w.obj as SandboxObject, 'v0.5');
    return { ready: p.phase === 'Ready', why: p.reason, sandbox: w.obj, claim, waitedMs };
  }
  if (w.kind === 'failed') return { ready: false, why: `watching Sandbox ${sbName} failed: ${w.error.message}`, claim, waitedMs };
  const limit = ctx.signal.aborted ? 'interrupted before it was ready' : `not ready within ${formatMs(deps.plan.readyTimeoutMs)}`;
  return { ready: false, why: `claim ${claimName} ${limit}: ${last}`, claim, ...(w.last ? { sandbox: w.last } : {}), waitedMs };
}

/** The pool or template a stuck probe claim's reason names, and whether it exists now. */
async function referencedObject(deps: ProbeDeps, pool: WarmPoolPlan, held: MissingReference): Promise<ReferencedObject> {
  const kind = referencedKind(held.reason);
  const name = kind === 'SandboxTemplate' ? pool.template : pool.name;
  const r = await deps.cluster.getCustom(ref(kind, 'v1beta1', pool.namespace), name);
  const exists = r.kind === 'ok' ? r.value !== undefined : { unknown: r.kind === 'failed' ? r.error.message : r.kind };
  return { kind, namespace: pool.namespace, name, exists };
}
