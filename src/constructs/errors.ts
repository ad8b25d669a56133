/**
 * Typed errors of the constructs layer. Every error names the construct path (`this.node.path`), shows the offending
 * value and says what to do (`hint`, also appended to the message). An invalid environment exits with the `invalid` category.
 */
import type { ErrorReason } from '../model/error-reasons.js';
import { AgentPlaneError, type ExitCategory } from '../model/errors.js';

/** Base class: `path` is the construct path, `detail` what is wrong (the message without path and hint), `hint` what to do. */
export class ConstructError extends AgentPlaneError {
  readonly reason: ErrorReason;
  readonly exitCategory: ExitCategory = 'invalid';
  override readonly hintInMessage = true;
  readonly path: string;
  readonly detail: string;
  readonly hint: string;
  constructor(path: string, detail: string, hint: string, reason: ErrorReason = 'ConstructInvalid') {
    super(`${path}: ${detail}\n  hint: ${hint}`, { summary: `${path}: ${detail}` });
    this.reason = reason;
    this.path = path;
    this.detail = detail;
    this.hint = hint;
  }
}

/** One prop that failed validation. */
export interface PropProblem {
  /** Dotted prop path, e.g. `runtime.container`; `(props)` for the props object itself. */
  readonly prop: string;
  /** Stable CamelCase code, e.g. `NotDnsLabel`, `Required`, or the validator's issue code (`InvalidType`, `UnrecognizedKeys`). */
  readonly reason: ErrorReason;
  /** What is wrong, in words, naming the prop, e.g. `runtime.ports: none given ...`. */
  readonly message: string;
  /** The value given, when one was. */
  readonly value?: unknown;
  /** The values the prop may take instead, when they are a closed list (e.g. the resource keys of `rbac`). */
  readonly allowed?: readonly string[];
}

/** Props failed validation. `problems` carry prop, reason and value; `issues` are their messages (the message's lines add the reason). */
export class ConstructPropsError extends ConstructError {
  readonly construct: string;
  readonly problems: readonly PropProblem[];
  readonly issues: readonly string[];
  constructor(path: string, construct: string, problems: readonly PropProblem[], hint?: string) {
    const issues = problems.map((p) => p.message);
    super(
      path,
      `invalid ${construct} props:\n${problems.map((p) => `    - ${p.message} (${p.reason})`).join('\n')}`,
      hint ??
        `fix the listed ${construct}Props fields (see the ${construct}Props docs for defaults and allowed values)`,
      'InvalidProps',
    );
    this.construct = construct;
    this.problems = problems;
    this.issues = issues;
  }
}

/** Why an image reference is not pinned, as a stable code. */
export type UnpinnedCause = 'Placeholder' | 'MalformedDigest' | 'FloatingTag' | 'NoTagOrDigest' | 'DigestRequired';

/** An image is not pinned: `latest*` tag, `ko://` placeholder, no tag or digest, or (when digests are required) no digest. */
export class UnpinnedImageError extends ConstructError {
  override readonly reason = 'UnpinnedImage';
  readonly image: string;
  /** Why it is not pinned (`FloatingTag`, `DigestRequired`, …). */
  readonly unpinned: UnpinnedCause;
  /** Where the image is used, e.g. `SandboxTemplate py containers[sandboxd]`. */
  readonly where: string;
  constructor(path: string, where: string, image: string, unpinned: UnpinnedCause, detail: string) {
    super(
      path,
      `image ${JSON.stringify(image)} in ${where} is not pinned: ${detail}`,
      'pin every image by an immutable version tag and, where known, a digest (repo:tag@sha256:<64 hex>); never use latest or ko:// placeholders',
    );
    this.image = image;
    this.unpinned = unpinned;
    this.where = where;
  }
}

/** An image a supported release publishes with a known defect (`KNOWN_DEFECTIVE_IMAGES`, case runtime-exec-starves-probe), not accepted by the template. */
export class KnownDefectiveImageError extends ConstructError {
  override readonly reason = 'KnownDefectiveImage';
  readonly image: string;
  readonly defectId: string;
  /** The first release whose image has the fix. */
  readonly fixedIn: string;
  /** Where the defect is reported upstream, e.g. `kubernetes-sigs/agent-sandbox#1015, #1375`. */
  readonly source: string;
  constructor(
    path: string,
    where: string,
    image: string,
    defect: { readonly id: string; readonly defect: string; readonly fixedIn: string; readonly source: string },
  ) {
    super(
      path,
      `image ${JSON.stringify(image)} in ${where} is known-defective (${defect.id}): ${defect.defect} (${defect.source})`,
      `use the image of ${defect.fixedIn} or later, or accept the defect on this template with acceptKnownDefects: ['${defect.id}']`,
    );
    this.image = image;
    this.defectId = defect.id;
    this.fixedIn = defect.fixedIn;
    this.source = defect.source;
  }
}

/**
 * Two parts of an environment contradict each other (e.g. own NetworkPolicies and a Managed template). `conflicting`
 * names the other parts (e.g. the NetworkPolicies), when the check knows them.
 */
export class ConflictError extends ConstructError {
  override readonly reason = 'Conflict';
  constructor(
    path: string,
    detail: string,
    hint: string,
    readonly conflicting: readonly string[] = [],
  ) {
    super(path, detail, hint);
  }
}

/** A reference points at something the environment does not contain (a pool, a template). */
export class MissingReferenceError extends ConstructError {
  override readonly reason = 'MissingReference';
}

/** A setting the pinned release cannot honour (e.g. external certificates on v0.5.0, a router on v0.4.6). */
export class UnsupportedByReleaseError extends ConstructError {
  override readonly reason = 'UnsupportedByRelease';
  constructor(
    path: string,
    /** The setting refused, e.g. `certificates.external` or `router`. */
    readonly setting: string,
    /** The pinned release tag. */
    readonly release: string,
    detail: string,
    hint: string,
  ) {
    super(path, detail, hint);
  }
}

/** Why a VerifierJob's delivery settings cannot go together (see {@link VerifierDeliveryError}). */
export type VerifierDeliveryReason = 'TtlWithHookDelivery' | 'TtlWithFluxDelivery' | 'ConflictingDelivery';

/**
 * The VerifierJob's `delivery` and another of its settings contradict each other (case hook-job-ttl-and-immutability):
 * `ttlSecondsAfterFinished` with Argo CD hook or Flux delivery, or the deprecated `argoCdHook` disagreeing with
 * `delivery`. `settings` names both props, `values` holds what was given for each.
 */
export class VerifierDeliveryError extends ConstructError {
  override readonly reason: VerifierDeliveryReason;
  constructor(
    path: string,
    reason: VerifierDeliveryReason,
    /** The two props that conflict, e.g. `['delivery', 'ttlSecondsAfterFinished']`. */
    readonly settings: readonly [string, string],
    /** The value given for each of `settings`, by prop name. */
    readonly values: Readonly<Record<string, unknown>>,
    detail: string,
    hint: string,
  ) {
    super(path, detail, hint, reason);
    this.reason = reason;
  }
}

/** What {@link RbacNarrowingError} reports. */
export interface RbacNarrowingDetails {
  /** The prop, e.g. `rbac.networkPolicies`. */
  readonly field: string;
  /** The resource as `plural[.group]`, comma-separated when granted in several groups, e.g. `networkpolicies.networking.k8s.io`. */
  readonly resource: string;
  /** The verbs the controller's pinned ClusterRoles grant on it, which it needs at cluster scope, sorted. */
  readonly verbs: readonly string[];
  /** The namespaces asked for. */
  readonly namespaces: readonly string[];
  readonly release: string;
  /** Where the rights come from, e.g. `ClusterRole agent-sandbox-controller-extensions in k8s/extensions-rbac.generated.yaml@v0.5.6`. */
  readonly grantedBy: readonly string[];
  /**
   * `ControllerWatchesCluster`: the controller lists/watches the resource in every namespace and the release has no flag
   * restricting it to namespaces; `ClusterScopedResource`: the resource is cluster-scoped, so no Role can grant it.
   */
  readonly reason: 'ControllerWatchesCluster' | 'ClusterScopedResource';
  /** The controller's user, `system:serviceaccount:<ns>:<name>`. */
  readonly serviceAccount: string;
}

/**
 * Narrowing the controller's RBAC (`AgentSandboxInstall` prop `rbac`) to namespaces where the controller cannot run with
 * it (case controller-rbac-gaps): the controller would be forbidden its cluster-wide watch and crash-loop, or the
 * resource is cluster-scoped. Fields: {@link RbacNarrowingDetails}.
 */
export class RbacNarrowingError extends ConstructError implements RbacNarrowingDetails {
  readonly field: string;
  readonly resource: string;
  readonly verbs: readonly string[];
  readonly namespaces: readonly string[];
  readonly release: string;
  readonly grantedBy: readonly string[];
  override readonly reason: RbacNarrowingDetails['reason'];
  readonly serviceAccount: string;
  constructor(path: string, d: RbacNarrowingDetails) {
    const asked = `${d.field} narrows ${d.resource} to namespace${d.namespaces.length === 1 ? '' : 's'} ${d.namespaces.join(', ')}`;
    const source = d.grantedBy.join(', ');
    const message =
      d.reason === 'ClusterScopedResource'
        ? `${asked}, but ${d.resource} is cluster-scoped: a namespaced Role cannot grant it, and the controller needs ${d.verbs.join(', ')} on it (${source})`
        : `${asked}, but the controller lists and watches ${d.resource} across all namespaces (${source} grants ${d.verbs.join(', ')} at cluster scope, and it needs them there); ` +
          `release ${d.release} has no flag that restricts the controller to namespaces (cmd/agent-sandbox-controller/main.go@${d.release}` +
          `${d.release === 'v0.5.6' ? '; --cache-label-selectors is a boolean, default false, and names no namespace' : ''}), ` +
          `so its cluster-wide watch would be forbidden and it would crash-loop`;
    const hint =
      d.reason === 'ClusterScopedResource'
        ? `keep ${d.field} at 'cluster' (the default)`
        : `keep ${d.field} at 'cluster' (the default); to keep the controller's writes of ${d.resource} out of other namespaces, ` +
          `restrict them with an admission policy (e.g. a ValidatingAdmissionPolicy matching user ${d.serviceAccount}) instead of narrowing its RBAC`;
    super(path, message, hint, d.reason);
    this.field = d.field;
    this.resource = d.resource;
    this.verbs = d.verbs;
    this.namespaces = d.namespaces;
    this.release = d.release;
    this.grantedBy = d.grantedBy;
    this.reason = d.reason;
    this.serviceAccount = d.serviceAccount;
  }
}
