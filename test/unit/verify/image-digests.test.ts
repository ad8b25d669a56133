import {
  checkImage,
  imageEvidence,
  registryDigest,
  splitRef,
  startedContainers,
  type ContainerImage,
} from '../../../src/verify/image-digests.js';
import { settle } from '../../../src/verify/states.js';
import { podView } from '../../../src/adapter/kubernetes/views.js';
import { fact } from '../../../src/verify/evidence.js';

const A = `sha256:${'a'.repeat(64)}`;
const B = `sha256:${'b'.repeat(64)}`;
const REPO = 'registry.example.internal/agent-sandbox/sandboxd';

const container = (over: Partial<ContainerImage>): ContainerImage => ({
  pod: 'sbx/p-1',
  container: 'sandboxd',
  pinned: `${REPO}:v0.5.6@${A}`,
  image: `${REPO}:v0.5.6`,
  imageID: `${REPO}@${A}`,
  ...over,
});

/** The lower steps of a capability, all proven, so settle() shows what the verified-step facts do. */
const lower = (['discovered', 'compatible', 'configured'] as const).map((step) =>
  fact({ capability: 'template/sbx/t', step, verdict: 'proven', reason: 'TemplateFound', subject: 's', message: step }),
);

describe('splitRef and registryDigest', () => {
  test('splits registry, tag and digest; Docker Hub short names are normalised', () => {
    expect(splitRef(`${REPO}:v0.5.6@${A}`)).toEqual({ repository: REPO, tag: 'v0.5.6', digest: A });
    expect(splitRef('localhost:5000/x/y:1')).toEqual({ repository: 'localhost:5000/x/y', tag: '1' });
    expect(splitRef('busybox')).toEqual({ repository: 'docker.io/library/busybox' });
    expect(splitRef('docker.io/busybox:1.36')).toEqual({ repository: 'docker.io/library/busybox', tag: '1.36' });
    expect(splitRef('org/tool:2')).toEqual({ repository: 'docker.io/org/tool', tag: '2' });
  });

  test('reads containerd, CRI-O and docker-shim imageIDs; a bare local id or empty string has no registry digest', () => {
    expect(registryDigest(`${REPO}@${A}`)).toBe(A);
    expect(registryDigest(`docker-pullable://${REPO}@${B}`)).toBe(B);
    expect(registryDigest(A)).toBeUndefined();
    expect(registryDigest('')).toBeUndefined();
    expect(registryDigest(`${REPO}@sha256:short`)).toBeUndefined();
  });
});

describe('checkImage', () => {
  test('digest pin: equal imageID digest matches, another digest is skew', () => {
    expect(checkImage(container({}))).toEqual({ kind: 'match', digest: A });
    expect(checkImage(container({ imageID: `docker-pullable://${REPO}@${B}` }))).toEqual({
      kind: 'skew',
      pinnedDigest: A,
      runningDigest: B,
    });
  });

  test('digest pin: empty imageID and a local image id cannot be compared', () => {
    expect(checkImage(container({ imageID: '' }))).toEqual({ kind: 'no-image-id' });
    expect(checkImage(container({ imageID: A }))).toEqual({ kind: 'local-image-id' });
  });

  test('tag-only pin: same reference is tag-only (with the running digest when reported); another tag or repository is ref skew', () => {
    expect(checkImage(container({ pinned: `${REPO}:v0.5.6` }))).toEqual({ kind: 'tag-only', runningDigest: A });
    expect(checkImage(container({ pinned: `${REPO}:v0.5.6`, imageID: '' }))).toEqual({ kind: 'tag-only' });
    expect(
      checkImage(container({ pinned: 'busybox:1.36', image: 'docker.io/library/busybox:1.36', imageID: '' })),
    ).toEqual({ kind: 'tag-only' });
    expect(checkImage(container({ pinned: `${REPO}:v0.5.6`, image: `${REPO}:latest-main` }))).toEqual({
      kind: 'ref-skew',
      pinned: `${REPO}:v0.5.6`,
      running: `${REPO}:latest-main`,
    });
    expect(checkImage(container({ pinned: `${REPO}:v0.5.6`, image: 'other.example/sandboxd:v0.5.6' }))).toEqual({
      kind: 'ref-skew',
      pinned: `${REPO}:v0.5.6`,
      running: 'other.example/sandboxd:v0.5.6',
    });
  });
});

describe('startedContainers', () => {
  const pod = (name: string, statuses: object[], extra: object = {}) => ({
    metadata: { name, namespace: 'sbx', ...extra },
    status: { containerStatuses: statuses },
  });
  const running = { running: { startedAt: '2026-11-29T12:00:00Z' } };

  test('keeps started, pinned containers of live pods; skips waiting containers, unpinned sidecars and pods being deleted', () => {
    const pods = [
      pod('p-1', [
        { name: 'sandboxd', image: `${REPO}:v0.5.6`, imageID: `${REPO}@${A}`, state: running },
        { name: 'sidecar', image: 'x:1', imageID: '', state: running },
      ]),
      pod('p-2', [{ name: 'sandboxd', image: `${REPO}:v0.5.6`, state: { waiting: { reason: 'ContainerCreating' } } }]),
      pod('p-3', [{ name: 'sandboxd', image: `${REPO}:v0.5.6`, imageID: `${REPO}@${B}`, state: running }], {
        deletionTimestamp: '2026-11-29T12:01:00Z',
      }),
      {
        metadata: { name: 'p-4', namespace: 'sbx' },
        status: {
          initContainerStatuses: [
            { name: 'init', image: 'i:1', imageID: `i@${B}`, state: { terminated: { exitCode: 0 } } },
          ],
        },
      },
    ];
    expect(startedContainers(pods.map(podView), { sandboxd: `${REPO}:v0.5.6@${A}`, init: `i:1@${B}` })).toEqual([
      {
        pod: 'sbx/p-1',
        container: 'sandboxd',
        pinned: `${REPO}:v0.5.6@${A}`,
        image: `${REPO}:v0.5.6`,
        imageID: `${REPO}@${A}`,
      },
      { pod: 'sbx/p-4', container: 'init', pinned: `i:1@${B}`, image: 'i:1', imageID: `i@${B}` },
    ]);
  });
});

describe('imageEvidence and the state it leaves', () => {
  test('all digests match: one proven fact listing each pod/container, the capability reaches verified', () => {
    const ev = imageEvidence('template/sbx/t', 'pods of template sbx/t', [
      container({}),
      container({ pod: 'sbx/p-2' }),
    ]);
    expect(ev).toEqual([
      expect.objectContaining({
        capability: 'template/sbx/t',
        step: 'verified',
        verdict: 'proven',
        subject: 'pods of template sbx/t',
        value: A,
        objects: [`sbx/p-1/sandboxd ${A}`, `sbx/p-2/sandboxd ${A}`],
      }),
    ]);
    expect(settle([...lower, ...ev])).toEqual({ state: 'verified', next: null, nextReason: null });
  });

  test('one pod on another digest: a missing fact naming pod, container, pinned and running; stays configured', () => {
    const ev = imageEvidence('template/sbx/t', 'pods of template sbx/t', [
      container({}),
      container({ pod: 'sbx/p-2', imageID: `${REPO}@${B}` }),
    ]);
    expect(ev.map((e) => [e.verdict, e.subject])).toEqual([
      ['missing', 'Pod sbx/p-2'],
      ['proven', 'pods of template sbx/t'],
    ]);
    expect(ev[0]).toMatchObject({ field: 'status.containerStatuses[sandboxd].imageID', value: `${REPO}@${B}` });
    expect(ev[0]).toMatchObject({ verdict: 'missing', reason: 'ImageDigestDiffers', subject: 'Pod sbx/p-2' });
    const s = settle([...lower, ...ev]);
    expect(s.state).toBe('configured');
    expect(s.nextReason).toBe('ImageDigestDiffers');
  });

  test('tag-only pin: unknown, says skew cannot be detected and never claims verified', () => {
    const ev = imageEvidence('controller', 'pods of Deployment agent-sandbox-system/agent-sandbox-controller', [
      container({ pinned: `${REPO}:v0.5.6`, container: 'manager' }),
    ]);
    expect(ev).toHaveLength(1);
    expect(ev[0]).toMatchObject({ verdict: 'unknown', step: 'verified', value: `${REPO}:v0.5.6` });
    expect(ev[0]).toMatchObject({ reason: 'PinnedByTagOnly', field: 'status.containerStatuses[].imageID' });
    // The container it could not check is named (a value, not wording).
    expect(ev[0]!.objects).toEqual([`sbx/p-1/manager ${A}`]);
    expect(settle([...lower.map((e) => ({ ...e, capability: 'controller' as const })), ...ev])).toMatchObject({
      state: 'configured',
      nextReason: 'PinnedByTagOnly',
    });
  });

  test('no imageID (a runtime that does not report it) and local image ids: unknown, grouped', () => {
    const ev = imageEvidence('router', 'router pods', [
      container({ imageID: '' }),
      container({ pod: 'sbx/p-2', imageID: '' }),
      container({ pod: 'sbx/p-3', imageID: B }),
    ]);
    expect(ev.map((e) => e.verdict)).toEqual(['unknown', 'unknown']);
    expect(ev.map((e) => [e.reason, e.field])).toEqual([
      ['NoImageId', 'status.containerStatuses[].imageID'],
      ['LocalImageId', 'status.containerStatuses[].imageID'],
    ]);
    // Grouped: each piece of evidence names every container it covers (values, not wording).
    expect(ev.map((e) => e.objects)).toEqual([['sbx/p-1/sandboxd', 'sbx/p-2/sandboxd'], [`sbx/p-3/sandboxd ${B}`]]);
  });

  test('no containers: no evidence (other probes report missing pods)', () => {
    expect(imageEvidence('router', 'router pods', [])).toEqual([]);
  });

  test('long lists are cut after 10 names', () => {
    const many = Array.from({ length: 12 }, (_, i) => container({ pod: `sbx/p-${i}`, imageID: '' }));
    // prose: the cut of a long list in the sentence is the rendering under test
    expect(imageEvidence('router', 'router pods', many)[0]!.message).toMatch(
      /\(sbx\/p-0\/sandboxd, .*sbx\/p-9\/sandboxd and 2 more\)/,
    );
  });
});
