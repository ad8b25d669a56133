/**
 * Contract tests of Agent Sandbox v0.5.0 against objects its real controller wrote (test/contract/contract-suite.ts);
 * fixtures from `cluster:up -- --release v0.5.0` + `scripts/gen-fixtures.ts --release v0.5.0`.
 */
import { contractSuite } from './contract-suite.js';

contractSuite('v0.5.0', { family: 'v0.5', suspendedPhase: 'Suspended', suspendedMessage: /PodTerminated|Suspended/ });
