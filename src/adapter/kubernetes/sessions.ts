/**
 * The Kubernetes side of the adapter: create a session from a template (idempotent by operation id), observe it, suspend
 * or resume it, terminate it (idempotent, preconditioned).
 *
 * Release families (docs/architecture.md, "Releases and pinning"): v0.5 is served in full through v1beta1 SandboxClaims, which name a warm pool, never a
 * template (`spec.warmPoolRef.name` required, `extensions/api/v1beta1/sandboxclaim_types.go@v0.5.6`); on v0.4 new provisioning
 * stops (`unsupported`) while observe and terminate keep working through v1alpha1.
 */
import * as k8s from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import type { ReleaseFamily } from '../../releases/types.js';
import type { Observation, Result, SessionRef, SessionTemplate, Termination } from '../types.js';
import type { KubeClient } from './client.js';
import { claimPhase, sandboxPhase, type ClaimObject, type SandboxObject } from './phase.js';
import { detectRelease, type LiveRelease } from './release.js';
import { isBetaFamily } from '../../model/releases.js';
import { gvr, resourceName, type Gvr } from '../../model/resources.js';
import {
  MANAGED_BY_LABEL,
  OPERATION_ANNOTATION,
  OPERATION_LABEL,
  POOL_HASHES_ANNOTATION,
  TEMPLATE_GENERATION_ANNOTATION,
} from './resources.js';
import {
  boundTemplateHash,
  listedHashes,
  parseListedHashes,
  poolMembers,
  poolSelector,
  templateState,
  type LabelledSandbox,
  type NamedTemplate,
  type TemplateState,
} from './template-hash.js';

/** Where to create a session: the namespace, the SandboxTemplate, and (v0.5, required) the SandboxWarmPool serving it. */
export interface SessionScope {
  readonly namespace: string;
  readonly template: string;
  readonly warmPool?: string;
}

export interface KubeSessionsOptions {
  /**
   * Extra labels put on every claim created (e.g. a verifier run id so its workload objects can be found and cleaned up).
   * @default - none
   */
  readonly labels?: Readonly<Record<string, string>>;
}

/** Upper bound on an operation id's length (characters); it is stored whole in an annotation. */
export const MAX_OPERATION_ID = 512;

/** Annotation naming the backing Pod of a Sandbox (`api/v1beta1/sandbox_types.go@v0.5.6`). */
const POD_NAME_ANNOTATION = 'agents.x-k8s.io/pod-name';
/** Annotation naming the template a Sandbox was made from (`api/v1beta1/sandbox_types.go@v0.5.6`). */
const TEMPLATE_REF_ANNOTATION = 'agents.x-k8s.io/sandbox-template-ref';

type Obj = Record<string, unknown> & {
  metadata?: {
    name?: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    annotations?: Record<string, string>;
  };
  spec?: { warmPoolRef?: { name?: string }; sandboxTemplateRef?: { name?: string } };
  status?: { sandbox?: { name?: string } };
};

/** A bound Sandbox as read: what its phase and its template version are judged from. */
type BoundSandbox = SandboxObject & LabelledSandbox;

/** The words of a non-ok Result, for a message. */
function why(r: Exclude<Result<unknown>, { kind: 'ok' }>): string {
  return r.kind === 'failed' ? r.error.message : r.message;
}

/** sha256 hex prefix of an operation id: label value and name suffix. */
export function operationHash(operationId: string): string {
  return createHash('sha256').update(operationId).digest('hex').slice(0, 12);
}

/** The deterministic claim name for (pool, operation id): `<pool, at most 50 chars>-<12 hex>`; a retry computes the same name. */
export function sessionName(warmPool: string, operationId: string): string {
  return `${warmPool.slice(0, 50).replace(/-+$/, '')}-${operationHash(operationId)}`;
}

/** Kubernetes operations on sessions for one connected cluster. The live release is detected once and cached. */
export class KubeSessions {
  private release?: Promise<Result<LiveRelease>> | undefined;

  constructor(
    readonly client: KubeClient,
    private readonly options: KubeSessionsOptions = {},
  ) {}

  /**
   * The live release (cached after the first successful detection; `refresh` re-reads it). Concurrent callers share
   * one detection in flight; a failed one is not kept.
   */
  liveRelease(refresh = false): Promise<Result<LiveRelease>> {
    if (this.release && !refresh) return this.release;
    const detecting = detectRelease(this.client);
    this.release = detecting;
    void detecting.then((r) => {
      if (r.kind !== 'ok' && this.release === detecting) this.release = undefined;
    });
    return detecting;
  }

  /**
   * Creates (or, for a retried operation id, finds) a SandboxClaim for `scope`.
   *
   * - `templateVersion`: the SandboxTemplate `metadata.generation` (decimal string) the caller expects; `''` accepts any.
   *   A different live generation gives `rejected` naming both.
   * - `operationId`: 1..512 characters; the claim is named `sessionName(pool, operationId)`, labelled with its hash and
   *   annotated with it whole, so a retry returns the same session (same uid).
   * Outcomes: `unsupported` when the Sandbox API is absent or the live family is v0.4; `rejected` when no warm pool is
   * given, the pool or template is missing, the pool serves another template, or the template version differs;
   * `failed` for API failures (classified).
   * The ref's `template` ({@link SessionTemplate}) carries the template name and the generation the claim was created
   * against, and the blueprint hash of the bound Sandbox when the claim is bound at the one re-read right after create
   * (no waiting; on the v0.5.6 test cluster it was never bound that early). Adoption removes the hash label
   * (`extensions/controllers/sandboxclaim_controller.go@v0.5.6`), so the pool's members and their labels are listed just
   * before the claim is created and stored on it (annotation `agentplane.dev/pool-template-hashes`, at most 100 members):
   * the hash is then the listed label of the member the claim got, here or in `observe`; see template-hash.ts. A failure
   * of these extra reads never fails the create: the hash is then absent and `template.reason` says why.
   */
  async createFromTemplate(
    scope: SessionScope,
    templateVersion: string,
    operationId: string,
  ): Promise<Result<SessionRef>> {
    const capability = `template/${scope.namespace}/${scope.template}` as const;
    if (operationId.length === 0 || operationId.length > MAX_OPERATION_ID) {
      return {
        kind: 'rejected',
        reason: 'InvalidOperationId',
        message: `operation id must be 1..${MAX_OPERATION_ID} characters, got ${operationId.length}`,
      };
    }
    const rel = await this.liveRelease();
    if (rel.kind !== 'ok') return rel;
    const family = rel.value.family;
    if (!family)
      return {
        kind: 'unsupported',
        capability: 'sandbox-api',
        state: 'absent',
        reason: 'SandboxApiNotServed',
        message: rel.value.message,
      };
    if (family === 'v0.4') {
      return {
        kind: 'unsupported',
        capability,
        state: 'unsupported',
        reason: 'ReleaseProvisionsNoClaims',
        message: `the live release is family v0.4 (${rel.value.tag ?? rel.value.coreVersions.join(', ')}): new sessions are not provisioned on it; observe and terminate still work. Upgrade to v0.5.6, then v1.0.3 (agentplane plan-upgrade --to v0.5.6)`,
      };
    }
    if (!rel.value.extensionsVersions.includes('v1beta1')) {
      return {
        kind: 'unsupported',
        capability: 'extensions-api',
        state: rel.value.extensionsVersions.length ? 'discovered' : 'absent',
        reason: 'ExtensionsApiNotServed',
        message: 'extensions.agents.x-k8s.io/v1beta1 is not served: install the extensions',
      };
    }
    if (!scope.warmPool) {
      return {
        kind: 'rejected',
        reason: 'WarmPoolRequired',
        message: `v1beta1 SandboxClaims name a warm pool, not a template (spec.warmPoolRef, extensions/api/v1beta1/sandboxclaim_types.go@v0.5.6): pass the SandboxWarmPool that serves template ${scope.namespace}/${scope.template}`,
      };
    }
    const claims = gvr('SandboxClaim', family);
    const name = sessionName(scope.warmPool, operationId);
    const existing = await this.findOwn(claims, scope.namespace, name, operationId, scope);
    if (existing.kind !== 'ok') return existing;
    if (existing.value) return { kind: 'ok', value: existing.value.ref }; // a retry: same session

    const co = this.client.api(k8s.CustomObjectsApi);
    const pool = await this.getCustom<Obj & { spec?: { sandboxTemplateRef?: { name?: string } } }>(
      'SandboxWarmPool',
      family,
      scope.namespace,
      scope.warmPool!,
    );
    if (pool.kind === 'failed' && pool.error.category === 'not-found' && pool.error.missing === 'object') {
      return {
        kind: 'rejected',
        reason: 'WarmPoolNotFound',
        message: `SandboxWarmPool ${scope.namespace}/${scope.warmPool} does not exist: apply the environment first`,
      };
    }
    if (pool.kind !== 'ok') return pool;
    const poolTemplate = pool.value.spec?.sandboxTemplateRef?.name;
    if (poolTemplate !== scope.template) {
      return {
        kind: 'rejected',
        reason: 'WarmPoolServesOtherTemplate',
        message: `SandboxWarmPool ${scope.namespace}/${scope.warmPool} serves template "${poolTemplate ?? ''}", not "${scope.template}"`,
      };
    }
    const tpl = await this.getCustom<Obj>('SandboxTemplate', family, scope.namespace, scope.template);
    if (tpl.kind === 'failed' && tpl.error.category === 'not-found' && tpl.error.missing === 'object') {
      return {
        kind: 'rejected',
        reason: 'TemplateNotFound',
        message: `SandboxTemplate ${scope.namespace}/${scope.template} does not exist: apply the environment first`,
      };
    }
    if (tpl.kind !== 'ok') return tpl;
    const generation = String(tpl.value.metadata?.generation ?? '');
    if (templateVersion !== '' && templateVersion !== generation) {
      return {
        kind: 'rejected',
        reason: 'TemplateVersionMismatch',
        message: `SandboxTemplate ${scope.namespace}/${scope.template} is at generation ${generation}, the request expects ${templateVersion}: observe the template again`,
      };
    }
    // Pool members with their hash labels, listed before the claim exists: adoption removes the label (case recreate-adopts-stale-template).
    const listed = await this.listMembers(family, scope.namespace, scope.warmPool);
    const body = {
      apiVersion: `${claims.group}/${claims.version}`,
      kind: 'SandboxClaim',
      metadata: {
        name,
        namespace: scope.namespace,
        labels: {
          ...this.options.labels,
          [MANAGED_BY_LABEL]: 'agentplane',
          [OPERATION_LABEL]: operationHash(operationId),
        },
        annotations: {
          [OPERATION_ANNOTATION]: operationId,
          [TEMPLATE_GENERATION_ANNOTATION]: generation,
          ...(listed.kind === 'ok' ? { [POOL_HASHES_ANNOTATION]: JSON.stringify(listedHashes(listed.value)) } : {}),
        },
      },
      spec: { warmPoolRef: { name: scope.warmPool } },
    };
    const created = await this.client.call(
      `create ${resourceName('SandboxClaim')} ${scope.namespace}/${name}`,
      () => co.createNamespacedCustomObject({ ...claims, namespace: scope.namespace, body }) as Promise<Obj>,
    );
    if (created.kind === 'ok') {
      const reread = await this.client.call(
        `get ${resourceName('SandboxClaim')} ${scope.namespace}/${name}`,
        () => co.getNamespacedCustomObject({ ...claims, namespace: scope.namespace, name }) as Promise<Obj>,
      );
      let template: SessionTemplate =
        reread.kind === 'ok'
          ? await this.sessionTemplate(family, scope, reread.value)
          : {
              name: scope.template,
              generation: Number(generation),
              reason: 'ClaimNotReread',
              message: `SandboxClaim ${scope.namespace}/${name} not re-read after create (${why(reread)}): template hash unknown; observe() reports it`,
            };
      if (listed.kind !== 'ok')
        template = {
          ...template,
          message: `${template.message}; pool members were not listed before create (${why(listed)})`,
        };
      return { kind: 'ok', value: this.ref(scope.namespace, name, operationId, created.value, template) };
    }
    if (created.kind === 'failed' && created.error.category === 'conflict') {
      // A concurrent retry created it first: return that session.
      const again = await this.findOwn(claims, scope.namespace, name, operationId, scope);
      if (again.kind === 'ok' && again.value) return { kind: 'ok', value: again.value.ref };
      if (again.kind !== 'ok') return again;
    }
    return created;
  }

  /**
   * Observes a session: phase from spec plus current-generation conditions; a claim is judged by its bound Sandbox (case claim-ready-stale-generation).
   * For a claim bound to an existing Sandbox, also `templateHash`, `currentTemplateHash`, `staleTemplate` and
   * `templateReason` (case recreate-adopts-stale-template; three more reads: the pool, its template, its members), each absent when not determinable.
   */
  async observe(ref: SessionRef): Promise<Result<Observation>> {
    const rel = await this.liveRelease();
    if (rel.kind !== 'ok') return rel;
    const family = rel.value.family;
    if (!family)
      return {
        kind: 'unsupported',
        capability: 'sandbox-api',
        state: 'absent',
        reason: 'SandboxApiNotServed',
        message: rel.value.message,
      };
    const kind = ref.via === 'claim' ? 'SandboxClaim' : 'Sandbox';
    const got = await this.getCustom<Obj>(kind, family, ref.namespace, ref.name);
    if (got.kind === 'failed' && got.error.category === 'not-found' && got.error.missing === 'object')
      return { kind: 'ok', value: gone(ref, 'ObjectNotFound', `${kind} ${ref.namespace}/${ref.name} not found`) };
    if (got.kind !== 'ok') return got;
    const obj = got.value;
    if (ref.uid && obj.metadata?.uid !== ref.uid) {
      return {
        kind: 'ok',
        value: gone(
          ref,
          'ObjectReplaced',
          `${kind} ${ref.namespace}/${ref.name} now has uid ${obj.metadata?.uid ?? '?'}, not the session's ${ref.uid}: the session's object was deleted and replaced`,
        ),
      };
    }
    const base = {
      ref,
      generation: obj.metadata?.generation ?? 0,
      resourceVersion: obj.metadata?.resourceVersion ?? '',
    };
    if (ref.via === 'sandbox') {
      return {
        kind: 'ok',
        value: this.toObservation(base, sandboxPhase(obj as SandboxObject, family), obj as SandboxObject),
      };
    }
    const claim = obj as ClaimObject;
    const boundName = claim.status?.sandbox?.name;
    let bound: BoundSandbox | 'missing' | undefined;
    if (boundName) {
      const sb = await this.boundSandbox(family, ref.namespace, boundName);
      if (sb.kind !== 'ok') return sb;
      bound = sb.value;
    }
    const judged = claimPhase(claim, bound, family);
    const sandbox = bound === 'missing' ? undefined : bound;
    const state: TemplateState = sandbox
      ? await this.templateStateOf(family, ref, obj, sandbox as LabelledSandbox)
      : {
          templateReason: boundName ? 'BoundSandboxUnread' : 'ClaimUnbound',
          templateMessage: boundName
            ? `bound Sandbox ${boundName} not found: template version unknown`
            : 'claim not bound to a Sandbox yet: template version unknown',
        };
    return { kind: 'ok', value: { ...this.toObservation(base, judged, sandbox, boundName), ...state } };
  }

  /**
   * Template version of a claim's bound Sandbox (case recreate-adopts-stale-template): reads the claim's pool, the pool's template and the pool's live
   * members (label `agents.x-k8s.io/warm-pool-sandbox`); see template-hash.ts. Read failures leave fields unknown, with
   * the reason; they never fail the observation.
   */
  private async templateStateOf(
    family: ReleaseFamily,
    ref: SessionRef,
    claim: Obj,
    sandbox: LabelledSandbox,
  ): Promise<TemplateState> {
    const poolName = claim.spec?.warmPoolRef?.name;
    const notes: string[] = [];
    let templateName = ref.template?.name ?? claim.spec?.sandboxTemplateRef?.name; // v1alpha1 claims name their template
    let members: LabelledSandbox[] = [];
    if (poolName) {
      const pool = await this.getCustom<Obj>('SandboxWarmPool', family, ref.namespace, poolName);
      if (pool.kind === 'ok') templateName = pool.value.spec?.sandboxTemplateRef?.name ?? templateName;
      else notes.push(`SandboxWarmPool ${ref.namespace}/${poolName} not read (${why(pool)})`);
      const listed = await this.listMembers(family, ref.namespace, poolName);
      if (listed.kind === 'ok') members = listed.value;
      else notes.push(`pool members not listed (${why(listed)})`);
    }
    let template: NamedTemplate | undefined;
    let missing = 'no template name known for this claim';
    if (templateName) {
      const tpl = await this.getCustom<NamedTemplate>('SandboxTemplate', family, ref.namespace, templateName);
      if (tpl.kind === 'ok') template = tpl.value;
      else missing = `SandboxTemplate ${ref.namespace}/${templateName} not read (${why(tpl)})`;
    }
    const listed = parseListedHashes(claim.metadata?.annotations?.[POOL_HASHES_ANNOTATION]);
    const state = templateState(
      sandbox,
      template,
      members,
      { ...(listed ? { listed } : {}), ...(ref.template?.hash ? { recorded: ref.template.hash } : {}) },
      missing,
    );
    return notes.length ? { ...state, templateMessage: `${state.templateMessage}; ${notes.join('; ')}` } : state;
  }

  /** One namespaced Agent Sandbox object at the family's served version, named in the call's description. */
  private getCustom<T extends object>(
    kind: Parameters<typeof gvr>[0],
    family: ReleaseFamily,
    namespace: string,
    name: string,
  ): Promise<Result<T>> {
    const co = this.client.api(k8s.CustomObjectsApi);
    return this.client.call(
      `get ${resourceName(kind)} ${namespace}/${name}`,
      () => co.getNamespacedCustomObject({ ...gvr(kind, family), namespace, name }) as Promise<T>,
    );
  }

  /** The Sandbox a claim is bound to, `'missing'` when that name gives 404. */
  private async boundSandbox(
    family: ReleaseFamily,
    namespace: string,
    name: string,
  ): Promise<Result<BoundSandbox | 'missing'>> {
    const co = this.client.api(k8s.CustomObjectsApi);
    const sb = await this.client.call(
      `get ${resourceName('Sandbox')} ${namespace}/${name}`,
      () => co.getNamespacedCustomObject({ ...gvr('Sandbox', family), namespace, name }) as Promise<BoundSandbox>,
    );
    if (sb.kind === 'failed' && sb.error.category === 'not-found' && sb.error.missing === 'object')
      return { kind: 'ok', value: 'missing' };
    return sb;
  }

  /** Live members of pool `pool` (Sandboxes selected by its pool label, controller-owned by it, not being deleted). */
  private async listMembers(
    family: ReleaseFamily,
    namespace: string,
    pool: string,
  ): Promise<Result<LabelledSandbox[]>> {
    const co = this.client.api(k8s.CustomObjectsApi);
    const r = await this.client.call(
      `list ${resourceName('Sandbox')} ${namespace} -l ${poolSelector(pool)}`,
      () =>
        co.listNamespacedCustomObject({
          ...gvr('Sandbox', family),
          namespace,
          labelSelector: poolSelector(pool),
        }) as Promise<{ items?: LabelledSandbox[] }>,
    );
    return r.kind === 'ok' ? { kind: 'ok', value: poolMembers(r.value.items ?? [], pool) } : r;
  }

  /**
   * The {@link SessionTemplate} of a claim as just read, from the claim alone (so a retry gives what the first call gave
   * while nothing changed): bound → the bound Sandbox's hash (its label, the claim's listing, else a live member with the
   * same blueprint); unbound → no hash, with what the listing holds.
   */
  private async sessionTemplate(family: ReleaseFamily, scope: SessionScope, claim: Obj): Promise<SessionTemplate> {
    const annotations = claim.metadata?.annotations ?? {};
    const g = Number(annotations[TEMPLATE_GENERATION_ANNOTATION]);
    const base = { name: scope.template, ...(Number.isInteger(g) && g > 0 ? { generation: g } : {}) };
    const listed = parseListedHashes(annotations[POOL_HASHES_ANNOTATION]);
    const boundName = claim.status?.sandbox?.name;
    if (!boundName) {
      const held = listed
        ? Object.entries(listed)
            .map(([h, names]) => `${h} on ${names.length}`)
            .join(', ') || 'none labelled'
        : 'not recorded';
      return {
        ...base,
        reason: 'ClaimUnbound',
        message: `SandboxClaim ${scope.namespace}/${claim.metadata?.name ?? '?'} was not bound yet when read (pool members' hashes before create: ${held}): observe() reports the hash of the one it gets`,
      };
    }
    const sb = await this.boundSandbox(family, scope.namespace, boundName);
    if (sb.kind !== 'ok' || sb.value === 'missing')
      return {
        ...base,
        reason: 'BoundSandboxUnread',
        message: `bound Sandbox ${scope.namespace}/${boundName} not read (${sb.kind === 'ok' ? 'not found' : why(sb)}): template hash unknown`,
      };
    let found = boundTemplateHash(sb.value, [], { ...(listed ? { listed } : {}) });
    let note = '';
    const pool = claim.spec?.warmPoolRef?.name;
    if (!found.hash && pool) {
      const members = await this.listMembers(family, scope.namespace, pool);
      if (members.kind === 'ok') found = boundTemplateHash(sb.value, members.value, { ...(listed ? { listed } : {}) });
      else note = ` (pool members not listed: ${why(members)})`;
    }
    return {
      ...base,
      ...(found.hash ? { hash: found.hash } : {}),
      reason: found.reason,
      message: `${found.how}${note}`,
    };
  }

  /**
   * Sets a Sandbox's `spec.operatingMode` (v0.5) or `spec.replicas` (v0.4) by JSON merge patch with an explicit
   * `application/merge-patch+json` media type (case client-node-patch-content-type: client-node 1.x sends JSON Patch's type otherwise). Returns the patched Sandbox's resourceVersion.
   */
  async setSuspended(namespace: string, sandbox: string, suspended: boolean): Promise<Result<string>> {
    const rel = await this.liveRelease();
    if (rel.kind !== 'ok') return rel;
    const family = rel.value.family;
    if (!family)
      return {
        kind: 'unsupported',
        capability: 'sandbox-api',
        state: 'absent',
        reason: 'SandboxApiNotServed',
        message: rel.value.message,
      };
    const spec = isBetaFamily(family)
      ? { operatingMode: suspended ? 'Suspended' : 'Running' }
      : { replicas: suspended ? 0 : 1 };
    const co = this.client.api(k8s.CustomObjectsApi);
    const r = await this.client.call(
      { verb: 'patch', resource: resourceName('Sandbox'), contentType: k8s.PatchStrategy.MergePatch },
      () =>
        co.patchNamespacedCustomObject(
          { ...gvr('Sandbox', family), namespace, name: sandbox, body: { spec } },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
        ) as Promise<Obj>,
    );
    return r.kind === 'ok' ? { kind: 'ok', value: r.value.metadata?.resourceVersion ?? '' } : r;
  }

  /**
   * Deletes the session's object, preconditioned on its uid and, when `intentVersion` is not `''`, on that resourceVersion.
   * Idempotent: an object already gone (or replaced by one with another uid) gives `ok` with `already-gone`. A resourceVersion
   * that moved on gives `rejected` with the current one.
   */
  async terminate(ref: SessionRef, intentVersion: string): Promise<Result<Termination>> {
    const rel = await this.liveRelease();
    if (rel.kind !== 'ok') return rel;
    const family = rel.value.family;
    if (!family)
      return {
        kind: 'unsupported',
        capability: 'sandbox-api',
        state: 'absent',
        reason: 'SandboxApiNotServed',
        message: rel.value.message,
      };
    const kind = ref.via === 'claim' ? 'SandboxClaim' : 'Sandbox';
    const target = { ...gvr(kind, family), namespace: ref.namespace, name: ref.name };
    const co = this.client.api(k8s.CustomObjectsApi);
    const preconditions = {
      ...(ref.uid ? { uid: ref.uid } : {}),
      ...(intentVersion ? { resourceVersion: intentVersion } : {}),
    };
    const del = await this.client.call(`delete ${resourceName(kind)} ${ref.namespace}/${ref.name}`, () =>
      co.deleteNamespacedCustomObject({ ...target, body: { preconditions, propagationPolicy: 'Background' } }),
    );
    if (del.kind === 'ok') return { kind: 'ok', value: { ref, outcome: 'deleted' } };
    if (del.kind === 'failed' && del.error.category === 'not-found')
      return { kind: 'ok', value: { ref, outcome: 'already-gone' } };
    if (del.kind === 'failed' && del.error.category === 'conflict') {
      const now = await this.client.call(
        `get ${resourceName(kind)} ${ref.namespace}/${ref.name}`,
        () => co.getNamespacedCustomObject(target) as Promise<Obj>,
      );
      if (now.kind === 'failed' && now.error.category === 'not-found')
        return { kind: 'ok', value: { ref, outcome: 'already-gone' } };
      if (now.kind !== 'ok') return now;
      if (ref.uid && now.value.metadata?.uid !== ref.uid)
        return { kind: 'ok', value: { ref, outcome: 'already-gone' } };
      return {
        kind: 'rejected',
        reason: 'IntentVersionChanged',
        message: `${kind} ${ref.namespace}/${ref.name} changed since resourceVersion ${intentVersion} (now ${now.value.metadata?.resourceVersion ?? '?'}): observe it again before terminating`,
      };
    }
    return del;
  }

  /** Finds a claim at `name`: ok(undefined) when absent, ok({ref}) when it carries `operationId`, rejected when it carries another. */
  private async findOwn(
    claims: Gvr,
    namespace: string,
    name: string,
    operationId: string,
    scope: SessionScope,
  ): Promise<Result<{ ref: SessionRef } | undefined>> {
    const co = this.client.api(k8s.CustomObjectsApi);
    const got = await this.client.call(
      `get ${resourceName('SandboxClaim')} ${namespace}/${name}`,
      () => co.getNamespacedCustomObject({ ...claims, namespace, name }) as Promise<Obj>,
    );
    if (got.kind === 'failed' && got.error.category === 'not-found' && got.error.missing === 'object')
      return { kind: 'ok', value: undefined };
    if (got.kind !== 'ok') return got;
    const owner = got.value.metadata?.annotations?.[OPERATION_ANNOTATION];
    if (owner !== operationId) {
      return {
        kind: 'rejected',
        reason: 'ClaimOwnedElsewhere',
        message: `SandboxClaim ${namespace}/${name} already exists for another operation (${owner ?? 'not created by AgentPlane'})`,
      };
    }
    const rel = await this.liveRelease();
    const template =
      rel.kind === 'ok' && rel.value.family
        ? await this.sessionTemplate(rel.value.family, scope, got.value)
        : undefined;
    return { kind: 'ok', value: { ref: this.ref(namespace, name, operationId, got.value, template) } };
  }

  private ref(namespace: string, name: string, operationId: string, obj: Obj, template?: SessionTemplate): SessionRef {
    return {
      namespace,
      name,
      via: 'claim',
      operationId,
      uid: obj.metadata?.uid ?? '',
      ...(template ? { template } : {}),
    };
  }

  private toObservation(
    base: { ref: SessionRef; generation: number; resourceVersion: string },
    judged: ReturnType<typeof sandboxPhase>,
    sandbox: SandboxObject | undefined,
    boundName?: string,
  ): Observation {
    const meta = (sandbox?.metadata ?? {}) as { name?: string; annotations?: Record<string, string> };
    const sandboxName = boundName ?? meta.name;
    const podName = meta.annotations?.[POD_NAME_ANNOTATION] ?? meta.name;
    const template = meta.annotations?.[TEMPLATE_REF_ANNOTATION];
    return {
      ...base,
      phase: judged.phase,
      reason: judged.reason,
      message: judged.message,
      ...(judged.observedGeneration !== undefined ? { observedGeneration: judged.observedGeneration } : {}),
      ...(sandboxName ? { sandboxName } : {}),
      ...(sandbox && podName ? { podName } : {}),
      ...(template ? { template } : {}),
      podIPs: judged.phase === 'Ready' ? [...(sandbox?.status?.podIPs ?? [])] : [],
    };
  }
}

function gone(ref: SessionRef, reason: 'ObjectNotFound' | 'ObjectReplaced', message: string): Observation {
  return { ref, phase: 'Gone', reason, message, generation: 0, podIPs: [], resourceVersion: '' };
}
