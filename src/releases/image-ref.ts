/**
 * Image references, `[registry/]repository[:tag][@sha256:<64 hex>]`: the one parser shared by the pinning rule
 * (src/constructs/images.ts), the known-defect catalog (defective-images.ts) and the verifier's digest comparison
 * (src/verify/image-digests.ts).
 */

/** A parsed image reference. */
export interface ImageRef {
  /** Registry and repository as written, e.g. `registry.k8s.io/agent-sandbox/agent-sandbox-controller`. */
  readonly name: string;
  readonly tag?: string;
  /** As written after `@`, e.g. `sha256:<64 hex>` (not validated here). */
  readonly digest?: string;
}

/** Splits a reference into name, tag and digest (no validation beyond the split). */
export function parseImage(ref: string): ImageRef {
  let rest = ref;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  let tag: string | undefined;
  const colon = rest.indexOf(':', rest.lastIndexOf('/') + 1);
  if (colon >= 0) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  return { name: rest, ...(tag !== undefined ? { tag } : {}), ...(digest !== undefined ? { digest } : {}) };
}

/** `name` read the way Docker does: no registry host means `docker.io/`, and a one-part Docker Hub path gets `library/` (`x`, `docker.io/x` → `docker.io/library/x`; `org/x` → `docker.io/org/x`). */
export function canonicalRepository(name: string): string {
  const parts = name.split('/');
  const hasHost = parts.length > 1 && (parts[0]!.includes('.') || parts[0]!.includes(':') || parts[0] === 'localhost');
  const full = hasHost ? name : `docker.io/${name}`;
  return /^docker\.io\/[^/]+$/.test(full) ? full.replace('docker.io/', 'docker.io/library/') : full;
}
