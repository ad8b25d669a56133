/**
 * Case unpinned-image-tags (verifier side): "The verifier compares running containers' image digests with the pinned
 * ones and reports skew." An environment pinned by digest whose sandboxd pods drifted per node (one node ran a stale
 * cached image under IfNotPresent, kubernetes-sigs/agent-sandbox#1458 review) does not reach verified, and the evidence
 * names pod, container, pinned and running digest; a tag-only pin is reported as unable to detect skew. The pins come
 * from the environment descriptor (templates[].images, router.image, install.controllerImage). The same comparison on
 * real controller-made pods: test/cluster/verify-image-digests.test.ts.
 */
import { planFromDescriptor } from '../../src/verify/environment.js';
import { fact } from '../../src/verify/evidence.js';
import { podView } from '../../src/adapter/kubernetes/views.js';
import { imageEvidence, startedContainers } from '../../src/verify/image-digests.js';
import { settle } from '../../src/verify/states.js';
import { DESCRIPTOR } from '../unit/verify/fixtures.js';

const SANDBOXD = 'registry.example.internal/agent-sandbox/sandboxd';
const PINNED = `sha256:${'5e'.repeat(32)}`;
const STALE = `sha256:${'0d'.repeat(32)}`;
const running = { running: { startedAt: '2026-11-29T12:00:00Z' } };

const pod = (name: string, node: string, imageID: string) => ({
  metadata: { name, namespace: 'dev-sandboxes', labels: { 'agentplane.dev/template': 'shell' } },
  spec: { nodeName: node },
  status: {
    phase: 'Running',
    containerStatuses: [{ name: 'sandboxd', image: `${SANDBOXD}:v0.5.6`, imageID, state: running }],
  },
});

const lower = (['discovered', 'compatible', 'configured'] as const).map((step) =>
  fact({
    capability: 'template/dev-sandboxes/shell',
    step,
    verdict: 'proven',
    reason: 'TemplateFound',
    subject: 'SandboxTemplate dev-sandboxes/shell',
    message: step,
  }),
);

describe('case unpinned-image-tags (verifier)', () => {
  const digestPinned = {
    ...DESCRIPTOR,
    templates: [
      { ...DESCRIPTOR.templates[0]!, images: [{ container: 'sandboxd', image: `${SANDBOXD}:v0.5.6@${PINNED}` }] },
    ],
  };
  const plan = planFromDescriptor(digestPinned as never, 'dist/dev-gvisor', { transport: 'port-forward' });
  const template = plan.templates[0]!;

  test('the pins and pod labels of each template reach the verify plan from the descriptor', () => {
    expect(template.images).toEqual({ sandboxd: `${SANDBOXD}:v0.5.6@${PINNED}` });
    expect(template.podLabels).toEqual({ 'agentplane.dev/template': 'shell' });
    expect(plan.router?.image).toBe('r:1');
    expect(plan.controller.image).toBe('registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6');
  });

  test('a warm pool whose pod on node-b runs a stale cached digest: skew is reported and the template stays below verified', () => {
    const pods = [
      pod('shell-pool-a1', 'node-a', `${SANDBOXD}@${PINNED}`),
      pod('shell-pool-b2', 'node-b', `${SANDBOXD}@${STALE}`),
    ];
    const ev = imageEvidence(
      'template/dev-sandboxes/shell',
      'pods of template dev-sandboxes/shell',
      startedContainers(pods.map(podView), template.images!),
    );
    expect(ev.map((e) => [e.step, e.verdict, e.reason, e.subject, e.value])).toEqual([
      ['verified', 'missing', 'ImageDigestDiffers', 'Pod dev-sandboxes/shell-pool-b2', `${SANDBOXD}@${STALE}`],
      ['verified', 'proven', 'ImageDigestPinned', 'pods of template dev-sandboxes/shell', PINNED],
    ]);
    expect(settle([...lower, ...ev])).toMatchObject({ state: 'configured', nextReason: 'ImageDigestDiffers' });
  });

  test('after the stale pod is replaced every pod runs the pinned digest: verified', () => {
    const pods = [
      pod('shell-pool-a1', 'node-a', `${SANDBOXD}@${PINNED}`),
      pod('shell-pool-c3', 'node-b', `${SANDBOXD}@${PINNED}`),
    ];
    const ev = imageEvidence(
      'template/dev-sandboxes/shell',
      'pods of template dev-sandboxes/shell',
      startedContainers(pods.map(podView), template.images!),
    );
    expect(settle([...lower, ...ev])).toEqual({ state: 'verified', next: null, nextReason: null });
  });

  test('the descriptor as synthesized by default (tag pins, the release records no digests): skew cannot be detected, never verified', () => {
    const tagPlan = planFromDescriptor(DESCRIPTOR as never, 'dist/dev-gvisor', { transport: 'port-forward' });
    const pods = [
      pod('shell-pool-a1', 'node-a', `${SANDBOXD}@${PINNED}`),
      pod('shell-pool-b2', 'node-b', `${SANDBOXD}@${STALE}`),
    ];
    const ev = imageEvidence(
      'template/dev-sandboxes/shell',
      'pods of template dev-sandboxes/shell',
      startedContainers(pods.map(podView), tagPlan.templates[0]!.images!),
    );
    expect(ev.map((e) => [e.verdict, e.reason, e.value])).toEqual([
      ['unknown', 'PinnedByTagOnly', `${SANDBOXD}:v0.5.6`],
    ]);
    expect(settle([...lower, ...ev])).toMatchObject({ state: 'configured', nextReason: 'PinnedByTagOnly' });
  });

  test('a pod made from the upstream :latest-main spec under a tag pin is skew by reference', () => {
    const drifted = {
      ...pod('shell-x', 'node-a', ''),
      status: {
        phase: 'Running',
        containerStatuses: [
          {
            name: 'sandboxd',
            image: 'us-central1-docker.pkg.dev/k8s-staging-images/agent-sandbox/sandboxd:latest-main',
            imageID: '',
            state: running,
          },
        ],
      },
    };
    const ev = imageEvidence(
      'template/dev-sandboxes/shell',
      'pods of template dev-sandboxes/shell',
      startedContainers([podView(drifted)], { sandboxd: `${SANDBOXD}:v0.5.6` }),
    );
    expect(ev.map((e) => [e.verdict, e.reason, e.subject, e.field, e.value])).toEqual([
      [
        'missing',
        'ImageReferenceDiffers',
        'Pod dev-sandboxes/shell-x',
        'status.containerStatuses[sandboxd].image',
        'us-central1-docker.pkg.dev/k8s-staging-images/agent-sandbox/sandboxd:latest-main',
      ],
    ]);
  });
});
