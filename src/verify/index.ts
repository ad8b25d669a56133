/** Public API of the verifier layer. */
export { STEPS, fact, formatMs, type Evidence, type Step, type Verdict } from './evidence.js';
export { meets, rank, settle, type RequiredState, type Settled } from './states.js';
export {
  REPORT_SCHEMA,
  VerifyReportSchema,
  buildReport,
  type CapabilityRow,
  type Requirement,
  type VerifyReport,
} from './report.js';
export { TUPLE_KEYS, tupleLine, type CompatibilityTuple, type TupleEntry } from './tuple.js';
export { defaultRequired, requirementsFor } from './requirements.js';
export { orderProbes, runProbes, ProbeGraphError, type Probe, type ProbeRun } from './runner.js';
export {
  EnvironmentDescriptorError,
  planFromDescriptor,
  type DescriptorProblem,
  readEnvironment,
  type PlanOptions,
} from './environment.js';
export {
  DEFAULT_CONTROLLER,
  DEFAULT_SAMPLES,
  sampleSize,
  type VerifyPlan,
  type TemplatePlan,
  type WarmPoolPlan,
  type RouterPlan,
  type NetworkPolicyPlan,
  type RuntimeKind,
} from './plan.js';
export {
  checkImage,
  imageEvidence,
  registryDigest,
  splitRef,
  startedContainers,
  type ContainerImage,
  type ImageCheck,
  type SplitRef,
} from './image-digests.js';
export type { ContainerStatusView, ObjectMeta, PodView, TerminationView } from '../adapter/kubernetes/views.js';
// The client runVerify takes, and the value that connects it (the same as `/adapter`'s).
export { connect, KubeClient, type KubeConnectOptions } from '../adapter/kubernetes/client.js';
export { KubeconfigError } from '../adapter/kubernetes/errors.js';
export { imageDigestsProbe, IMAGE_DIGESTS_PROBE } from './probes/image-digests.js';
export { runVerify, planProbes, VerifyCouldNotRunError, type VerifyOptions, type VerifyResult } from './verify.js';
export {
  AdapterRuntimeProber,
  type RuntimeProber,
  type RuntimeTarget,
  type RuntimeCall,
  type ExecOutput,
} from './runtime-prober.js';
export { Workload, RUN_LABEL, MANAGED_BY } from './workload.js';
export type { ReadyProbeSandbox } from './probes/workload/handoff.js';
export {
  ClusterUnusableError,
  compatWorksheet,
  MatrixRowSchema,
  MatrixSchema,
  worksheetRows,
  type CompatWorksheet,
  type CompatWorksheetOptions,
  type Matrix,
  type WorksheetRow,
} from './compat-worksheet.js';
export type { FailedRead } from './failed-reads.js';
export {
  readReport,
  reportConfigMap,
  StoredReportError,
  writeReport,
  type ConfigMapRef,
  type ReportRun,
  type StoredReport,
} from './report-store.js';
export { renderTable } from './render/table.js';
export { renderJson } from './render/json.js';
export { renderMarkdown } from './render/markdown.js';
export { renderJunit } from './render/junit.js';
// Types the verifier's public signatures use.
export type { CapabilityName } from '../model/capabilities.js';
export type { AdapterError, TransportKind } from '../adapter/types.js';
export type { TuplePart } from '../model/compatibility.js';
export type { CustomRef } from '../adapter/kubernetes/cluster.js';
export type { ClientPlan } from './plan.js';
export type { EnvironmentSummary } from './report.js';
export type { FactInput } from './evidence.js';
export type { ProbeDeps } from './probes/common.js';
export type { RunOptions } from './runner.js';
