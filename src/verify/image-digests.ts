/**
 * Running image digests against the pinned ones (case unpinned-image-tags, verifier side). Pure: reads the adapter's
 * pod views and the references the environment pinned; the probe (./probes/image-digests.ts) does the reads.
 *
 * What a container status tells (Kubernetes core/v1 ContainerStatus): `image` is the reference the runtime runs (as the
 * runtime spells it, e.g. `docker.io/library/x:1`), `imageID` is what it resolved it to. With containerd and CRI-O the
 * imageID is the registry digest `<repo>@sha256:<64 hex>`; docker-shim spelled it `docker-pullable://<repo>@sha256:…`;
 * an image loaded into the node without a registry (kind load, `ctr import`) has only its local id `sha256:…`, which is
 * the config digest and can never equal a manifest digest. A runtime may also leave it empty (kwok's simulated pods do:
 * test-cluster/README.md).
 *
 * Outcome per container, each a verdict on the capability's `verified` step:
 * - `match` (pinned digest = imageID digest): proven;
 * - `skew` (pinned digest ≠ imageID digest), `ref-skew` (tag-only pin, but the container runs another repository or
 *   tag): missing — the capability does not advance;
 * - `tag-only` (the pin has no digest: a tag can resolve to different bits per node and per day, so skew cannot be
 *   detected), `no-image-id` (empty/absent), `local-image-id` (no registry digest): unknown — never advances.
 */
import { canonicalRepository, parseImage } from '../releases/index.js';
import { fact, type Evidence } from './evidence.js';
import type { CapabilityName } from '../adapter/types.js';
import type { PodView } from '../adapter/kubernetes/views.js';

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** A reference split into repository (normalised: `docker.io/library/` added where Docker implies it), tag and digest. */
export interface SplitRef {
  readonly repository: string;
  readonly tag?: string;
  readonly digest?: string;
}

/** Splits `[registry/]repository[:tag][@sha256:…]` (the releases layer's `parseImage`); a repository without a registry host is read the way Docker does (`docker.io/`, `library/`). */
export function splitRef(ref: string): SplitRef {
  const { name, tag, digest } = parseImage(ref.trim());
  return {
    repository: canonicalRepository(name),
    ...(tag !== undefined ? { tag } : {}),
    ...(digest !== undefined ? { digest } : {}),
  };
}

/** The registry digest in an imageID (`[docker-pullable://]<repo>@sha256:<64 hex>`), or undefined (empty, or a bare local id). */
export function registryDigest(imageID: string): string | undefined {
  const at = imageID.lastIndexOf('@');
  if (at < 0) return undefined;
  const d = imageID.slice(at + 1);
  return DIGEST.test(d) ? d : undefined;
}

/** What one running container was compared with. */
export interface ContainerImage {
  /** `<namespace>/<pod>` */
  readonly pod: string;
  readonly container: string;
  /** The reference the environment pinned for this container. */
  readonly pinned: string;
  /** `status.*ContainerStatuses[].image` ('' when absent). */
  readonly image: string;
  /** `status.*ContainerStatuses[].imageID` ('' when absent). */
  readonly imageID: string;
}

export type ImageCheck =
  | { readonly kind: 'match'; readonly digest: string }
  | { readonly kind: 'skew'; readonly pinnedDigest: string; readonly runningDigest: string }
  | { readonly kind: 'ref-skew'; readonly pinned: string; readonly running: string }
  | { readonly kind: 'tag-only'; readonly runningDigest?: string }
  | { readonly kind: 'no-image-id' }
  | { readonly kind: 'local-image-id' };

/** Compares one running container with its pin (see the module comment for the outcomes). */
export function checkImage(c: ContainerImage): ImageCheck {
  const pin = splitRef(c.pinned);
  const running = registryDigest(c.imageID);
  if (pin.digest !== undefined) {
    if (c.imageID === '') return { kind: 'no-image-id' };
    if (running === undefined) return { kind: 'local-image-id' };
    return running === pin.digest
      ? { kind: 'match', digest: running }
      : { kind: 'skew', pinnedDigest: pin.digest, runningDigest: running };
  }
  if (c.image !== '') {
    const ran = splitRef(c.image);
    if (ran.repository !== pin.repository || (ran.tag !== undefined && pin.tag !== undefined && ran.tag !== pin.tag))
      return { kind: 'ref-skew', pinned: c.pinned, running: c.image };
  }
  return running !== undefined ? { kind: 'tag-only', runningDigest: running } : { kind: 'tag-only' };
}

/**
 * The containers of `pods` that have started (state running or terminated; a waiting container has pulled nothing yet)
 * and carry a pin in `pins` (container name → pinned reference). Pods being deleted are skipped: they are on their way out.
 */
export function startedContainers(pods: readonly PodView[], pins: Readonly<Record<string, string>>): ContainerImage[] {
  const out: ContainerImage[] = [];
  for (const pod of pods) {
    if (pod.meta.deleting) continue;
    const name = `${pod.meta.namespace ?? '?'}/${pod.meta.name}`;
    for (const s of pod.containerStatuses) {
      const pinned = pins[s.name];
      if (pinned === undefined || !s.started) continue;
      out.push({ pod: name, container: s.name, pinned, image: s.image, imageID: s.imageID });
    }
  }
  return out;
}

const LIST_MAX = 10;

function listed(items: readonly string[]): string {
  return items.length <= LIST_MAX
    ? items.join(', ')
    : `${items.slice(0, LIST_MAX).join(', ')} and ${items.length - LIST_MAX} more`;
}

/**
 * Evidence for the `verified` step of `capability` from the compared containers of `owner` (e.g. `pods of template
 * ns/name`): one proven fact listing every match, one missing fact per skewed container naming pod, container, pinned
 * and running image, and one unknown fact per reason skew could not be checked. No containers, no evidence.
 */
export function imageEvidence(
  capability: CapabilityName,
  owner: string,
  containers: readonly ContainerImage[],
): Evidence[] {
  const out: Evidence[] = [];
  const matches: string[] = [];
  const digests = new Set<string>();
  const tagOnly = new Map<string, string[]>();
  const noId: string[] = [];
  const localId: string[] = [];
  for (const c of containers) {
    const where = `${c.pod}/${c.container}`;
    const r = checkImage(c);
    const subject = `Pod ${c.pod}`;
    switch (r.kind) {
      case 'match':
        matches.push(`${where} ${r.digest}`);
        digests.add(r.digest);
        break;
      case 'skew':
        out.push(
          fact({
            reason: 'ImageDigestDiffers',
            capability,
            step: 'verified',
            verdict: 'missing',
            subject,
            field: `status.containerStatuses[${c.container}].imageID`,
            value: c.imageID,
            message: `image skew: container ${c.container} of pod ${c.pod} runs ${r.runningDigest} (image ${c.image || 'unreported'}), the environment pinned ${c.pinned}: the pod runs other bits than pinned; recreate it from the pinned spec or fix the pin`,
          }),
        );
        break;
      case 'ref-skew':
        out.push(
          fact({
            reason: 'ImageReferenceDiffers',
            capability,
            step: 'verified',
            verdict: 'missing',
            subject,
            field: `status.containerStatuses[${c.container}].image`,
            value: c.image,
            message: `image skew: container ${c.container} of pod ${c.pod} runs ${r.running}, the environment pinned ${r.pinned}: the pod was made from another spec; recreate it from the pinned spec or fix the pin`,
          }),
        );
        break;
      case 'tag-only': {
        const list = tagOnly.get(c.pinned) ?? [];
        list.push(`${where}${r.runningDigest ? ` ${r.runningDigest}` : ''}`);
        tagOnly.set(c.pinned, list);
        break;
      }
      case 'no-image-id':
        noId.push(where);
        break;
      case 'local-image-id':
        localId.push(`${where} ${c.imageID}`);
        break;
    }
  }
  if (matches.length > 0) {
    out.push(
      fact({
        reason: 'ImageDigestPinned',
        capability,
        step: 'verified',
        verdict: 'proven',
        subject: owner,
        field: 'status.containerStatuses[].imageID',
        value: [...digests].join(', '),
        objects: matches,
        message: `${matches.length} container(s) run the pinned digest: ${listed(matches)}`,
      }),
    );
  }
  for (const [pinned, where] of tagOnly) {
    out.push(
      fact({
        reason: 'PinnedByTagOnly',
        capability,
        step: 'verified',
        verdict: 'unknown',
        subject: owner,
        field: 'status.containerStatuses[].imageID',
        value: pinned,
        objects: where,
        message: `${pinned} is pinned by tag only: a tag can resolve to different bits per node and per day, so image skew cannot be detected for ${where.length} container(s) (${listed(where)}); pin a digest (requireDigests: true) to verify`,
      }),
    );
  }
  if (noId.length > 0) {
    out.push(
      fact({
        reason: 'NoImageId',
        capability,
        step: 'verified',
        verdict: 'unknown',
        subject: owner,
        field: 'status.containerStatuses[].imageID',
        value: '',
        objects: noId,
        message: `${noId.length} container(s) report no imageID (${listed(noId)}): the container runtime did not say which image runs, so skew against the pinned digest cannot be checked`,
      }),
    );
  }
  if (localId.length > 0) {
    out.push(
      fact({
        reason: 'LocalImageId',
        capability,
        step: 'verified',
        verdict: 'unknown',
        subject: owner,
        field: 'status.containerStatuses[].imageID',
        objects: localId,
        message: `${localId.length} container(s) report a local image id, not a registry digest (${listed(localId)}): the image was loaded into the node, so it cannot be compared with the pinned digest`,
      }),
    );
  }
  return out;
}
