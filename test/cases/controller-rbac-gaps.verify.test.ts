/**
 * Case controller-rbac-gaps (verifier side): the rights the verifier checks by SubjectAccessReview come from the pinned
 * release's generated RBAC plus known upstream gaps, so a v0.5.0 install (no core-group `events` create, fixed in
 * v0.5.6 by kubernetes-sigs/agent-sandbox#1080) is checked for it. The SubjectAccessReviews themselves run against the
 * real API server in test/cluster/verify/verify-controller.test.ts.
 */
import { loadRelease } from '../../src/releases/index.js';
import { controllerNeeds, describeNeed } from '../../src/verify/probes/controller.js';
import { MIRROR } from '../mirror.js';

describe('case controller-rbac-gaps (verifier)', () => {
  test('v0.5.0 pinned RBAC lacks core events create; the verifier checks it anyway', async () => {
    const loaded = await loadRelease('v0.5.0', { mirror: MIRROR });
    const fromPinned = controllerNeeds([], false).length; // only the known gaps
    expect(fromPinned).toBe(1);
    const needs = controllerNeeds(loaded.objects.values(), true).map(describeNeed);
    expect(needs).toContain('create events (cluster-wide)');
    expect(needs).toContain('create events.events.k8s.io (cluster-wide)');
    expect(needs).toContain('update sandboxes.agents.x-k8s.io/finalizers (cluster-wide)');
    expect(needs).toContain('list networkpolicies.networking.k8s.io (cluster-wide)');
    expect(needs).toContain('watch networkpolicies.networking.k8s.io (cluster-wide)');
  });
});
