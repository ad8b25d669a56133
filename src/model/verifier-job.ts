/**
 * What the VerifierJob construct and the CLI running inside it agree on: where the descriptor is mounted and where the
 * report goes. Here, not in constructs/, so the CLI reads them without loading cdk8s.
 */

/** Name of the ConfigMap the Job writes its report to; its key is {@link REPORT_KEY}. */
export const REPORT_CONFIGMAP = 'agentplane-verify-report';
export const REPORT_KEY = 'report.json';
/** Where the descriptor ConfigMap(s) are mounted in the Job's pod; parts go under `parts/<ConfigMap name>`. */
export const DESCRIPTOR_MOUNT = '/etc/agentplane/descriptor';

/**
 * The `<namespace>/<name>` of the report ConfigMap a synthesized VerifierJob among `objects` writes (the
 * `--report-configmap` argument this construct gives it), or undefined when none of them is one.
 */
export function reportConfigMapOfObjects(objects: readonly unknown[]): string | undefined {
  for (const o of objects) {
    const job = o as { kind?: string; spec?: { template?: { spec?: { containers?: Array<{ args?: string[] }> } } } };
    if (job?.kind !== 'Job') continue;
    const args = job.spec?.template?.spec?.containers?.[0]?.args ?? [];
    const i = args.indexOf('--report-configmap');
    if (args.includes('--in-cluster') && i >= 0 && args[i + 1]) return args[i + 1];
  }
  return undefined;
}
