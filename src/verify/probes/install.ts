/**
 * Probe of the installed APIs: `sandbox-api`, `extensions-api` and `conversion` from the live CRDs, judged against the
 * pinned release facts (served/storage versions per kind, `k8s/crds/*.yaml@{v0.4.6,v0.5.0,v0.5.6,v1.0.3}`).
 *
 * - discovered: the CRD objects exist;
 * - compatible: served and storage versions equal the pinned ones (and the install's `app.kubernetes.io/version`
 *   label, when set, names the pinned release);
 * - configured (sandbox-api): Established=True, and on v0.5 a conversion webhook with a non-empty caBundle (on v0.4
 *   and v1.0, no webhook left behind);
 *   (extensions-api): see the controller probe (`--extensions`), which adds its own evidence;
 * - conversion (v0.5 only; `unsupported` on v0.4 and v1.0, which serve one version and convert nothing): discovered = strategy Webhook on all four
 *   CRDs; compatible = client config names the pinned Service `agent-sandbox-system/agent-sandbox-webhook-service`
 *   path `/convert` (a `url:` config, used for out-of-cluster controllers, is reported as such); configured = every
 *   caBundle non-empty (`cmd/agent-sandbox-controller/tls.go@v0.5.6` patches it in at start-up).
 * `verified` for all three comes from the workload probe.
 */
import type { CapabilityName } from '../../adapter/types.js';
import type { SandboxKind } from '../../releases/index.js';
import { FAMILY_VERSION, familyConverts, type ReleaseFamily } from '../../model/releases.js';
import { VERSION_LABEL } from '../../adapter/kubernetes/resources.js';
import type { CrdView } from '../../adapter/kubernetes/views.js';
import type { Evidence } from '../evidence.js';
import type { Probe } from '../runner.js';
import { Facts, shared, type ProbeDeps } from './common.js';

const CORE: readonly SandboxKind[] = ['Sandbox'];
const EXTENSIONS: readonly SandboxKind[] = ['SandboxClaim', 'SandboxTemplate', 'SandboxWarmPool'];

/** The pinned Service the conversion webhook must name (`k8s/crds/*.yaml@v0.5.6`). */
export const WEBHOOK_SERVICE = {
  name: 'agent-sandbox-webhook-service',
  namespace: 'agent-sandbox-system',
  path: '/convert',
} as const;

export function installProbe(deps: ProbeDeps): Probe {
  const covers: CapabilityName[] = ['sandbox-api', 'extensions-api', 'conversion'];
  return {
    id: 'install',
    after: [],
    covers,
    timeoutStep: 'discovered',
    deadlineMs: 15_000,
    async run() {
      const { facts } = deps;
      const live = new Map<SandboxKind, CrdView>();
      const out: Evidence[] = [];
      const api = (capability: 'sandbox-api' | 'extensions-api', kinds: readonly SandboxKind[]) => ({
        capability,
        kinds,
        f: new Facts(capability),
      });
      const groups = [api('sandbox-api', CORE), api('extensions-api', EXTENSIONS)];
      // The four CRD reads at once; judged below in the order of the groups.
      const reading = new Map(
        [...CORE, ...EXTENSIONS].map((kind) => [kind, shared(deps).crd(facts.crds[kind].crdName)]),
      );
      for (const { kinds, f } of groups) {
        let allThere = true;
        for (const kind of kinds) {
          const pinned = facts.crds[kind];
          const subject = `CustomResourceDefinition/${pinned.crdName}`;
          const r = await reading.get(kind)!;
          if (r.kind !== 'ok') {
            f.failedCall('discovered', subject, r);
            allThere = false;
            continue;
          }
          if (r.value === undefined) {
            f.add('discovered', 'missing', subject, 'CrdNotInstalled', `CRD ${pinned.crdName} is not installed`);
            allThere = false;
            continue;
          }
          const v = r.value;
          live.set(kind, v);
          f.proven('discovered', subject, 'CrdFound', `CRD ${pinned.crdName} exists`);
          const wantServed = pinned.versions
            .filter((x) => x.served)
            .map((x) => x.name)
            .sort();
          const wantStorage = pinned.versions.find((x) => x.storage)?.name;
          const sameServed = wantServed.join(',') === v.served.join(',');
          if (sameServed && wantStorage === v.storage) {
            f.proven(
              'compatible',
              subject,
              'VersionsPinned',
              `${kind} serves ${v.served.join(', ')} with storage ${v.storage}, as pinned for ${facts.tag}`,
              { field: 'spec.versions', value: v.served.join(',') },
            );
          } else {
            f.add(
              'compatible',
              'missing',
              subject,
              'VersionsDiffer',
              `${kind} serves ${v.served.join(', ') || 'nothing'} (storage ${v.storage ?? 'none'}) but ${facts.tag} pins ${wantServed.join(', ')} (storage ${wantStorage}); install the pinned release or verify against the live one`,
              { field: 'spec.versions', value: v.served.join(',') },
            );
          }
          if (v.versionLabel !== undefined && v.versionLabel !== facts.tag) {
            f.add(
              'compatible',
              'missing',
              subject,
              'ReleaseLabelDiffers',
              `the install label ${VERSION_LABEL}=${v.versionLabel} names another release than the environment's ${facts.tag}`,
              { field: `metadata.labels.${VERSION_LABEL}`, value: v.versionLabel },
            );
          }
          if (v.established)
            f.proven('configured', subject, 'CrdEstablished', `${kind} CRD is Established`, {
              field: 'status.conditions[Established]',
              value: 'True',
            });
          else
            f.add('configured', 'missing', subject, 'CrdNotEstablished', `${kind} CRD is not Established yet`, {
              field: 'status.conditions[Established]',
            });
          if (!familyConverts(facts.family) && v.strategy === 'Webhook')
            f.add(
              'configured',
              'missing',
              subject,
              'ConversionWebhookLeftover',
              `${kind} CRD still converts through a webhook, but ${facts.tag} ships none (k8s/crds/*.yaml@${facts.tag}): reads that need conversion fail; apply the pinned CRDs`,
              { field: 'spec.conversion.strategy', value: v.strategy },
            );
          if (familyConverts(facts.family)) {
            if (v.strategy !== 'Webhook')
              f.add(
                'configured',
                'missing',
                subject,
                'ConversionStrategyDiffers',
                `${kind} CRD conversion strategy is ${v.strategy}, pinned is Webhook`,
                { field: 'spec.conversion.strategy', value: v.strategy },
              );
            else if (!v.caBundle)
              f.add(
                'configured',
                'missing',
                subject,
                'NoCaBundle',
                `${kind} CRD conversion webhook has no caBundle: the controller has not started (or cannot patch CRDs), so v1alpha1 reads will fail`,
                { field: 'spec.conversion.webhook.clientConfig.caBundle', value: 'empty' },
              );
          }
        }
        if (!allThere)
          f.add('discovered', 'missing', 'install', 'CrdNotInstalled', `not every ${f.capability} CRD is installed`);
        out.push(...f.list);
      }
      out.push(...conversionEvidence(facts.family, facts.tag, live));
      return out;
    },
  };
}

/** Evidence for `conversion` from the live CRD views (pure; exported for tests). */
export function conversionEvidence(
  family: ReleaseFamily,
  tag: string,
  live: ReadonlyMap<SandboxKind, CrdView>,
): Evidence[] {
  const f = new Facts('conversion');
  if (!familyConverts(family)) {
    const serves = FAMILY_VERSION[family];
    return f.add(
      'discovered',
      'unsupported',
      `release ${tag}`,
      'ReleaseHasNoConversion',
      `release ${tag} serves ${serves} only and has no conversion webhook (k8s/crds/*.yaml@${tag}): nothing to convert`,
    ).list;
  }
  const kinds: SandboxKind[] = [...CORE, ...EXTENSIONS];
  for (const kind of kinds) {
    const v = live.get(kind);
    const subject = `CRD of ${kind}`;
    if (v === undefined) {
      f.add(
        'discovered',
        'missing',
        subject,
        'CrdNotReadable',
        `${kind} CRD not readable, so its conversion cannot be judged`,
      );
      continue;
    }
    if (v.strategy !== 'Webhook') {
      f.add(
        'discovered',
        'missing',
        subject,
        'ConversionStrategyDiffers',
        `${kind} conversion strategy is ${v.strategy}; ${tag} needs Webhook to serve v1alpha1`,
        { field: 'spec.conversion.strategy', value: v.strategy },
      );
      continue;
    }
    f.proven('discovered', subject, 'WebhookConversion', `${kind} converts through a webhook`, {
      field: 'spec.conversion.strategy',
      value: 'Webhook',
    });
    if (v.service) {
      const same =
        v.service.name === WEBHOOK_SERVICE.name &&
        v.service.namespace === WEBHOOK_SERVICE.namespace &&
        (v.service.path ?? '/') === WEBHOOK_SERVICE.path;
      const shown = `${v.service.namespace}/${v.service.name}${v.service.path ?? ''}`;
      if (same)
        f.proven('compatible', subject, 'WebhookServicePinned', `${kind} webhook is the pinned Service ${shown}`, {
          field: 'spec.conversion.webhook.clientConfig.service',
          value: shown,
        });
      else
        f.add(
          'compatible',
          'missing',
          subject,
          'WebhookServiceDiffers',
          `${kind} webhook points at ${shown}, pinned is ${WEBHOOK_SERVICE.namespace}/${WEBHOOK_SERVICE.name}${WEBHOOK_SERVICE.path}`,
          { field: 'spec.conversion.webhook.clientConfig.service', value: shown },
        );
    } else if (v.url) {
      f.proven(
        'compatible',
        subject,
        'WebhookUrl',
        `${kind} webhook is a URL (${v.url}): an out-of-cluster controller serves conversion`,
        { field: 'spec.conversion.webhook.clientConfig.url', value: v.url },
      );
    } else {
      f.add('compatible', 'missing', subject, 'NoWebhookClientConfig', `${kind} webhook has no client config`, {
        field: 'spec.conversion.webhook.clientConfig',
      });
    }
    if (v.caBundle)
      f.proven('configured', subject, 'CaBundleSet', `${kind} webhook carries a caBundle`, {
        field: 'spec.conversion.webhook.clientConfig.caBundle',
        value: 'set',
      });
    else
      f.add(
        'configured',
        'missing',
        subject,
        'NoCaBundle',
        `${kind} webhook has no caBundle: the controller has not patched it (not started, or --manage-webhook-certs=false without an injector)`,
        { field: 'spec.conversion.webhook.clientConfig.caBundle', value: 'empty' },
      );
  }
  return f.list;
}
