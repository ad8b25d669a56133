/**
 * Issue 16: synthesis never writes an object the API server would refuse. A 1,100-template environment (its
 * descriptor ConfigMap would be ~1.1 MiB as JSON, over the 1 MiB limit) is written with every object under client-side apply's
 * limit, the descriptor stored in parts that put back together give environment.json byte for byte, which the
 * verifier's reader reads; no note advises server-side apply for it; an object over 1 MiB fails synthesis, named.
 */
import { jest } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiObject } from 'cdk8s';
import {
  DESCRIPTOR_CONFIGMAP,
  DESCRIPTOR_KEY,
  sandboxdPodSpec,
  SANDBOXD_RUNTIME,
} from '../../../src/constructs/index.js';
import { DescriptorPartsError, descriptorTextFromConfigMaps } from '../../../src/constructs/descriptor.js';
import { lastAppliedSizeBytes } from '../../../src/releases/index.js';
import {
  ANNOTATION_LIMIT_BYTES,
  OBJECT_LIMIT_BYTES,
  ObjectTooLargeError,
  synthesizeEnvironment,
  writeSynthesis,
} from '../../../src/synth/index.js';
import { readEnvironment } from '../../../src/verify/environment.js';
import { thrownBy } from '../thrown.js';
import { newEnvironment, release } from '../constructs/fixture.js';

jest.setTimeout(300_000);

type ConfigMap = { metadata: { name: string }; data: Record<string, string> };

describe('objects the API server would refuse', () => {
  test('1,100 templates: every object fits, the descriptor is stored in parts and reads back', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'big');
    const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    for (let i = 0; i < 1100; i++)
      env.addTemplate(`python-sandbox-template-${i}`, {
        runtimeClass: rc,
        podSpec: sandboxdPodSpec({ image: 'registry.example.internal/agent-sandbox/sandboxd:v0.5.6' }),
        runtime: SANDBOXD_RUNTIME,
      });
    const s = synthesizeEnvironment(env);
    const json = s.files.find((f) => f.path === 'big/environment.json')!.content;
    // as one ConfigMap (the text as a JSON string) it would pass the API server's limit
    expect(Buffer.byteLength(JSON.stringify(json))).toBeGreaterThan(OBJECT_LIMIT_BYTES);
    for (const o of s.objects)
      if (o.object.kind !== 'CustomResourceDefinition')
        expect([o.object.metadata?.name, lastAppliedSizeBytes(o.object) <= ANNOTATION_LIMIT_BYTES]).toEqual([
          o.object.metadata?.name,
          true,
        ]);
    const maps = s.objects
      .filter((o) => o.object.kind === 'ConfigMap' && String(o.object.metadata?.name).startsWith(DESCRIPTOR_CONFIGMAP))
      .map((o) => o.object as unknown as ConfigMap);
    expect(maps.length).toBeGreaterThan(5);
    const headMap = maps.find((m) => m.metadata.name === DESCRIPTOR_CONFIGMAP)!;
    const head = { name: headMap.metadata.name, data: headMap.data };
    expect(head.data[DESCRIPTOR_KEY]).toBeUndefined();
    const byName = new Map(maps.map((m) => [m.metadata.name, m.data]));
    expect(descriptorTextFromConfigMaps(head, DESCRIPTOR_KEY, (n) => byName.get(n))).toBe(json);
    expect(s.notes.filter((n) => n.includes(DESCRIPTOR_CONFIGMAP))).toEqual([]);
    // a part missing or changed is refused, never read as a shorter descriptor
    const missing = new Map(byName);
    missing.delete(`${DESCRIPTOR_CONFIGMAP}-0002`);
    expect(() => descriptorTextFromConfigMaps(head, DESCRIPTOR_KEY, (n) => missing.get(n))).toThrow(
      DescriptorPartsError,
    );
    const changed = new Map(byName);
    changed.set(`${DESCRIPTOR_CONFIGMAP}-0001`, {
      'environment.json.part': `${byName.get(`${DESCRIPTOR_CONFIGMAP}-0001`)!['environment.json.part']} `,
    });
    const err = thrownBy(
      () => descriptorTextFromConfigMaps(head, DESCRIPTOR_KEY, (n) => changed.get(n)),
      DescriptorPartsError,
      'DescriptorPartsInvalid',
    );
    expect([err.problem, err.configMap]).toEqual(['checksum-mismatch', DESCRIPTOR_CONFIGMAP]);
    // the verifier reads the written environment.json
    const out = mkdtempSync(join(tmpdir(), 'agentplane-big-'));
    writeSynthesis(out, s);
    expect(readEnvironment(join(out, 'big')).descriptor.templates).toHaveLength(1100);
  });

  test('a small descriptor stays one ConfigMap holding the text', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'small');
    const s = synthesizeEnvironment(env);
    const cms = s.objects.filter((o) => String(o.object.metadata?.name).startsWith(DESCRIPTOR_CONFIGMAP));
    expect(cms.map((o) => o.object.metadata?.name)).toEqual([DESCRIPTOR_CONFIGMAP]);
    expect((cms[0]!.object as unknown as ConfigMap).data[DESCRIPTOR_KEY]).toBe(
      s.files.find((f) => f.path === 'small/environment.json')!.content,
    );
  });

  test('another object over 1 MiB fails synthesis naming it, its size and what to do', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'huge');
    new ApiObject(env, 'blob', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'blob', namespace: 'agents' },
      data: { x: 'a'.repeat(OBJECT_LIMIT_BYTES) },
    });
    let error: unknown;
    try {
      synthesizeEnvironment(env);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ObjectTooLargeError);
    expect((error as ObjectTooLargeError).reason).toBe('ObjectTooLarge');
    const e = error as ObjectTooLargeError;
    expect([e.limit, e.limitBytes]).toEqual(['object', 1048576]);
    expect(e.objects).toEqual([
      {
        path: 'huge/blob',
        object: { group: 'core', kind: 'ConfigMap', namespace: 'agents', name: 'blob' },
        bytes: expect.any(Number),
      },
    ]);
    expect(e.objects[0]!.bytes).toBeGreaterThan(OBJECT_LIMIT_BYTES);
    expect(e.hint).toBeDefined();
  });
});
