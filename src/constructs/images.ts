/**
 * Image references: the pinning rule (case unpinned-image-tags) and the images of a pod spec.
 * Reference form: `[registry/]repository[:tag][@sha256:<64 hex>]`, parsed by the releases layer's `parseImage`.
 */
import { parseImage } from '../releases/index.js';
import { UnpinnedImageError, type UnpinnedKind } from './errors.js';

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** Why `image` is not pinned, as a kind and in words, or `undefined` when it is. */
function unpinned(image: string, requireDigest: boolean): { kind: UnpinnedKind; text: string } | undefined {
  if (image.startsWith('ko://')) return { kind: 'placeholder', text: 'it is a ko:// build placeholder, not an image' };
  const ref = parseImage(image);
  if (ref.digest !== undefined && !DIGEST.test(ref.digest))
    return { kind: 'malformed-digest', text: `digest ${JSON.stringify(ref.digest)} is not sha256:<64 lowercase hex>` };
  if (ref.tag !== undefined && /^latest/i.test(ref.tag))
    return {
      kind: 'floating-tag',
      text: `tag ${JSON.stringify(ref.tag)} floats (a latest* tag resolves to different bits per node and per day)`,
    };
  if (ref.tag === undefined && ref.digest === undefined)
    return { kind: 'no-reference', text: 'it has neither a tag nor a digest, so it resolves to :latest' };
  if (requireDigest && ref.digest === undefined)
    return {
      kind: 'no-digest',
      text: 'it has no digest and this environment requires digests (requireDigests: true)',
    };
  return undefined;
}

/** Why `image` is not pinned, or `undefined` when it is. `requireDigest` also refuses references without a digest. */
export function unpinnedReason(image: string, requireDigest: boolean): string | undefined {
  return unpinned(image, requireDigest)?.text;
}

/** Throws {@link UnpinnedImageError} (with the construct path) when `image` is not pinned. */
export function assertPinned(path: string, where: string, image: string, requireDigest: boolean): void {
  const why = unpinned(image, requireDigest);
  if (why !== undefined) throw new UnpinnedImageError(path, where, image, why.text, why.kind);
}

/** One container image of a pod spec: `where` is e.g. `containers[sandboxd]`. */
export interface ContainerImage {
  readonly where: string;
  readonly container: string;
  readonly image: string;
}

/** The images of every container, init container and ephemeral container of a pod spec in JSON form, in declared order. */
export function podSpecImages(podSpec: Record<string, unknown>): ContainerImage[] {
  const out: ContainerImage[] = [];
  for (const field of ['initContainers', 'containers', 'ephemeralContainers']) {
    const list = podSpec[field];
    if (!Array.isArray(list)) continue;
    for (const c of list as Array<Record<string, unknown>>) {
      const name = String(c['name'] ?? '?');
      out.push({ where: `${field}[${name}]`, container: name, image: String(c['image'] ?? '') });
    }
  }
  return out;
}
