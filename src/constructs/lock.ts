/**
 * The lock (`agentplane.lock.json`) of environments that share one lock file, from their descriptors, which are read
 * from the written objects: images keyed `<environment>/<role>`, clients `<environment>/<sdk>/<mode>`, acknowledged
 * rules `<environment>/<rule>/<construct path>`. `agentplane synth` and `app.synth()` both build it here.
 */
import { lockFor, type LoadedRelease, type LockFile } from '../releases/index.js';
import type { EnvironmentDescriptor } from './descriptor.js';

/** The lock of `descriptors`, all on `release`. */
export function environmentsLock(release: LoadedRelease, descriptors: readonly EnvironmentDescriptor[]): LockFile {
  const images: Record<string, string> = {};
  const clients: Record<string, string> = {};
  const acknowledgements: Record<string, string> = {};
  for (const d of descriptors) {
    for (const [role, image] of Object.entries(d.images)) images[`${d.name}/${role}`] = image;
    for (const c of d.clients ?? []) clients[`${d.name}/${c.sdk}/${c.mode}`] = c.version;
    for (const a of d.acknowledgements ?? []) acknowledgements[`${d.name}/${a.rule}/${a.path}`] = a.reason;
  }
  return lockFor(release, images, clients, acknowledgements);
}
