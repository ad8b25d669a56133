/**
 * Probe of `template/<ns>/<name>` before any workload: discovered = the SandboxTemplate exists; compatible = it
 * validates against the pinned CRD schema of its apiVersion (unknown fields are errors; the releases layer's
 * CustomObjectValidator), else its apiVersion is the one pinned for the release; configured = its network policy
 * set-up is what the environment declares — Managed: the controller made `<template>-network-policy` owned by the
 * template (`extensions/controllers/sandboxtemplate_controller.go@v0.5.6`); Unmanaged: no such policy
 * (the environment's own policies apply) — and its runtimeClassName is the declared one. `verified` comes from the
 * workload probe.
 */
import { CustomObjectValidator, type KubeObject, type LoadedRelease } from '../../releases/index.js';
import type { ObjectMeta } from '../../adapter/kubernetes/views.js';
import type { TemplatePlan } from '../plan.js';
import type { Probe } from '../runner.js';
import { Facts, reads, shared, type ProbeDeps } from './common.js';

export function templateProbe(deps: ProbeDeps, template: TemplatePlan, loaded: LoadedRelease | undefined): Probe {
  const capability = `template/${template.namespace}/${template.name}` as const;
  return {
    id: capability,
    after: ['install'],
    covers: [capability],
    timeoutStep: 'discovered',
    deadlineMs: 15_000,
    async run() {
      const f = new Facts(capability);
      const read = reads(deps);
      const subject = `SandboxTemplate ${template.namespace}/${template.name}`;
      const r = await read.template(template.namespace, template.name);
      if (r.kind !== 'ok') return f.failedCall('discovered', subject, r).list;
      if (r.value === undefined)
        return f.add(
          'discovered',
          'missing',
          subject,
          'TemplateNotFound',
          `${subject} does not exist: apply the environment`,
        ).list;
      const tpl = r.value;
      f.proven('discovered', subject, 'TemplateFound', `${subject} exists at generation ${tpl.meta.generation}`);
      const obj = {
        apiVersion: tpl.apiVersion,
        kind: 'SandboxTemplate',
        metadata: { name: template.name, namespace: template.namespace },
        spec: tpl.spec,
      } as KubeObject;
      if (loaded) {
        const violations = CustomObjectValidator.forRelease(loaded).validate(obj);
        if (violations.length === 0)
          f.proven(
            'compatible',
            subject,
            'SchemaValid',
            `spec validates against the pinned ${deps.facts.tag} schema of ${obj.apiVersion}`,
          );
        else
          f.add(
            'compatible',
            'missing',
            subject,
            'SchemaInvalid',
            `spec does not match the pinned ${deps.facts.tag} schema: ${violations
              .slice(0, 3)
              .map((v) => `${v.path} ${v.message}`)
              .join('; ')}`,
          );
      } else {
        f.proven(
          'compatible',
          subject,
          'VersionServedSchemaUnchecked',
          `served as ${obj.apiVersion}, the version pinned for ${deps.facts.tag} (schema not checked: release files not loaded)`,
        );
      }
      const mgmt = tpl.networkPolicyManagement ?? 'Managed';
      if (mgmt !== template.networkPolicyManagement) {
        f.add(
          'configured',
          'missing',
          subject,
          'NetworkPolicyManagementDiffers',
          `networkPolicyManagement is ${mgmt}, the environment declares ${template.networkPolicyManagement}`,
          { field: 'spec.networkPolicyManagement', value: mgmt },
        );
      }
      const rcName = tpl.runtimeClassName;
      if ((rcName ?? '') !== (template.runtimeClassName ?? '')) {
        f.add(
          'configured',
          'missing',
          subject,
          'RuntimeClassNameDiffers',
          `runtimeClassName is ${rcName ?? 'unset'}, the environment declares ${template.runtimeClassName ?? 'none'}`,
          { field: 'spec.podTemplate.spec.runtimeClassName', value: rcName ?? '' },
        );
      }
      const policies = await shared(deps).templateNetworkPolicies(template.namespace);
      if (policies.kind !== 'ok')
        return f.failedCall('configured', `NetworkPolicies in ${template.namespace}`, policies).list;
      const managed = policies.value.map((p) => p.meta).find((p) => p.name === `${template.name}-network-policy`);
      const ownedByTemplate = (p: ObjectMeta): boolean =>
        p.ownerReferences.some((o) => o.kind === 'SandboxTemplate' && o.uid === tpl.meta.uid);
      if (mgmt === 'Managed') {
        if (!managed)
          f.add(
            'configured',
            'missing',
            subject,
            'ManagedPolicyMissing',
            `Managed template but NetworkPolicy ${template.name}-network-policy does not exist (the controller has not reconciled the template)`,
          );
        else if (!ownedByTemplate(managed))
          f.add(
            'configured',
            'missing',
            subject,
            'ManagedPolicyNotOwned',
            `NetworkPolicy ${template.name}-network-policy exists but is not owned by the template: the controller's reconcile fails on it (extensions/controllers/sandboxtemplate_controller.go@v0.5.6)`,
          );
        else
          f.proven(
            'configured',
            subject,
            'ManagedPolicyOwned',
            `controller-managed NetworkPolicy ${template.name}-network-policy exists, owned by the template`,
          );
      } else if (managed && ownedByTemplate(managed)) {
        f.add(
          'configured',
          'missing',
          subject,
          'UnmanagedPolicyPresent',
          `Unmanaged template still has the controller's ${template.name}-network-policy (it should be deleted on reconcile)`,
        );
      } else {
        f.proven(
          'configured',
          subject,
          'UnmanagedNoControllerPolicy',
          "Unmanaged: no controller policy; the environment's own policies apply (checked by network-isolation)",
        );
      }
      return f.list;
    },
  };
}
