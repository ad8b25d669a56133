/**
 * The model's small release table against the generated catalog: the tags, each release's family, the version each
 * family stores for every kind, and the kinds' group and plural. The catalog is the source; these fail when a release
 * is added to it and the model is not updated.
 */
import {
  CORE_GROUP,
  DNS_LABEL,
  familyOfServedVersions,
  familyOfTag,
  FAMILY_VERSION,
  gvr,
  isPlainObject,
  RELEASE_FAMILIES,
  RELEASE_TAGS,
  resourceName,
  RESOURCES,
  SANDBOX_KINDS,
  storageVersionOf,
} from '../../../src/model/index.js';
import { CATALOG } from '../../../src/releases/catalog.js';
import { SUPPORTED_RELEASES } from '../../../src/releases/index.js';

describe('release table', () => {
  test('the tags are the catalog releases, in the same order', () => {
    expect([...RELEASE_TAGS]).toEqual([...SUPPORTED_RELEASES]);
  });

  test.each(RELEASE_TAGS)(
    "%s: familyOfTag gives the catalog family, and the family version is every kind's storage version",
    (tag) => {
      const facts = CATALOG[tag];
      expect(familyOfTag(tag)).toBe(facts.family);
      for (const kind of SANDBOX_KINDS) {
        expect(storageVersionOf(facts.crds[kind])).toBe(FAMILY_VERSION[facts.family]);
        expect(RESOURCES[kind]).toEqual({ group: facts.crds[kind].group, plural: facts.crds[kind].plural });
        expect(resourceName(kind)).toBe(facts.crds[kind].crdName);
      }
    },
  );

  test('every family has at least one catalog release', () => {
    expect(RELEASE_FAMILIES.map((f) => RELEASE_TAGS.some((t) => CATALOG[t].family === f))).toEqual([true, true, true]);
  });

  test('familyOfTag accepts patch releases of a known family and nothing else', () => {
    expect(familyOfTag('v0.5.9')).toBe('v0.5');
    expect(familyOfTag('v0.4.0')).toBe('v0.4');
    expect(familyOfTag('v1.0.1')).toBe('v1.0');
    expect(familyOfTag('v0.6.0')).toBeUndefined();
    expect(familyOfTag('v0.5')).toBeUndefined();
    expect(familyOfTag('v0.5.6-rc1')).toBeUndefined();
  });

  test('familyOfServedVersions: v1beta1 alone is v1.0, with v1alpha1 v0.5, v1alpha1 alone v0.4', () => {
    expect(familyOfServedVersions(['v1beta1', 'v1alpha1'])).toBe('v0.5');
    expect(familyOfServedVersions(['v1beta1'])).toBe('v1.0');
    expect(familyOfServedVersions(['v1alpha1'])).toBe('v0.4');
    expect(familyOfServedVersions(['v2'])).toBeUndefined();
    expect(familyOfServedVersions([])).toBeUndefined();
  });

  test('gvr: group and plural of the kind at the family version', () => {
    expect(gvr('Sandbox', 'v0.5')).toEqual({ group: CORE_GROUP, version: 'v1beta1', plural: 'sandboxes' });
    expect(gvr('SandboxClaim', 'v0.4')).toEqual({
      group: 'extensions.agents.x-k8s.io',
      version: 'v1alpha1',
      plural: 'sandboxclaims',
    });
  });
});

describe('name rules and guards', () => {
  test.each([
    ['a', true],
    ['sbx-1', true],
    ['-a', false],
    ['a-', false],
    ['A', false],
    ['a_b', false],
    ['', false],
  ])('DNS_LABEL %j: %s', (name, ok) => {
    expect(DNS_LABEL.test(name)).toBe(ok);
  });

  test('isPlainObject: objects only, never null or arrays', () => {
    expect([{}, { a: 1 }, null, [], 'x', 1, undefined].map(isPlainObject)).toEqual([
      true,
      true,
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
