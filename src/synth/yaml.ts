/**
 * YAML text for manifests: yaml 2 with `{ version: '1.1', lineWidth: 0 }` like cdk8s (YAML 1.1 quoting keeps `on`/`yes`
 * strings quoted), map keys sorted, list order kept (env order carries meaning), every document preceded by `---`
 * (case 21-synth-determinism); no anchors or aliases, even for objects that share a reference.
 */
import { stringify } from 'yaml';

/** One document. */
export function yamlDocument(obj: unknown): string {
  return stringify(obj, { version: '1.1', lineWidth: 0, sortMapEntries: true, aliasDuplicateObjects: false });
}

/** A multi-document stream: each document starts with a `---` line. Empty input gives an empty string. */
export function yamlStream(objs: readonly unknown[]): string {
  return objs.map((o) => `---\n${yamlDocument(o)}`).join('');
}
