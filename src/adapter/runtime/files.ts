/**
 * File transfer through a runtime's own file API (sandboxd `PUT`/`GET /v1/files/{path}`, the python runtime's
 * `POST /upload` and `GET /download/{path}`), never through a command's argv (Linux refuses one argument over 128 KiB
 * with E2BIG, case runtime-payload-bytes). Bodies are streamed in parts both ways and capped at a size limit.
 */
import type { AdapterError, FileContent } from '../types.js';
import type { StreamBody } from './http.js';

/** Default largest file moved in one upload or download, bytes (64 MiB). */
export const DEFAULT_MAX_FILE_BYTES = 64 << 20;

/** Size of the parts a buffered file is written in, bytes. */
const PART_BYTES = 64 << 10;

/** The content as parts: a buffer cut in {@link PART_BYTES} slices (its length known), an iterable passed through. */
export function contentParts(content: FileContent): { parts: AsyncIterable<Uint8Array>; length?: number } {
  if (content instanceof Uint8Array) {
    const buf = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
    return {
      length: buf.length,
      parts: (async function* () {
        for (let at = 0; at < buf.length; at += PART_BYTES) yield buf.subarray(at, at + PART_BYTES);
      })(),
    };
  }
  return { parts: content };
}

/** A body made of a fixed head, the content's parts and a fixed tail (a multipart upload). */
export function framedBody(head: Buffer, content: FileContent, tail: Buffer): StreamBody {
  const inner = contentParts(content);
  return {
    ...(inner.length !== undefined ? { length: head.length + inner.length + tail.length } : {}),
    parts: (async function* () {
      yield head;
      yield* inner.parts;
      yield tail;
    })(),
  };
}

/**
 * `undefined` when `path` is a usable runtime-relative path: not empty, no NUL, CR, LF, `"` or `\` (a multipart filename
 * carries neither), and no `..` segment (both runtimes refuse paths out of their root; the adapter refuses first).
 */
export function checkFilePath(path: string): string | undefined {
  if (path.replace(/^\/+/, '') === '') return 'the path is empty';
  if (/[\0\r\n"\\]/.test(path)) return 'the path has a NUL, CR, LF, double quote or backslash';
  if (path.split('/').includes('..')) return 'the path has a `..` segment';
  return undefined;
}

/** A `too-large` error for a file over `limitBytes`, found before anything was sent. */
export function fileTooLarge(what: string, bytes: number, limitBytes: number): AdapterError {
  return {
    category: 'too-large',
    size: { bytes, limitBytes },
    message: `${what}: the file is ${bytes} bytes, the limit is ${limitBytes} bytes; nothing was sent`,
    hint: 'move a smaller file or raise maxFileBytes',
  };
}
