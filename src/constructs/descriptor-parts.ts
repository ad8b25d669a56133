/**
 * The descriptor ConfigMap when the descriptor is too large for one object: it grows by ~1 KiB per template and
 * passes client-side apply's 256 KiB annotation limit at ~250 templates and the API server's 1 MiB ConfigMap limit
 * at ~1,030. Then it is stored in parts, each small enough for client-side apply, in the format
 * src/constructs/descriptor.ts defines (and reads back with `descriptorTextFromConfigMaps`).
 */
import { createHash } from 'node:crypto';
import type { KubeObject } from '../releases/index.js';
import {
  DESCRIPTOR_CONFIGMAP,
  DESCRIPTOR_KEY,
  DESCRIPTOR_PART_KEY,
  DESCRIPTOR_PARTS_KEY,
  DESCRIPTOR_SHA256_KEY,
  descriptorPartName,
} from './descriptor.js';

/** Bytes of a part's text as JSON (escapes included), leaving room in the 262144-byte annotation limit for the rest of the object. */
export const DESCRIPTOR_PART_BYTES = 200 * 1024;

/** Whether `obj` is the descriptor ConfigMap holding the whole descriptor text. */
export function isDescriptorConfigMap(obj: KubeObject): boolean {
  return (
    obj.apiVersion === 'v1' &&
    obj.kind === 'ConfigMap' &&
    obj.metadata?.name === DESCRIPTOR_CONFIGMAP &&
    typeof (obj.data as Record<string, unknown> | undefined)?.[DESCRIPTOR_KEY] === 'string'
  );
}

/** `text` cut at line ends into pieces whose JSON string form is at most `budget` bytes (a longer line is cut inside). */
function pieces(text: string, budget: number): string[] {
  const out: string[] = [];
  let current = '';
  let size = 2; // the quotes of the JSON string
  for (const line of text.split(/(?<=\n)/)) {
    const bytes = Buffer.byteLength(JSON.stringify(line)) - 2;
    if (size + bytes > budget && current !== '') {
      out.push(current);
      current = '';
      size = 2;
    }
    if (bytes + 2 > budget) {
      // one line over the budget (not written by descriptorJson, whose lines are short): cut it by characters
      for (const ch of line) {
        const b = Buffer.byteLength(JSON.stringify(ch)) - 2;
        if (size + b > budget) {
          out.push(current);
          current = '';
          size = 2;
        }
        current += ch;
        size += b;
      }
      continue;
    }
    current += line;
    size += bytes;
  }
  if (current !== '') out.push(current);
  return out;
}

/**
 * The descriptor ConfigMap as is when its JSON fits in `budget` bytes, else the head ConfigMap (part count and sha256
 * instead of the text) followed by the part ConfigMaps, with the same labels and annotations.
 */
export function descriptorConfigMaps(cm: KubeObject, budget = DESCRIPTOR_PART_BYTES): KubeObject[] {
  const text = (cm.data as Record<string, string>)[DESCRIPTOR_KEY]!;
  if (Buffer.byteLength(JSON.stringify(cm)) <= budget) return [cm];
  const parts = pieces(text, budget);
  const { data: _whole, ...rest } = cm;
  const metadata = cm.metadata ?? {};
  const head: KubeObject = {
    ...rest,
    metadata: structuredClone(metadata),
    data: {
      [DESCRIPTOR_PARTS_KEY]: String(parts.length),
      [DESCRIPTOR_SHA256_KEY]: createHash('sha256').update(text, 'utf8').digest('hex'),
    },
  };
  return [
    head,
    ...parts.map((part, i) => ({
      ...rest,
      metadata: { ...structuredClone(metadata), name: descriptorPartName(String(metadata.name), i + 1) },
      data: { [DESCRIPTOR_PART_KEY]: part },
    })),
  ];
}
