/** Contract tests of Agent Sandbox v0.5.6 against objects its real controller wrote (test/contract/contract-suite.ts). */
import { contractSuite } from './contract-suite.js';

contractSuite('v0.5.6', { family: 'v0.5', suspendedPhase: 'Suspended', suspendedMessage: /PodTerminated|Suspended/ });
