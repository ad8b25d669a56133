/**
 * Which objects are cluster-scoped (case chart-namespace-cluster-scoped): the constructs layer decides it while
 * rendering (src/constructs/render.ts); re-exported here for the synth API.
 */
export { isClusterScoped } from '../constructs/render.js';
export { apiGroup } from '../releases/scope.js';
