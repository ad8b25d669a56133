/**
 * Runs probes in dependency order, each under its own deadline, with one progress line per probe on stderr.
 * Pure scheduling: what a probe checks lives in ./probes/; this file only orders, times and collects.
 */
import type { CapabilityName } from '../adapter/types.js';
import { AgentPlaneError } from '../model/errors.js';
import { fact, formatMs, timedOut, type Evidence, type Step } from './evidence.js';

/** What a probe sees of the run: the evidence collected so far (read-only) and an abort signal that fires at its deadline. */
export interface ProbeRun {
  readonly signal: AbortSignal;
  readonly deadlineMs: number;
  /** Evidence gathered by the probes that ran before this one. */
  readonly evidence: readonly Evidence[];
  /** A progress note for stderr (e.g. "waiting for Sandbox verify-x Ready"). */
  note(text: string): void;
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
}

/** Orders probes so that every probe comes after its `after` probes; ties keep the given order. */
export function orderProbes(probes: readonly Probe[]): Probe[] {
  const byId = new Map(probes.map((p) => [p.id, p]));
  for (const p of probes) {
    for (const dep of p.after) {
      if (!byId.has(dep)) throw new ProbeGraphError(`probe ${p.id} runs after "${dep}", which is not a probe in this run`);
    }
  }
  const done = new Set<string>();
  const visiting = new Set<string>();
  const out: Probe[] = [];
  const visit = (p: Probe, path: string[]): void => {
    if (done.has(p.id)) return;
    if (visiting.has(p.id)) throw new ProbeGraphError(`probes depend on each other in a cycle: ${[...path, p.id].join(' -> ')}`);
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
  /** Where progress lines go; default process.stderr. */
  readonly progress?: (line: string) => void;
  /** Aborts the whole run (e.g. SIGINT); probes not yet started are reported as not run. */
  readonly signal?: AbortSignal;
  /** Clock, for tests; default Date.now. */
  readonly now?: () => number;
}

/**
 * Runs the probes in order and returns all evidence. A probe that throws or passes its deadline yields
 * `unknown` evidence for its `timeoutStep`; a probe whose run was aborted yields `unknown` "not run".
 */
export async function runProbes(probes: readonly Probe[], opts: RunOptions = {}): Promise<Evidence[]> {
  const ordered = orderProbes(probes);
  const progress = opts.progress ?? ((line: string) => process.stderr.write(`${line}\n`));
  const now = opts.now ?? Date.now;
  const evidence: Evidence[] = [];
  let index = 0;
  for (const probe of ordered) {
    index += 1;
    const tag = `[${index}/${ordered.length}] ${probe.id}`;
    if (opts.signal?.aborted) {
      evidence.push(...probe.covers.map((capability) => fact({ reason: 'ProbeNotRun', capability, step: probe.timeoutStep, verdict: 'unknown', subject: `probe ${probe.id}`, message: `probe ${probe.id} was not run: verification was interrupted` })));
      progress(`${tag}: not run (interrupted)`);
      continue;
    }
    const started = now();
    const controller = new AbortController();
    const onOuterAbort = (): void => controller.abort(opts.signal?.reason);
    opts.signal?.addEventListener('abort', onOuterAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => {
      timer = setTimeout(() => {
        controller.abort(new Error(`deadline ${formatMs(probe.deadlineMs)}`));
        resolve('deadline');
      }, probe.deadlineMs);
    });
    progress(`${tag}: running (deadline ${formatMs(probe.deadlineMs)})`);
    const ctx: ProbeRun = { signal: controller.signal, deadlineMs: probe.deadlineMs, evidence: [...evidence], note: (text) => progress(`${tag}: ${text}`) };
    try {
      const outcome = await Promise.race([probe.run(ctx), deadline]);
      if (outcome === 'deadline') {
        evidence.push(...timedOut(probe.covers, probe.timeoutStep, probe.id, probe.deadlineMs));
        progress(`${tag}: deadline passed after ${formatMs(now() - started)}`);
      } else {
        evidence.push(...outcome);
        const counts = summarize(outcome);
        progress(`${tag}: done in ${formatMs(now() - started)}${counts ? ` (${counts})` : ''}`);
      }
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err);
      evidence.push(...probe.covers.map((capability) => fact({ reason: 'ProbeError', capability, step: probe.timeoutStep, verdict: 'unknown', subject: `probe ${probe.id}`, message: `probe ${probe.id} stopped with an error: ${text}` })));
      progress(`${tag}: error: ${text}`);
    } finally {
      clearTimeout(timer);
      controller.abort();
      opts.signal?.removeEventListener('abort', onOuterAbort);
    }
  }
  return evidence;
}

/** Counts per verdict, e.g. `3 proven, 1 unknown`; empty for no evidence (a probe with nothing to say prints no count). */
function summarize(evidence: readonly Evidence[]): string {
  const counts = new Map<string, number>();
  for (const e of evidence) counts.set(e.verdict, (counts.get(e.verdict) ?? 0) + 1);
  return [...counts].map(([k, v]) => `${v} ${k}`).join(', ');
}
