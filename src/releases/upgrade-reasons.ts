/**
 * The `reason` of every `plan-upgrade` finding ({@link UpgradeFinding}), with what it means. `UpgradeFinding.reason`
 * is typed by this map; docs/reference/reasons.md is generated from it.
 */
import type { SchemaChangeKind } from './schema-diff.js';

/** `Schema<Change>`: one per {@link SchemaChangeKind}. */
const SCHEMA_REASONS = {
  SchemaFieldAdded: 'the target release adds a field to a CRD version',
  SchemaFieldRemoved: 'the target release removes a field: objects that set it lose it',
  SchemaFieldRenamed: 'the target release renames a field (removed and added with the same schema)',
  SchemaTypeChanged: "a field's type changes: stored values may no longer validate",
  SchemaDefaultChanged: "a field's default changes: objects that leave it unset change behaviour",
  SchemaEnumChanged: "a field's allowed values change",
  SchemaRequiredChanged: 'the set of required fields changes',
  SchemaValidationChanged: 'a validation rule (pattern, bounds, CEL) changes',
  SchemaVersionAdded: 'the target release serves a new CRD version',
  SchemaVersionRemoved: 'the target release drops a CRD version: clients of it break',
  SchemaServedChanged: 'a CRD version stops or starts being served',
  SchemaStorageChanged: 'the storage version of a CRD changes',
  SchemaDeprecatedChanged: 'a CRD version is newly deprecated (or no longer)',
  SchemaSubresourceChanged: 'the status or scale subresource changes',
  SchemaPrinterColumnAdded: 'kubectl get shows a new column',
  SchemaPrinterColumnRemoved: 'kubectl get loses a column',
  SchemaPrinterColumnChanged: 'a kubectl get column changes',
  SchemaConversionChanged: "the CRD's conversion strategy changes (the webhook added or removed)",
} as const satisfies Record<`Schema${PascalCase<SchemaChangeKind>}`, string>;

type PascalCase<S extends string> = S extends `${infer H}-${infer T}`
  ? `${Capitalize<H>}${PascalCase<T>}`
  : Capitalize<S>;

export const UPGRADE_REASONS = {
  ...SCHEMA_REASONS,
  ConditionsNotCatalogued: "a release's condition types and reasons are not catalogued, so changes to them are unknown",
  ConditionAdded: 'the target release sets a condition type the current one does not',
  ConditionRemoved: 'the target release no longer sets a condition type clients may wait on',
  ConditionReasonsChanged: 'the reasons a condition can carry change',
  Downgrade: 'the target release is older than the current one',
  StoredVersionNotServed: 'objects are stored at a version the target release does not serve: they become unreadable',
  StorageVersionChanged: 'the storage version changes: objects are rewritten on their next write',
  StoredVersionsStale: 'storedVersions lists versions no object may still use; migrate-storage prunes them',
  IntermediateRelease: 'the upgrade must pass through a release that serves both sides',
  ClaimPoolMissing: 'claims name a warm pool that does not exist, so they cannot be served after the upgrade',
  BlockingDefectUnread: 'whether a known defect blocks this upgrade could not be read from the cluster',
  BlockingDefectInactive: 'a known defect of the path does not apply to this cluster',
  BlockingDefectAccepted: 'a known defect of the path applies and was accepted with --accept',
  BlockingDefectActive: 'a known defect of the path applies and blocks the upgrade',
  MigrationAdvised: 'a storage migration is advised before or after this upgrade',
  KnownDefect: 'a release on the path has a known defect (the message says what it affects)',
  AlphaClientsBreak: 'clients of v1alpha1 break: the target release serves v1beta1 only',
  ConversionWebhookRemoved: 'the conversion webhook goes away with the target release',
  CrdsBeforeController: 'the CRDs must be applied before the new controller starts',
  WebhookFlagsRemoved: "the controller's webhook flags no longer exist in the target release",
  OrphanedWebhookObjects: 'the webhook Service, certificate Secret and RBAC are left behind unless deleted',
} as const;

/** The `reason` of a plan-upgrade finding. */
export type UpgradeReason = keyof typeof UPGRADE_REASONS;

/** The finding reason of a schema change kind (`field-removed` -> `SchemaFieldRemoved`). */
export function schemaReason(change: SchemaChangeKind): UpgradeReason {
  return `Schema${change
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('')}` as keyof typeof SCHEMA_REASONS;
}
