/**
 * Cluster-scoped objects and a chart namespace (case chart-namespace-cluster-scoped). cdk8s stamps a Chart's
 * `namespace` on every ApiObject without one, cluster-scoped or not. Inside an AgentEnvironment the environment's
 * rendering drops it from cluster-scoped objects (render.ts); a construct that writes cluster-scoped objects in a plain
 * Chart with a namespace is refused, since nothing would drop it there and the API server rejects or misfiles them.
 */
import type { Construct } from 'constructs';
import { Chart } from './cdk8s.js';
import { findContext } from './context.js';
import { ConstructError } from './errors.js';

/**
 * @throws ConstructError (`ClusterScopedInNamespacedChart`) when `construct`, which writes the cluster-scoped `kinds`,
 *   is in a Chart with a namespace outside any AgentEnvironment.
 */
export function refuseChartNamespace(construct: Construct, kinds: readonly string[]): void {
  if (findContext(construct) !== undefined) return;
  const namespace = Chart.of(construct).namespace;
  if (namespace === undefined) return;
  throw new ConstructError(
    construct.node.path,
    `it writes the cluster-scoped ${kinds.join(', ')}, and its Chart ${Chart.of(construct).node.path} has namespace ${JSON.stringify(namespace)}, which cdk8s would stamp on them`,
    'create it in a Chart without namespace, or inside an AgentEnvironment (which writes cluster-scoped objects without one)',
    'ClusterScopedInNamespacedChart',
  );
}
