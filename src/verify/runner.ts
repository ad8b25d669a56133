/**
 * Runs probes concurrently as their dependencies allow (bounded by `concurrency`), each under its own deadline, with
 * progress lines per probe on stderr. Pure scheduling: what a probe checks lives in ./probes/; this file only orders,
 * times and collects, and returns evidence in dependency order whatever the completion order.
 */
import type { CapabilityName } from '../adapter/types.js';
import { AgentPlaneError } from '../model/errors.js';
import { fact, formatMs, timedOut, type Evidence, type Step } from './evidence.js';

/** What a probe sees of the run: the evidence collected so far (read-only) and an abort signal that fires at its deadline. */
export interface ProbeRun {
  readonly signal: AbortSignal;
  readonly deadlineMs: number;
  /** Evidence of the probes this one runs after (directly or through others). */
  readonly evidence: readonly Evidence[];
  /** A progress note for stderr; `waiting` marks a repeated status line of a long wait (e.g. "waiting for Sandbox x"). */
  note(text: string, kind?: 'waiting'): void;
}

/** One bounded check. `run` returns evidence; it must stop work when `signal` aborts. */
export interface Probe {
  /** Unique id, e.g. `controller` or `workload/sbx/py`. */
  readonly id: string;
  /** Ids of probes that must run first (unknown ids are an error). */
  readonly after: readonly string[];
  /** Capabilities this probe reports on, and the step a timeout leaves unknown. */
  readonly covers: readonly CapabilityName[];
  readonly timeoutStep: Step;
  /** Deadline in milliseconds. */
  readonly deadlineMs: number;
  run(ctx: ProbeRun): Promise<readonly Evidence[]>;
}

/** Thrown for a probe graph that cannot be ordered: a cycle or an unknown dependency. */
export class ProbeGraphError extends AgentPlaneError {
  readonly reason = 'ProbeGraphInvalid';
  readonly exitCategory = 'internal';
  constructor(
    message: string,
    /** The probes involved: the cycle in order, or the probe and the dependency it names. */
    readonly probes: readonly string[],
  ) {
    super(message);
  }
}

/** Orders probes so that every probe comes after its `after` probes; ties keep the given order. */
export function orderProbes(probes: readonly Probe[]): Probe[] {
  const byId = new Map(probes.map((p) => [p.id, p]));
  for (const p of probes) {
    for (const dep of p.after) {
      if (!byId.has(dep))
        throw new ProbeGraphError(`probe ${p.id} runs after "${dep}", which is not a probe in this run`, [p.id, dep]);
    }
  }
  const done = new Set<string>();
  const visiting = new Set<string>();
  const out: Probe[] = [];
  const visit = (p: Probe, path: string[]): void => {
    if (done.has(p.id)) return;
    if (visiting.has(p.id))
      throw new ProbeGraphError(`probes depend on each other in a cycle: ${[...path, p.id].join(' -> ')}`, [
        ...path,
        p.id,
      ]);
    visiting.add(p.id);
    for (const dep of p.after) visit(byId.get(dep)!, [...path, p.id]);
    visiting.delete(p.id);
    done.add(p.id);
    out.push(p);
  };
  for (const p of probes) visit(p, []);
  return out;
}

export interface RunOptions {
  /**
   * Where progress lines go; `waiting` marks the status line of a long wait, which a terminal may overwrite in place.
   * @default - lines to process.stderr
   */
  readonly progress?: (line: string, kind?: 'waiting') => void;
  /**
   * Aborts the whole run (e.g. SIGINT); probes not yet started are reported as not run.
   * @default - none (not abortable)
   */
  readonly signal?: AbortSignal;
  /**
   * Clock, for tests.
   * @default Date.now
   */
  readonly now?: () => number;
  /**
   * Most probes running at once; 1 runs them one after another.
   * @default DEFAULT_CONCURRENCY (8)
   */
  readonly concurrency?: number;
}

/** Default bound on probes running at once (`verify --concurrency`): enough for the per-template workloads of a typical environment. */
export const DEFAULT_CONCURRENCY = 8;

/**
 * Runs the probes and returns all evidence. A probe starts once every probe it runs `after` has finished, with at most
 * `concurrency` running at once; the evidence is returned in dependency order (the order of {@link orderProbes}),
 * never in completion order, so the report of a parallel run is the same as a serial one. A probe sees the evidence
 * of the probes it depends on, directly or through others. A probe that throws or passes its deadline yields `unknown`
 * evidence for its `timeoutStep`; a probe whose run was aborted yields `unknown` "not run".
 */
export async function runProbes(probes: readonly Probe[], opts: RunOptions = {}): Promise<Evidence[]> {
  const ordered = orderProbes(probes);
  const progress = opts.progress ?? ((line: string) => process.stderr.write(`${line}\n`));
  const now = opts.now ?? Date.now;
  const limit = Math.max(1, Math.floor(opts.concurrency ?? DEFAULT_CONCURRENCY));
  const results = new Map<string, readonly Evidence[]>();
  const upstream = new Map<string, Set<string>>();
  for (const p of ordered) upstream.set(p.id, new Set(p.after.flatMap((d) => [d, ...upstream.get(d)!])));
  const tags = new Map(ordered.map((p, i) => [p.id, `[${i + 1}/${ordered.length}] ${p.id}`]));
  const pending = [...ordered];
  const running = new Map<string, Promise<void>>();
  while (pending.length > 0 || running.size > 0) {
    // Start, in order, every probe whose dependencies are done, up to the bound.
    for (let i = 0; i < pending.length && running.size < limit;) {
      const probe = pending[i]!;
      if (!probe.after.every((d) => results.has(d))) {
        i += 1;
        continue;
      }
      pending.splice(i, 1);
      const seen = ordered.filter((p) => upstream.get(probe.id)!.has(p.id)).flatMap((p) => results.get(p.id)!);
      const job = runOne(probe, tags.get(probe.id)!, seen, progress, now, opts.signal).then((ev) => {
        results.set(probe.id, ev);
        running.delete(probe.id);
      });
      running.set(probe.id, job);
    }
    if (running.size === 0) break; // unreachable for an ordered graph; guards against a spin
    await Promise.race(running.values());
  }
  return ordered.flatMap((p) => results.get(p.id) ?? []);
}

/** One probe under its deadline and the outer abort; never throws. */
async function runOne(
  probe: Probe,
  tag: string,
  seen: readonly Evidence[],
  progress: (line: string, kind?: 'waiting') => void,
  now: () => number,
  signal?: AbortSignal,
): Promise<readonly Evidence[]> {
  if (signal?.aborted) {
    progress(`${tag}: not run (interrupted)`);
    return probe.covers.map((capability) =>
      fact({
        reason: 'ProbeNotRun',
        capability,
        step: probe.timeoutStep,
        verdict: 'unknown',
        subject: `probe ${probe.id}`,
        message: `probe ${probe.id} was not run: verification was interrupted`,
      }),
    );
  }
  const started = now();
  const controller = new AbortController();
  const onOuterAbort = (): void => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onOuterAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'deadline'>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`deadline ${formatMs(probe.deadlineMs)}`));
      resolve('deadline');
    }, probe.deadlineMs);
  });
  progress(`${tag}: running (deadline ${formatMs(probe.deadlineMs)})`);
  const ctx: ProbeRun = {
    signal: controller.signal,
    deadlineMs: probe.deadlineMs,
    evidence: seen,
    note: (text, kind) => progress(`${tag}: ${text}`, kind),
  };
  try {
    const outcome = await Promise.race([probe.run(ctx), deadline]);
    if (outcome === 'deadline') {
      progress(`${tag}: deadline passed after ${formatMs(now() - started)}`);
      return timedOut(probe.covers, probe.timeoutStep, probe.id, probe.deadlineMs);
    }
    const counts = summarize(outcome);
    progress(`${tag}: done in ${formatMs(now() - started)}${counts ? ` (${counts})` : ''}`);
    return outcome;
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    progress(`${tag}: error: ${text}`);
    return probe.covers.map((capability) =>
      fact({
        reason: 'ProbeError',
        capability,
        step: probe.timeoutStep,
        verdict: 'unknown',
        subject: `probe ${probe.id}`,
        value: text,
        message: `probe ${probe.id} stopped with an error: ${text}`,
      }),
    );
  } finally {
    clearTimeout(timer);
    controller.abort();
    signal?.removeEventListener('abort', onOuterAbort);
  }
}

/** Counts per verdict, e.g. `3 proven, 1 unknown`; empty for no evidence (a probe with nothing to say prints no count). */
function summarize(evidence: readonly Evidence[]): string {
  const counts = new Map<string, number>();
  for (const e of evidence) counts.set(e.verdict, (counts.get(e.verdict) ?? 0) + 1);
  return [...counts].map(([k, v]) => `${v} ${k}`).join(', ');
}
