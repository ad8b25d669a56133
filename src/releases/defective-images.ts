/**
 * Images that supported releases publish with a known defect breaking what AgentPlane relies on (case
 * 02-runtime-exec-starves-probe). Part of release pinning: synthesis refuses them unless the environment accepts the
 * defect by id, and `KNOWN_DEFECTS` (upgrade-plan.ts) lists the same defect per release.
 */
import { parseImage } from './image-ref.js';
import type { ReleaseTag } from './types.js';

/** One known-defective image line. */
export interface DefectiveImage {
  /** Stable id to accept the defect with (`acceptKnownDefects`), e.g. `python-runtime-blocking-execute`. */
  readonly id: string;
  /**
   * Repository path matched at the end of the image name, so registry mirrors that keep the path match too:
   * `agent-sandbox/python-runtime-sandbox` matches `registry.k8s.io/agent-sandbox/python-runtime-sandbox` and
   * `mirror.example/agent-sandbox/python-runtime-sandbox`.
   */
  readonly repository: string;
  /** The defective tags (release tags the image was promoted with, `dev/tools/tag-promote-images@tag`). */
  readonly tags: readonly ReleaseTag[];
  /** What goes wrong, in plain words, with the upstream issues. */
  readonly defect: string;
  /** The first release whose image is fixed. */
  readonly fixedIn: ReleaseTag;
  /** Upstream source (path@tag). */
  readonly source: string;
}

export const KNOWN_DEFECTIVE_IMAGES: readonly DefectiveImage[] = [
  {
    id: 'python-runtime-blocking-execute',
    repository: 'agent-sandbox/python-runtime-sandbox',
    tags: ['v0.4.6', 'v0.5.0'],
    defect:
      "POST /execute runs the command synchronously on the server's event loop, so one long command blocks health checks and every other request until it ends (kubernetes-sigs/agent-sandbox#1015, #1375)",
    fixedIn: 'v0.5.6',
    source: 'examples/python-runtime-sandbox/main.py@v0.4.6',
  },
];

/** The known defect of `image` (`[registry/]path[:tag][@digest]`), or undefined. A digest-only reference is not matched (no digests are recorded). */
export function knownDefectOf(image: string): DefectiveImage | undefined {
  const { name, tag } = parseImage(image);
  if (tag === undefined) return undefined;
  return KNOWN_DEFECTIVE_IMAGES.find(
    (d) => (name === d.repository || name.endsWith(`/${d.repository}`)) && (d.tags as readonly string[]).includes(tag),
  );
}
