/**
 * Secure defaults and checks for sandbox pod specs (JSON form, as `k8s.toJson_PodSpec` returns it).
 * Defaults follow the hardening upstream recommends for sandboxes (`examples/policy/**@v0.5.6`):
 * no service-account token, non-root, RuntimeDefault seccomp, no privilege escalation, all capabilities dropped.
 */
import { isPlainObject } from '../model/objects.js';
import type { PropProblem } from './errors.js';
import { podContainers, type Json } from './kube-object.js';

/** Applies the defaults where the field is unset; explicit values are kept. Mutates and returns `podSpec`. */
export function applySecureDefaults(podSpec: Json): Json {
  if (podSpec['automountServiceAccountToken'] === undefined) podSpec['automountServiceAccountToken'] = false;
  const psc = isPlainObject(podSpec['securityContext']) ? podSpec['securityContext'] : {};
  if (psc['runAsNonRoot'] === undefined) psc['runAsNonRoot'] = true;
  if (psc['seccompProfile'] === undefined) psc['seccompProfile'] = { type: 'RuntimeDefault' };
  podSpec['securityContext'] = psc;
  for (const c of podContainers(podSpec)) {
    const sc = isPlainObject(c['securityContext']) ? c['securityContext'] : {};
    if (sc['allowPrivilegeEscalation'] === undefined) sc['allowPrivilegeEscalation'] = false;
    if (sc['capabilities'] === undefined) sc['capabilities'] = { drop: ['ALL'] };
    c['securityContext'] = sc;
  }
  return podSpec;
}

/** Problems that secure defaults cannot fix: privileged or host-namespace pods, containers without cpu/memory limits. */
export function securityProblems(podSpec: Json): PropProblem[] {
  const problems: PropProblem[] = [];
  for (const field of ['hostNetwork', 'hostPID', 'hostIPC'] as const) {
    if (podSpec[field] === true)
      problems.push({
        prop: `podSpec.${field}`,
        reason: 'HostNamespace',
        value: true,
        message: `podSpec.${field} is true: sandbox pods must not share host namespaces`,
      });
  }
  if (Array.isArray(podSpec['volumes'])) {
    for (const v of podSpec['volumes'])
      if (isPlainObject(v) && v['hostPath'] !== undefined)
        problems.push({
          prop: 'podSpec.volumes',
          reason: 'HostPathVolume',
          value: v['name'],
          message: `volume ${String(v['name'])} is a hostPath: sandbox pods must not mount host paths`,
        });
  }
  for (const c of podContainers(podSpec)) {
    const name = String(c['name']);
    const sc = isPlainObject(c['securityContext']) ? c['securityContext'] : {};
    if (sc['privileged'] === true)
      problems.push({
        prop: `podSpec.containers.${name}.securityContext.privileged`,
        reason: 'PrivilegedContainer',
        value: true,
        message: `container ${name} is privileged`,
      });
    const caps = isPlainObject(sc['capabilities']) ? sc['capabilities'] : {};
    if (Array.isArray(caps['add']) && caps['add'].length > 0)
      problems.push({
        prop: `podSpec.containers.${name}.securityContext.capabilities.add`,
        reason: 'AddedCapabilities',
        value: caps['add'],
        message: `container ${name} adds capabilities ${JSON.stringify(caps['add'])}`,
      });
    const limits =
      isPlainObject(c['resources']) && isPlainObject(c['resources']['limits']) ? c['resources']['limits'] : {};
    const missing = ['cpu', 'memory'].filter((r) => limits[r] === undefined);
    if (missing.length > 0)
      problems.push({
        prop: `podSpec.containers.${name}.resources.limits`,
        reason: 'MissingResourceLimits',
        value: missing,
        message: `container ${name} has no resources.limits.${missing.join(' / ')} (required: a sandbox must not take a node's capacity)`,
      });
  }
  return problems;
}

/** Where a pod spec takes Secrets: secret and projected-secret volumes, CSI secret-store volumes, env/envFrom from Secrets. */
export function secretUses(podSpec: Json): string[] {
  const uses: string[] = [];
  if (Array.isArray(podSpec['volumes'])) {
    for (const v of podSpec['volumes']) {
      if (!isPlainObject(v)) continue;
      const name = String(v['name']);
      if (isPlainObject(v['secret'])) uses.push(`volume ${name} mounts Secret ${String(v['secret']['secretName'])}`);
      if (isPlainObject(v['projected']) && Array.isArray(v['projected']['sources'])) {
        for (const s of v['projected']['sources'])
          if (isPlainObject(s) && isPlainObject(s['secret']))
            uses.push(`volume ${name} projects Secret ${String(s['secret']['name'])}`);
      }
      if (isPlainObject(v['csi']) && String(v['csi']['driver']).includes('secrets-store'))
        uses.push(`volume ${name} is a CSI secrets-store volume`);
    }
  }
  for (const c of podContainers(podSpec)) {
    const name = String(c['name']);
    if (Array.isArray(c['env'])) {
      for (const e of c['env']) {
        if (isPlainObject(e) && isPlainObject(e['valueFrom']) && isPlainObject(e['valueFrom']['secretKeyRef'])) {
          uses.push(
            `container ${name} env ${String(e['name'])} from Secret ${String(e['valueFrom']['secretKeyRef']['name'])}`,
          );
        }
      }
    }
    if (Array.isArray(c['envFrom'])) {
      for (const e of c['envFrom'])
        if (isPlainObject(e) && isPlainObject(e['secretRef']))
          uses.push(`container ${name} envFrom Secret ${String(e['secretRef']['name'])}`);
    }
  }
  return uses;
}

/** A deep copy without `undefined` members (what `toJson_*` leave behind). */
export function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
