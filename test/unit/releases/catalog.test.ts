import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderCatalog } from '../../../scripts/gen-catalog.js';
import { SUPPORTED_RELEASES, UnknownReleaseError, releaseFacts } from '../../../src/releases/index.js';
import { SHARED_MIRROR } from './helpers.js';
import { thrownBy } from '../thrown.js';

describe('release catalog', () => {
  test('supports exactly v0.4.6, v0.5.0, v0.5.6, v1.0.3', () => {
    expect(SUPPORTED_RELEASES).toEqual(['v0.4.6', 'v0.5.0', 'v0.5.6', 'v1.0.3']);
  });

  test('the committed catalog is what the generator writes from index.json (and the generator is deterministic)', () => {
    const index = JSON.parse(readFileSync(join(SHARED_MIRROR, 'index.json'), 'utf8'));
    const once = renderCatalog(index);
    expect(renderCatalog(JSON.parse(readFileSync(join(SHARED_MIRROR, 'index.json'), 'utf8')))).toBe(once);
    expect(readFileSync(join(process.cwd(), 'src/releases/catalog.ts'), 'utf8')).toBe(once);
  });

  test('pins commits, images and the webhook-certs flag per release', () => {
    expect(releaseFacts('v0.4.6').commit).toBe('d0c124d4a1fded4ed4aecb92753696b4dd8de17b');
    expect(releaseFacts('v0.5.0').commit).toBe('a1a58a019a5479ec6cd77f95234927da7a1f434d');
    expect(releaseFacts('v0.5.6').commit).toBe('211b7579cabed9460c1a692eb687084ff4c5879d');
    expect(releaseFacts('v0.5.6').controllerImage).toBe(
      'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6',
    );
    expect(releaseFacts('v0.5.6').controllerImagePlaceholder).toBe(
      'ko://sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller',
    );
    expect(releaseFacts('v1.0.3').commit).toBe('527d9346fe1d237dea5c003f3c720531c7bab1df');
    expect(releaseFacts('v1.0.3').controllerImage).toBe(
      'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v1.0.3',
    );
    expect(SUPPORTED_RELEASES.map((t) => releaseFacts(t).hasManageWebhookCertsFlag)).toEqual([
      false,
      false,
      true,
      false,
    ]);
    expect(SUPPORTED_RELEASES.map((t) => releaseFacts(t).family)).toEqual(['v0.4', 'v0.5', 'v0.5', 'v1.0']);
  });

  test('CRD versions: v0.4.6 serves v1alpha1 only; v0.5.x store v1beta1 and serve deprecated v1alpha1 via webhook conversion', () => {
    for (const crd of Object.values(releaseFacts('v0.4.6').crds)) {
      expect(crd.versions.map((v) => [v.name, v.served, v.storage])).toEqual([['v1alpha1', true, true]]);
      expect(crd.conversionStrategy).toBe('None');
    }
    for (const tag of ['v0.5.0', 'v0.5.6']) {
      for (const crd of Object.values(releaseFacts(tag).crds)) {
        expect(crd.versions.map((v) => [v.name, v.served, v.storage, v.deprecated])).toEqual([
          ['v1beta1', true, true, false],
          ['v1alpha1', true, false, true],
        ]);
        expect(crd.conversionStrategy).toBe('Webhook');
      }
    }
    expect(releaseFacts('v0.5.6').crds.SandboxWarmPool.versions[0]!.printerColumns.map((c) => c.name)).toEqual([
      'Ready',
      'Desired',
      'Age',
    ]);
    expect(releaseFacts('v0.5.6').crds.Sandbox.crdName).toBe('sandboxes.agents.x-k8s.io');
  });

  test('CRD versions: v1.0.3 serves and stores v1beta1 only, with no conversion (k8s/crds/*.yaml@v1.0.3)', () => {
    for (const crd of Object.values(releaseFacts('v1.0.3').crds)) {
      expect(crd.versions.map((v) => [v.name, v.served, v.storage, v.deprecated])).toEqual([
        ['v1beta1', true, true, false],
      ]);
      expect(crd.conversionStrategy).toBe('None');
    }
    const sandbox = releaseFacts('v1.0.3').files.find((f) => f.path === 'k8s/crds/agents.x-k8s.io_sandboxes.yaml')!;
    expect(sandbox.size).toBe(202857);
  });

  test('file lists: pinned paths with sha256 and size; asset orders reference pinned files', () => {
    const v056 = releaseFacts('v0.5.6');
    const crd = v056.files.find((f) => f.path === 'k8s/crds/agents.x-k8s.io_sandboxes.yaml')!;
    expect(crd.size).toBe(393338);
    expect(crd.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(v056.files.find((f) => f.path === 'packages/sandboxd/spec/process/v1/process.proto')!.mirrorPath).toBe(
      'sandboxd-spec/process/v1/process.proto',
    );
    expect(releaseFacts('v0.4.6').files.map((f) => f.path)).toHaveLength(9);
    for (const tag of SUPPORTED_RELEASES) {
      const facts = releaseFacts(tag);
      const paths = new Set(facts.files.map((f) => f.path));
      for (const p of [...facts.coreAssetOrder, ...facts.extensionsAssetOrder]) expect(paths.has(p)).toBe(true);
    }
  });

  test('an unknown tag throws UnknownReleaseError with a hint', () => {
    expect(thrownBy(() => releaseFacts('v0.5.1'), UnknownReleaseError, 'UnknownRelease').tag).toBe('v0.5.1');
    const err = thrownBy(() => releaseFacts('latest'), UnknownReleaseError, 'UnknownRelease');
    expect([err.tag, err.supported]).toEqual(['latest', ['v0.4.6', 'v0.5.0', 'v0.5.6', 'v1.0.3']]);
    expect(err.hint).toBeDefined();
  });
});
