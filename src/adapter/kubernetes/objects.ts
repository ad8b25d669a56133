/**
 * Generic, shape-preserving reads and server-side applies of arbitrary Kubernetes objects.
 *
 * Why not `KubernetesObjectApi.patch/read` alone: client-node 1.4 runs every body of a kind it has a model for through
 * its typed ObjectSerializer (`src/object.ts`@1.4.0), which maps JSON keys to model attribute names. Keys whose attribute
 * name differs are silently dropped on the way out and renamed on the way in: a CustomResourceDefinition loses every
 * `default:`, `enum:` and `x-kubernetes-*` of its schema (`_default`, `_enum`, `xKubernetesIntOrString` in the model),
 * a NetworkPolicy its `from:` (`_from`). So objects of named API groups go through `CustomObjectsApi`, whose bodies are
 * untyped, with the plural found by discovery; only core-group (`v1`) objects use the typed path, whose models keep
 * every key of the kinds AgentPlane writes (Namespace, ServiceAccount, Service, ConfigMap, Secret).
 */
import * as k8s from '@kubernetes/client-node';
import type { KubeObject } from '../../releases/index.js';
import type { Result } from '../types.js';
import type { KubeClient } from './client.js';

/** Options of {@link KubeObjects.apply}. */
export interface ApplyOptions {
  /** Field manager of the apply. Default `agentplane`. */
  readonly fieldManager?: string;
  /** Take over fields owned by other managers. Default `true`. */
  readonly force?: boolean;
  /** Server-side dry run only (`dryRun=All`): nothing is persisted. Default `false`. */
  readonly dryRun?: boolean;
}

/** The identity of one object: apiVersion, kind, name and (for namespaced kinds) namespace. */
export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

/** Exposes client-node's discovery lookup (`resource()` is protected there) without its typed bodies. */
class Discovery extends k8s.KubernetesObjectApi {
  lookup(apiVersion: string, kind: string): Promise<k8s.V1APIResource | undefined> {
    return this.resource(apiVersion, kind);
  }

  /** The context's namespace as the default, as `KubernetesObjectApi.makeApiClient` sets it. */
  withDefaultNamespace(kc: k8s.KubeConfig): this {
    this.setDefaultNamespace(kc);
    return this;
  }
}

/** Reads and applies objects of any kind, keeping every key of their JSON as the API server sends and receives it. */
export class KubeObjects {
  private readonly discovery: Discovery;
  private readonly typed: k8s.KubernetesObjectApi;
  private readonly custom: k8s.CustomObjectsApi;

  constructor(private readonly client: KubeClient) {
    this.discovery = client.api(Discovery);
    this.typed = client.api(Discovery).withDefaultNamespace(client.kc);
    this.custom = client.api(k8s.CustomObjectsApi);
  }

  /**
   * Server-side applies `obj` (`application/apply-patch+yaml`). Returns the object as the server stored it (or would
   * store it, with `dryRun`); failures are classified (`failed`), never thrown.
   */
  async apply(obj: KubeObject, opts: ApplyOptions = {}): Promise<Result<KubeObject>> {
    const fieldManager = opts.fieldManager ?? 'agentplane';
    const force = opts.force ?? true;
    const dryRun = opts.dryRun ? 'All' : undefined;
    const media = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply);
    const ref = refOf(obj);
    const target = await this.locate(ref, 'patch');
    if (target.kind !== 'ok') return target;
    const { group, version, plural, namespaced } = target.value;
    const info = {
      verb: 'patch',
      resource: plural ? `${plural}${group ? `.${group}` : ''}` : obj.kind,
      contentType: k8s.PatchStrategy.ServerSideApply,
    };
    if (!group) {
      return this.client.call(
        info,
        async () =>
          (await this.typed.patch(
            obj as k8s.KubernetesObject,
            undefined,
            dryRun,
            fieldManager,
            force,
            k8s.PatchStrategy.ServerSideApply,
          )) as unknown as KubeObject,
      );
    }
    const common = {
      group,
      version,
      plural,
      name: ref.name,
      body: obj,
      fieldManager,
      force,
      ...(dryRun ? { dryRun } : {}),
    };
    return this.client.call(
      info,
      async () =>
        (namespaced
          ? await this.custom.patchNamespacedCustomObject({ ...common, namespace: ref.namespace ?? 'default' }, media)
          : await this.custom.patchClusterCustomObject(common, media)) as KubeObject,
    );
  }

  /** Reads one object; `not-found` (object or API) comes back as a classified failure. */
  async get(ref: ObjectRef): Promise<Result<KubeObject>> {
    const target = await this.locate(ref, 'get');
    if (target.kind !== 'ok') return target;
    const { group, version, plural, namespaced } = target.value;
    const info = { verb: 'get', resource: `${plural}${group ? `.${group}` : ''}` };
    if (!group) {
      const spec = {
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
      };
      return this.client.call(info, async () => (await this.typed.read(spec)) as unknown as KubeObject);
    }
    return this.client.call(
      info,
      async () =>
        (namespaced
          ? await this.custom.getNamespacedCustomObject({
              group,
              version,
              plural,
              namespace: ref.namespace ?? 'default',
              name: ref.name,
            })
          : await this.custom.getClusterCustomObject({ group, version, plural, name: ref.name })) as KubeObject,
    );
  }

  private async locate(
    ref: ObjectRef,
    verb: string,
  ): Promise<Result<{ group: string; version: string; plural: string; namespaced: boolean }>> {
    const slash = ref.apiVersion.indexOf('/');
    const group = slash < 0 ? '' : ref.apiVersion.slice(0, slash);
    const version = slash < 0 ? ref.apiVersion : ref.apiVersion.slice(slash + 1);
    const found = await this.client.call({ verb: 'discover', resource: `${ref.apiVersion} ${ref.kind}` }, () =>
      this.discovery.lookup(ref.apiVersion, ref.kind),
    );
    if (found.kind !== 'ok') return found;
    if (!found.value) {
      return {
        kind: 'failed',
        error: {
          category: 'not-found',
          missing: 'api',
          message: `cannot ${verb} ${ref.kind} ${ref.name}: the server does not serve kind ${ref.kind} in ${ref.apiVersion}`,
          hint: 'install the CRDs of this release first (apply 00-crds.yaml), or check the apiVersion',
        },
      };
    }
    return { kind: 'ok', value: { group, version, plural: found.value.name, namespaced: found.value.namespaced } };
  }
}

/** The identity of `obj`: apiVersion, kind, name and namespace. */
export function refOf(obj: KubeObject): ObjectRef {
  const ns = obj.metadata?.namespace;
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: String(obj.metadata?.name),
    ...(ns ? { namespace: ns } : {}),
  };
}
