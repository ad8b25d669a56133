/** The input of a diff, in a module of its own so readers (sources.ts, pairing.ts) and compare.ts share it without a cycle. */
import type { KubeObject } from '../releases/index.js';

/** One side of a comparison: a label for people (`dist/`, `main`, `live (context kind-a)`) and its objects. */
export interface ManifestSet {
  readonly label: string;
  readonly objects: readonly KubeObject[];
  /**
   * The environment of `objects[i]` when the set holds several (synth writes one directory per environment); an
   * array, not a map by object, because a document cache (`DocumentCache`, sources.ts) shares one object among environments.
   * A set that reads its files lazily has it as a getter, present and `undefined` when no object names an environment.
   */
  readonly environments?: ReadonlyArray<string | undefined> | undefined;
}
