/**
 * Contract tests of Agent Sandbox v0.4.6 against objects its real controller wrote (test/contract/contract-suite.ts).
 * The paused Sandbox (`replicas: 0`) carries Ready=True/DependenciesReady ("Pod does not exist, replicas is 0",
 * `controllers/sandbox_controller.go@v0.4.6`): the adapter must still call it Suspended.
 */
import { contractSuite } from './contract-suite.js';

contractSuite('v0.4.6', { family: 'v0.4', suspendedPhase: 'Suspended', suspendedMessage: /replicas/ });
