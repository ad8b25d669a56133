/**
 * The environment the test cluster installs for Agent Sandbox v0.4.6 (v1alpha1 only, no conversion webhook, no Go
 * router, no sandboxd — `k8s/crds/*.yaml@v0.4.6`): the pinned install alone, synthesized with AgentPlane's constructs.
 */
import { App } from 'cdk8s';
import { AgentEnvironment, loadRelease, synthesizeEnvironment } from '../../src/index.js';
import type { KubeObject } from '../kube.js';

/** The synthesized objects of the environment, in apply order. @throws the release loader's and synthesis' errors. */
export async function synthesizeInstall(): Promise<KubeObject[]> {
  const release = await loadRelease('v0.4.6');
  const env = new AgentEnvironment(new App(), 'test-cluster-v046', { release, defaultNamespace: 'agentplane-smoke' });
  return synthesizeEnvironment(env).objects.map((o) => o.object as unknown as KubeObject);
}
