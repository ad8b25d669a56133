/**
 * Secure defaults and checks for sandbox pod specs (JSON form, as `k8s.toJson_PodSpec` returns it).
 * Defaults follow the hardening upstream recommends for sandboxes (`examples/policy/**@v0.5.6`, FACTS §8):
 * no service-account token, non-root, RuntimeDefault seccomp, no privilege escalation, all capabilities dropped.
 */
import { isJson, podContainers, type Json } from './kube-object.js';

/** Applies the defaults where the field is unset; explicit values are kept. Mutates and returns `podSpec`. */
export function applySecureDefaults(podSpec: Json): Json {
  if (podSpec['automountServiceAccountToken'] === undefined) podSpec['automountServiceAccountToken'] = false;
  const psc = isJson(podSpec['securityContext']) ? podSpec['securityContext'] : {};
  if (psc['runAsNonRoot'] === undefined) psc['runAsNonRoot'] = true;
  if (psc['seccompProfile'] === undefined) psc['seccompProfile'] = { type: 'RuntimeDefault' };
  podSpec['securityContext'] = psc;
  for (const c of podContainers(podSpec)) {
    const sc = isJson(c['securityContext']) ? c['securityContext'] : {};
    if (sc['allowPrivilegeEscalation'] === undefined) sc['allowPrivilegeEscalation'] = false;
    if (sc['capabilities'] === undefined) sc['capabilities'] = { drop: ['ALL'] };
    c['securityContext'] = sc;
  }
  return podSpec;
}

/** Problems that secure defaults cannot fix: privileged or host-namespace pods, containers without cpu/memory limits. */
export function securityProblems(podSpec: Json): string[] {
  const problems: string[] = [];
  for (const field of ['hostNetwork', 'hostPID', 'hostIPC'] as const) {
    if (podSpec[field] === true) problems.push(`podSpec.${field} is true: sandbox pods must not share host namespaces`);
  }
  if (Array.isArray(podSpec['volumes'])) {
    for (const v of podSpec['volumes']) if (isJson(v) && v['hostPath'] !== undefined) problems.push(`volume ${String(v['name'])} is a hostPath: sandbox pods must not mount host paths`);
  }
  for (const c of podContainers(podSpec)) {
    const name = String(c['name']);
    const sc = isJson(c['securityContext']) ? c['securityContext'] : {};
    if (sc['privileged'] === true) problems.push(`container ${name} is privileged`);
    const caps = isJson(sc['capabilities']) ? sc['capabilities'] : {};
    if (Array.isArray(caps['add']) && caps['add'].length > 0) problems.push(`container ${name} adds capabilities ${JSON.stringify(caps['add'])}`);
    const limits = isJson(c['resources']) && isJson(c['resources']['limits']) ? c['resources']['limits'] : {};
    const missing = ['cpu', 'memory'].filter((r) => limits[r] === undefined);
    if (missing.length > 0) problems.push(`container ${name} has no resources.limits.${missing.join(' / ')} (required: a sandbox must not take a node's capacity)`);
  }
  return problems;
}

/** Where a pod spec takes Secrets: secret and projected-secret volumes, CSI secret-store volumes, env/envFrom from Secrets. */
export function secretUses(podSpec: Json): string[] {
  const uses: string[] = [];
  if (Array.isArray(podSpec['volumes'])) {
    for (const v of podSpec['volumes']) {
      if (!isJson(v)) continue;
      const name = String(v['name']);
      if (isJson(v['secret'])) uses.push(`volume ${name} mounts Secret ${String(v['secret']['secretName'])}`);
      if (isJson(v['projected']) && Array.isArray(v['projected']['sources'])) {
        for (const s of v['projected']['sources']) if (isJson(s) && isJson(s['secret'])) uses.push(`volume ${name} projects Secret ${String(s['secret']['name'])}`);
      }
      if (isJson(v['csi']) && String(v['csi']['driver']).includes('secrets-store')) uses.push(`volume ${name} is a CSI secrets-store volume`);
    }
  }
  for (const c of podContainers(podSpec)) {
    const name = String(c['name']);
    if (Array.isArray(c['env'])) {
      for (const e of c['env']) {
        if (isJson(e) && isJson(e['valueFrom']) && isJson(e['valueFrom']['secretKeyRef'])) {
          uses.push(`container ${name} env ${String(e['name'])} from Secret ${String(e['valueFrom']['secretKeyRef']['name'])}`);
        }
      }
    }
    if (Array.isArray(c['envFrom'])) {
      for (const e of c['envFrom']) if (isJson(e) && isJson(e['secretRef'])) uses.push(`container ${name} envFrom Secret ${String(e['secretRef']['name'])}`);
    }
  }
  return uses;
}

/** A deep copy without `undefined` members (what `toJson_*` leave behind). */
export function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
