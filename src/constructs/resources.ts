/**
 * Pod resource arithmetic for the capacity check: Kubernetes quantities as integers (cpu in millicores, memory in
 * bytes) and a pod's effective requests/limits the way the scheduler counts them (containers summed, an init container
 * counted when it alone is larger, a container without requests requesting its limits; the RuntimeClass overhead is
 * added by the caller).
 */
import { isPlainObject } from '../model/objects.js';
import type { PropProblem } from './errors.js';
import { podContainers, type Json } from './kube-object.js';
import { showValue } from './props.js';
import { QUANTITY } from './quantity.js';

/** cpu in millicores, memory in bytes. */
export interface Resources {
  readonly cpuMilli: number;
  readonly memoryBytes: number;
}

/** A pod's effective requests and limits. */
export interface PodResources {
  readonly requests: Resources;
  readonly limits: Resources;
}

const DECIMAL: Readonly<Record<string, number>> = {
  '': 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};
const BINARY: Readonly<Record<string, number>> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A quantity in base units (`m` divides by 1000). @throws Error for text that is not a {@link QUANTITY}: validate first. */
export function quantityValue(text: string): number {
  const g = QUANTITY.exec(text)?.groups;
  if (g === undefined) throw new Error(`${JSON.stringify(text)} is not a Kubernetes quantity`);
  const n = Number(g['number']);
  if (g['exponent'] !== undefined) return n * 10 ** Number(g['exponent']);
  if (g['binary'] !== undefined) return n * BINARY[g['binary']]!;
  return n * DECIMAL[g['decimal'] ?? '']!;
}

/** Whether a value of a quantity field (a string, or a JSON number) is a non-negative quantity. */
function isQuantity(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0;
  return typeof value === 'string' && QUANTITY.test(value);
}

/**
 * Every quantity of a pod spec (JSON) that is not one, with its prop path under `prop`: requests and limits of each
 * container (by name) and of the pod, the pod's overhead, and emptyDir size limits (by volume name).
 */
export function quantityProblems(podSpec: Json, prop = 'podSpec'): PropProblem[] {
  const problems: PropProblem[] = [];
  const check = (where: string, value: unknown): void => {
    if (value === undefined || value === null || isQuantity(value)) return;
    problems.push({
      prop: where,
      reason: 'NotAQuantity',
      value,
      message: `${where}: ${showValue(value)} is not a non-negative Kubernetes quantity (such as 250m, 1.5 or 256Mi)`,
    });
  };
  const checkMap = (where: string, map: unknown): void => {
    if (isPlainObject(map)) for (const [k, v] of Object.entries(map)) check(`${where}.${k}`, v);
  };
  const checkResources = (where: string, res: unknown): void => {
    if (!isPlainObject(res)) return;
    checkMap(`${where}.requests`, res['requests']);
    checkMap(`${where}.limits`, res['limits']);
  };
  for (const c of podContainers(podSpec))
    checkResources(`${prop}.containers.${String(c['name'])}.resources`, c['resources']);
  checkResources(`${prop}.resources`, podSpec['resources']);
  checkMap(`${prop}.overhead`, podSpec['overhead']);
  const volumes = Array.isArray(podSpec['volumes']) ? podSpec['volumes'] : [];
  for (const v of volumes)
    if (isPlainObject(v) && isPlainObject(v['emptyDir']))
      check(`${prop}.volumes.${String(v['name'])}.emptyDir.sizeLimit`, v['emptyDir']['sizeLimit']);
  return problems;
}

/** cpu quantity → millicores (rounded up, as the API server does). */
export function cpuMilli(text: string): number {
  return Math.ceil(quantityValue(text) * 1000 - 1e-9);
}

/** memory quantity → bytes (rounded up). */
export function memoryBytes(text: string): number {
  return Math.ceil(quantityValue(text) - 1e-9);
}

/** `1250m` for cpu. */
export function formatCpu(milli: number): string {
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}

/** `416Mi` for memory (rounded up to a whole Mi). */
export function formatMemory(bytes: number): string {
  const mi = bytes / 2 ** 20;
  return mi >= 1024 && Number.isInteger(mi / 1024) ? `${mi / 1024}Gi` : `${Math.ceil(mi - 1e-9)}Mi`;
}

export function add(a: Resources, b: Resources): Resources {
  return { cpuMilli: a.cpuMilli + b.cpuMilli, memoryBytes: a.memoryBytes + b.memoryBytes };
}

export function times(a: Resources, n: number): Resources {
  return { cpuMilli: a.cpuMilli * n, memoryBytes: a.memoryBytes * n };
}

export const ZERO: Resources = { cpuMilli: 0, memoryBytes: 0 };

function amount(map: unknown, key: 'cpu' | 'memory'): number | undefined {
  if (map === null || typeof map !== 'object') return undefined;
  const v = (map as Record<string, unknown>)[key];
  if (v === undefined || v === null) return undefined;
  const text = String(v);
  return key === 'cpu' ? cpuMilli(text) : memoryBytes(text);
}

function containerResources(c: Json): PodResources {
  const res = (c['resources'] ?? {}) as Json;
  const lim = { cpu: amount(res['limits'], 'cpu'), memory: amount(res['limits'], 'memory') };
  const req = {
    cpu: amount(res['requests'], 'cpu') ?? lim.cpu,
    memory: amount(res['requests'], 'memory') ?? lim.memory,
  };
  return {
    requests: { cpuMilli: req.cpu ?? 0, memoryBytes: req.memory ?? 0 },
    limits: { cpuMilli: lim.cpu ?? 0, memoryBytes: lim.memory ?? 0 },
  };
}

function max(a: Resources, b: Resources): Resources {
  return { cpuMilli: Math.max(a.cpuMilli, b.cpuMilli), memoryBytes: Math.max(a.memoryBytes, b.memoryBytes) };
}

/** Effective requests/limits of a pod spec (JSON), without RuntimeClass overhead. */
export function podResources(podSpec: Json): PodResources {
  const list = (key: string): Json[] => (Array.isArray(podSpec[key]) ? (podSpec[key] as Json[]) : []);
  let requests = ZERO;
  let limits = ZERO;
  for (const c of list('containers')) {
    const r = containerResources(c);
    requests = add(requests, r.requests);
    limits = add(limits, r.limits);
  }
  for (const c of list('initContainers')) {
    const r = containerResources(c);
    requests = max(requests, r.requests);
    limits = max(limits, r.limits);
  }
  return { requests, limits };
}
