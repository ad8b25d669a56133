/**
 * AgentSandboxInstall: the pinned Agent Sandbox install, assembled the way upstream's all-in-one asset is
 * (`k8s/kustomization.yaml@v0.5.6`, `dev/tools/release@tag`): the core files, then the extension files, with the
 * controller Deployment declared once (the extensions copy in `k8s/extensions.controller.yaml@tag` is folded into the
 * core Deployment: its extra args such as `--extensions`, ports, volume mounts and volumes), the `ko://` placeholder
 * replaced by the release image, and every object stamped with the release tag and commit (case
 * duplicate-controller-deployment).
 */
import type { ApiObject } from './cdk8s.js';
import { Construct } from 'constructs';
import { sameCopies } from './package-copies.js';
import { z } from 'zod';
import type { KubeObject, LoadedRelease } from '../releases/index.js';
import {
  applyControllerSettings,
  ControllerDeploymentSchema,
  type ControllerDeploymentProps,
} from './controller-deployment.js';
import { refuseChartNamespace } from './cluster-scope.js';
import { findContext } from './context.js';
import {
  ControllerRbacSchema,
  scopeControllerRbac,
  type ControllerRbacScope,
  type ControllerResource,
  type NarrowedResource,
  type SourcedObject,
} from './controller-rbac.js';
import { UnsupportedByReleaseError } from './errors.js';
import { assertPinned } from './images.js';
import { ANNOTATION_SYNC_OPTIONS } from './metadata.js';
import { isPlainObject } from '../model/objects.js';
import { familyConverts } from '../model/releases.js';
import { flagsUnknownTo } from './controller-flags.js';
import { addObject, child, list, podContainers, stampRelease, type Json } from './kube-object.js';
import { parseProps } from './props.js';

/** Where the conversion webhook's serving certificate comes from. */
export type CertificateMode =
  /** The controller creates and stores a self-signed CA + cert and patches the CRDs' caBundle (upstream default). */
  | 'controller'
  /**
   * An external issuer (e.g. cert-manager) provides Secret `secretName` (keys `tls.crt`, `tls.key`), mounted at the
   * controller's `--webhook-cert-dir`; the controller runs with `--manage-webhook-certs=false` (`cmd/agent-sandbox-controller/tls.go@v0.5.6`).
   * `injectCaFrom` (`<namespace>/<Certificate>`) is written as `cert-manager.io/inject-ca-from` on the four CRDs.
   */
  | {
      readonly external: {
        readonly secretName: string;
        /** @default - none (no `cert-manager.io/inject-ca-from` annotation) */
        readonly injectCaFrom?: string;
      };
    };

/** Props of {@link AgentSandboxInstall}. */
export interface AgentSandboxInstallProps {
  /** The verified release (from `loadRelease`). Required. */
  readonly release: LoadedRelease;
  /**
   * Install the extension CRDs (SandboxTemplate, SandboxWarmPool, SandboxClaim) and run the controller with `--extensions`.
   * @default true
   */
  readonly extensions?: boolean;
  /**
   * Registry (and path prefix) that replaces `registry.k8s.io` in the controller image, e.g. `mirror.example.com/k8s`
   * gives `mirror.example.com/k8s/agent-sandbox/agent-sandbox-controller:<tag>`.
   * @default - none (`registry.k8s.io`)
   */
  readonly registryMirror?: string;
  /**
   * Digest of the controller image, `sha256:<64 hex>`, appended as `@<digest>`.
   * @default - none (tag only)
   */
  readonly controllerDigest?: string;
  /**
   * Webhook certificates, for releases with a conversion webhook (v0.5): `external` is refused where the release has no
   * `--manage-webhook-certs` flag (v0.5.0), and any value is refused on releases without a webhook (v0.4.6, v1.0.3).
   * @default 'controller' (on v0.5; none elsewhere)
   */
  readonly certificates?: CertificateMode;
  /**
   * Refuse images without a digest.
   * @default - the enclosing environment's `requireDigests`, else `false`
   */
  readonly requireDigests?: boolean;
  /**
   * Scope of the controller's rights per resource of its pinned ClusterRoles (`k8s/rbac.generated.yaml@tag`,
   * `k8s/extensions-rbac.generated.yaml@tag`; see {@link AgentSandboxInstall.controllerResources}). Key: the resource's
   * plural name, compared without case (`networkPolicies` = `networking.k8s.io/networkpolicies`; subresources such as
   * `sandboxes/status` go with their resource). Value: `'cluster'` (as pinned), `'namespace:<ns>'` or a list of them.
   *
   * Only a resource the controller neither lists nor watches may be narrowed (on v0.4.6–v0.5.6: `events`); its rules then
   * move from the ClusterRole to a Role + RoleBinding `<clusterRole>-namespaced` in each namespace, and the controller's
   * events elsewhere (e.g. leader election in its own namespace) are refused. No release has a flag restricting the
   * controller's watch to namespaces (`cmd/agent-sandbox-controller/main.go@tag`), so narrowing a watched resource (e.g.
   * `networkPolicies`) or a cluster-scoped one (`customResourceDefinitions`) fails (case controller-rbac-gaps).
   * @default {} (every resource as pinned, output unchanged)
   */
  readonly rbac?: Readonly<Record<string, ControllerRbacScope>>;
  /**
   * The controller Deployment's replicas, resources, scheduling, pod metadata, image pull secrets, priority class and
   * extra flags, each mirroring a key of upstream's Helm values (see {@link ControllerDeploymentProps}).
   * @default {} (the Deployment as pinned)
   */
  readonly controller?: ControllerDeploymentProps;
}

const PropsSchema = z
  .object({
    release: z.custom<LoadedRelease>(
      (v) => isPlainObject(v) && 'facts' in v && 'objects' in v,
      'must be a LoadedRelease from loadRelease()',
    ),
    extensions: z.boolean().default(true),
    registryMirror: z
      .string()
      .regex(
        /^[a-z0-9.-]+(:[0-9]+)?(\/[a-z0-9._-]+)*$/,
        'must be a registry host with optional port and path, without scheme or trailing slash',
      )
      .optional(),
    controllerDigest: z
      .string()
      .regex(/^sha256:[0-9a-f]{64}$/, 'must be sha256:<64 lowercase hex>')
      .optional(),
    certificates: z
      .union([
        z.literal('controller'),
        z
          .object({
            external: z
              .object({
                secretName: z.string().min(1),
                injectCaFrom: z
                  .string()
                  .regex(/^[^/]+\/[^/]+$/, 'must be <namespace>/<certificate>')
                  .optional(),
              })
              .strict(),
          })
          .strict(),
      ])
      .default('controller'),
    requireDigests: z.boolean().optional(),
    rbac: ControllerRbacSchema,
    controller: ControllerDeploymentSchema,
  })
  .strict();

/**
 * CRDs whose pinned manifest is larger than this (256 KiB) are marked `argocd.argoproj.io/sync-options: ServerSideApply=true`
 * and must be applied with `kubectl apply --server-side`: client-side apply copies the object into an annotation limited to
 * 262144 bytes (case crd-annotation-too-long; v0.5.x Sandbox and SandboxTemplate CRDs are ~393 KB and ~407 KB).
 */
export const SERVER_SIDE_APPLY_THRESHOLD = 256 * 1024;

const CONTROLLER_DEPLOYMENT = 'agent-sandbox-controller';
const EXTENSIONS_CONTROLLER_FILE = 'k8s/extensions.controller.yaml';
/** `--webhook-cert-dir` default (`cmd/agent-sandbox-controller/main.go@v0.5.6`). */
const WEBHOOK_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs';

function isControllerDeployment(obj: KubeObject): boolean {
  return obj.kind === 'Deployment' && obj.metadata?.name === CONTROLLER_DEPLOYMENT;
}

function podSpecOf(deployment: Json): Json {
  return child(child(child(deployment, 'spec'), 'template'), 'spec');
}

function containerNamed(podSpec: Json, name: string): Json {
  const found = list(podSpec, 'containers').find((c) => isPlainObject(c) && c['name'] === name);
  if (!isPlainObject(found)) throw new Error(`controller Deployment has no container ${name}`);
  return found;
}

function mergeByName(target: unknown[], extra: unknown[]): void {
  for (const item of extra) {
    if (!isPlainObject(item)) continue;
    if (!target.some((t) => isPlainObject(t) && t['name'] === item['name'])) target.push(structuredClone(item));
  }
}

/** Folds the extensions copy of the controller Deployment into the core one: args, ports, mounts, volumes it adds. */
function foldExtensionsController(core: Json, ext: Json): void {
  const corePod = podSpecOf(core);
  const extPod = podSpecOf(ext);
  const coreC = containerNamed(corePod, CONTROLLER_DEPLOYMENT);
  const extC = containerNamed(extPod, CONTROLLER_DEPLOYMENT);
  const args = list(coreC, 'args');
  for (const a of list(extC, 'args')) if (!args.includes(a)) args.push(a);
  mergeByName(list(coreC, 'ports'), list(extC, 'ports'));
  mergeByName(list(coreC, 'volumeMounts'), list(extC, 'volumeMounts'));
  mergeByName(list(corePod, 'volumes'), list(extPod, 'volumes'));
  for (const key of ['ports', 'volumeMounts'] as const) if (list(coreC, key).length === 0) delete coreC[key];
  if (list(corePod, 'volumes').length === 0) delete corePod['volumes'];
}

/**
 * The pinned install of one release. Objects: Namespace `agent-sandbox-system`, controller ServiceAccount, RBAC,
 * Services, the controller Deployment (exactly one), the CRDs (Sandbox; plus the three extension CRDs with `extensions`).
 *
 * The CRDs are most of an environment's bytes (about 1.4 MB of a `Testing.synth` snapshot) and are pinned by the
 * release's checksums already: a snapshot test leaves them out with
 * `Testing.synth(env).filter((o) => o.kind !== 'CustomResourceDefinition')` (docs/testing.md).
 *
 * @throws ConstructPropsError on invalid props (including an `rbac` key that names no resource of the controller's
 *   ClusterRoles; the message lists the valid keys); UnsupportedByReleaseError for any certificates setting on a release
 *   without a conversion webhook, or external certificates without `--manage-webhook-certs`; RbacNarrowingError for an `rbac` narrowing the controller cannot run with;
 *   UnpinnedImageError when an image stays unpinned (e.g. digest required but not given).
 */
export class AgentSandboxInstall extends Construct {
  /** Namespace of the controller, from `k8s/controller.yaml@tag` (`agent-sandbox-system`). */
  readonly namespace: string;
  /** The controller image written into the Deployment. */
  readonly controllerImage: string;
  readonly extensions: boolean;
  /** Where the webhook certificate comes from; `none` on releases without a conversion webhook (v0.4.6, v1.0.3). */
  readonly certificates: 'controller' | 'external' | 'none';
  readonly release: LoadedRelease;
  /** The objects of the install in assembly order. */
  readonly objects: readonly ApiObject[];
  /** Names of the CRDs marked for server-side apply (pinned file over {@link SERVER_SIDE_APPLY_THRESHOLD} bytes). */
  readonly serverSideApply: readonly string[];
  /** The resources of the controller's pinned ClusterRoles (the keys of the `rbac` prop), sorted by key, as pinned. */
  readonly controllerResources: readonly ControllerResource[];
  /** Namespaces that hold the controller's Roles made by narrowing `rbac` (none by default), sorted. */
  readonly rbacNamespaces: readonly string[];
  /** The resources the `rbac` prop narrowed to namespaces (empty by default). */
  readonly narrowedResources: readonly NarrowedResource[];

  constructor(scope: Construct, id: string, props: AgentSandboxInstallProps) {
    super(sameCopies(scope, id), id);
    findContext(this)?.assertOpen(this);
    refuseChartNamespace(this, ['CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'Namespace']);
    const p = parseProps(this, 'AgentSandboxInstall', PropsSchema, props);
    const release = p.release;
    const facts = release.facts;
    this.release = release;
    this.extensions = p.extensions;
    const requireDigests = p.requireDigests ?? findContext(this)?.requireDigests ?? false;

    if (props.certificates !== undefined && !familyConverts(facts.family)) {
      throw new UnsupportedByReleaseError(
        this.node.path,
        'certificates',
        facts.tag,
        `certificates is set (${JSON.stringify(props.certificates)}), but ${facts.tag} has no conversion webhook and so no webhook certificates (k8s/crds/*.yaml@${facts.tag}: no spec.conversion)`,
        'drop the certificates setting on this release',
      );
    }
    const external = p.certificates === 'controller' ? undefined : p.certificates.external;
    this.certificates = !familyConverts(facts.family) ? 'none' : external === undefined ? 'controller' : 'external';
    if (external !== undefined && !facts.hasManageWebhookCertsFlag) {
      throw new UnsupportedByReleaseError(
        this.node.path,
        'certificates.external',
        facts.tag,
        `certificates: external is not possible on ${facts.tag}: its controller has no --manage-webhook-certs flag (cmd/agent-sandbox-controller/main.go@${facts.tag})`,
        'use certificates: "controller" on this release, or pin v0.5.6',
      );
    }

    const mirrorBase =
      p.registryMirror === undefined
        ? facts.controllerImage
        : facts.controllerImage.replace(/^registry\.k8s\.io/, p.registryMirror);
    this.controllerImage = p.controllerDigest === undefined ? mirrorBase : `${mirrorBase}@${p.controllerDigest}`;

    const files = [...facts.coreAssetOrder, ...(p.extensions ? facts.extensionsAssetOrder : [])];
    const assembled: Json[] = [];
    const sourced: SourcedObject[] = [];
    let controller: Json | undefined;
    let namespace: string | undefined;
    for (const file of files) {
      const objs = release.objects.get(file);
      if (objs === undefined)
        throw new Error(`release ${facts.tag} has no parsed objects for ${file}; loadRelease should have failed`);
      for (const obj of objs) {
        if (isControllerDeployment(obj)) {
          if (controller === undefined) {
            controller = structuredClone(obj) as Json;
            assembled.push(controller);
            sourced.push({ file, obj: controller });
          } else if (file === EXTENSIONS_CONTROLLER_FILE) {
            foldExtensionsController(controller, obj as Json);
          } else {
            assembled.push(structuredClone(obj) as Json); // a second copy from elsewhere: left in, the synth duplicate check names it
          }
          continue;
        }
        if (obj.kind === 'Namespace' && namespace === undefined) namespace = obj.metadata?.name;
        const copy = structuredClone(obj) as Json;
        assembled.push(copy);
        sourced.push({ file, obj: copy });
      }
    }
    if (controller === undefined)
      throw new Error(`release ${facts.tag}: no ${CONTROLLER_DEPLOYMENT} Deployment in ${files.join(', ')}`);
    if (namespace === undefined) throw new Error(`release ${facts.tag}: no Namespace in ${files.join(', ')}`);
    this.namespace = namespace;

    const serviceAccount = podSpecOf(controller)['serviceAccountName'];
    if (typeof serviceAccount !== 'string')
      throw new Error(`release ${facts.tag}: the ${CONTROLLER_DEPLOYMENT} Deployment names no serviceAccountName`);
    const rbac = scopeControllerRbac({
      path: this.node.path,
      tag: facts.tag,
      objects: sourced,
      serviceAccount,
      namespace,
      scopes: p.rbac,
    });
    this.controllerResources = rbac.resources;
    this.rbacNamespaces = rbac.namespaces;
    this.narrowedResources = rbac.narrowed;
    assembled.push(...rbac.added);

    const containers = podContainers(podSpecOf(controller));
    const controllerContainer = containerNamed(podSpecOf(controller), CONTROLLER_DEPLOYMENT);
    if (external !== undefined) {
      list(controllerContainer, 'args').push('--manage-webhook-certs=false');
      list(controllerContainer, 'volumeMounts').push({
        name: 'webhook-certs',
        mountPath: WEBHOOK_CERT_DIR,
        readOnly: true,
      });
      list(podSpecOf(controller), 'volumes').push({
        name: 'webhook-certs',
        secret: { secretName: external.secretName },
      });
    }
    for (const c of containers) {
      if (typeof c['image'] === 'string' && c['image'].startsWith(facts.controllerImagePlaceholder))
        c['image'] = this.controllerImage;
    }
    applyControllerSettings(controller, controllerContainer, p.controller, props.controller ?? {});
    const unknownFlags = flagsUnknownTo(facts.tag, list(controllerContainer, 'args') as string[]);
    if (unknownFlags.length > 0)
      throw new UnsupportedByReleaseError(
        this.node.path,
        'controller.extraArgs',
        facts.tag,
        `the controller of ${facts.tag} does not define ${unknownFlags.join(', ')} and would exit at start (cmd/agent-sandbox-controller/main.go@${facts.tag})`,
        `remove ${unknownFlags.join(', ')} from controller.extraArgs on this release`,
      );

    const largeCrds = new Set(
      Object.values(facts.crds)
        .filter((crd) => (release.files.get(crd.file)?.length ?? 0) > SERVER_SIDE_APPLY_THRESHOLD)
        .map((crd) => crd.crdName),
    );
    const ssa: string[] = [];
    const objects: ApiObject[] = [];
    for (const obj of assembled) {
      stampRelease(obj, facts.tag, facts.commit);
      const name = String(child(obj, 'metadata')['name']);
      if (obj['kind'] === 'CustomResourceDefinition' && largeCrds.has(name)) {
        child(child(obj, 'metadata'), 'annotations')[ANNOTATION_SYNC_OPTIONS] = 'ServerSideApply=true';
        ssa.push(name);
      }
      if (obj['kind'] === 'CustomResourceDefinition' && external?.injectCaFrom !== undefined) {
        child(child(obj, 'metadata'), 'annotations')['cert-manager.io/inject-ca-from'] = external.injectCaFrom;
      }
      if (obj['kind'] === 'Deployment') {
        const tmplMeta = child(child(child(obj, 'spec'), 'template'), 'metadata');
        child(tmplMeta, 'labels')['app.kubernetes.io/version'] = facts.tag;
        for (const c of podContainers(podSpecOf(obj))) {
          assertPinned(
            this.node.path,
            `Deployment ${String(child(obj, 'metadata')['name'])} container ${String(c['name'])}`,
            String(c['image'] ?? ''),
            requireDigests,
          );
        }
      }
      objects.push(addObject(this, obj as KubeObject));
    }
    this.objects = objects;
    this.serverSideApply = ssa;
  }
}
