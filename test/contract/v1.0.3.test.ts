/**
 * Contract tests of Agent Sandbox v1.0.3 against objects its real controller wrote (test/contract/contract-suite.ts):
 * v1beta1 only, no conversion (`k8s/crds/*.yaml@v1.0.3`). The suspended Sandbox reports Suspended=True/PodTerminated
 * and Ready=False/SandboxSuspended, as on v0.5.6 (`api/v1beta1/sandbox_types.go@v1.0.3`).
 */
import { contractSuite } from './contract-suite.js';

contractSuite('v1.0.3', { family: 'v1.0', suspendedPhase: 'Suspended', suspendedMessage: /PodTerminated|Suspended/ });
