/**
 * The environment context constructs look up from their scope (the nearest enclosing AgentEnvironment), kept in its
 * own module so constructs do not import the environment chart (no import cycles).
 */
import type { IConstruct } from 'constructs';
import { storageVersionOf } from '../model/releases.js';
import type { LoadedRelease, SandboxKind } from '../releases/index.js';
import type { ParsedLifecycle } from './lifetime.js';

/** What a construct may know about its environment. */
export interface EnvironmentContext {
  /** Environment name (dist folder, label value). */
  readonly name: string;
  readonly release: LoadedRelease;
  /** Refuse images without a digest. */
  readonly requireDigests: boolean;
  /** Namespace for templates, pools and claims that name none. */
  readonly defaultNamespace: string;
  /** Records a namespace a part puts objects in, so the environment writes its Namespace (when it creates namespaces). */
  readonly useNamespace: (namespace: string) => void;
  /**
   * Refuses `part`, just created under the environment, once the environment is sealed (synthesized): it is taken out
   * of the tree again and a ConstructError (`EnvironmentSealed`) names its path.
   */
  readonly assertOpen: (part: IConstruct) => void;
  /** Lifecycle of claims that set none (`AgentEnvironmentProps.claimLifecycle`); `undefined`: such claims are refused. */
  readonly claimLifecycle?: ParsedLifecycle;
}

const CONTEXT = Symbol.for('agentplane.EnvironmentContext');

/** Marks `scope` as the holder of `ctx` (called by AgentEnvironment). */
export function provideContext(scope: IConstruct, ctx: EnvironmentContext): void {
  Object.defineProperty(scope, CONTEXT, { value: ctx, enumerable: false });
}

/** The nearest enclosing construct that provides an environment context (the environment itself), or `undefined`. */
export function contextScope(scope: IConstruct): IConstruct | undefined {
  const scopes = scope.node.scopes;
  for (let i = scopes.length - 1; i >= 0; i--) {
    if ((scopes[i] as unknown as Record<symbol, EnvironmentContext | undefined>)[CONTEXT] !== undefined)
      return scopes[i];
  }
  return undefined;
}

/** The context of the nearest enclosing environment, or `undefined` outside one. */
export function findContext(scope: IConstruct): EnvironmentContext | undefined {
  const holder = contextScope(scope);
  return holder === undefined ? undefined : (holder as unknown as Record<symbol, EnvironmentContext>)[CONTEXT];
}

/**
 * The API version AgentPlane writes for a kind on a release: the CRD's storage version
 * (`v1beta1` on v0.5.x, `v1alpha1` on v0.4.6; `k8s/crds/*.yaml@tag`), so v0.5 objects never carry conversion annotations.
 */
export function apiVersionFor(release: LoadedRelease, kind: SandboxKind): string {
  const crd = release.facts.crds[kind];
  const storage = storageVersionOf(crd);
  if (storage === undefined) throw new Error(`release ${release.facts.tag} lists no storage version for ${kind}`);
  return `${crd.group}/${storage}`;
}
