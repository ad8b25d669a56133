/**
 * Case runtime-payload-bytes, uploads and downloads: files go through the runtime's own file API (never a command's
 * argv, where 300 KiB fails with E2BIG), streamed both ways and capped. On the REAL runtimes: sandboxd v0.5.6 and
 * v1.0.3 (binaries from the test-cluster cache, test/unit/adapter/sandboxd-process.ts: `PUT`/`GET /v1/files`) and the
 * upstream python runtime `main.py` of v0.5.6 and v1.0.3 (test/unit/adapter/python-runtime-process.ts: `POST /upload`,
 * `GET /download`), over the direct transport. What the runtime wrote is read from its root directory on disk, so a
 * round trip cannot hide a corruption that the download would undo.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Executions, type RuntimeBinding } from '../../src/adapter/runtime/executions.js';
import { DirectTransport } from '../../src/adapter/transports/direct.js';
import { RouterTransport } from '../../src/adapter/transports/router.js';
import type { Result, SessionRef } from '../../src/adapter/types.js';
import { PYTHON_RUNTIME_TAGS } from '../../test-cluster/python-runtime.js';
import { startPythonRuntime } from '../unit/adapter/python-runtime-process.js';
import { startSandboxd, type SandboxdTag } from '../unit/adapter/sandboxd-process.js';

const session: SessionRef = { namespace: 'sbx', name: 'c1', via: 'claim', operationId: 'op-1', uid: 'uid-1' };
/** The cap these tests set: 8 MiB, so a multi-MB file fits and one byte more does not. */
const CAP = 8 << 20;

interface Runtime {
  readonly binding: RuntimeBinding;
  /** The runtime's root directory on this machine (sandboxd `--root-dir`, the python runtime's /app). */
  readonly root: string;
  stop(): Promise<void>;
}

const SANDBOXD_TAGS: readonly SandboxdTag[] = ['v0.5.6', 'v1.0.3'];
const runtimes: Array<[string, () => Promise<Runtime>]> = [
  ...SANDBOXD_TAGS.map((tag): [string, () => Promise<Runtime>] => [
    `sandboxd ${tag}`,
    async () => {
      const sd = await startSandboxd(tag);
      return {
        root: sd.rootDir,
        stop: () => sd.stop(),
        binding: {
          template: 'template/sbx/sd',
          runtime: { kind: 'sandboxd', restPort: sd.restPort, grpcPort: sd.grpcPort },
          target: { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
        },
      };
    },
  ]),
  ...PYTHON_RUNTIME_TAGS.map((tag): [string, () => Promise<Runtime>] => [
    `python runtime ${tag}`,
    async () => {
      const rt = await startPythonRuntime(tag);
      return {
        root: rt.appDir,
        stop: () => rt.stop(),
        binding: {
          template: 'template/sbx/py',
          runtime: { kind: 'python-runtime', port: rt.port },
          target: { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
        },
      };
    },
  ]),
];

/** `data` as parts of `part` bytes from an async iterable: no length known up front, sent chunked. */
async function* parts(data: Buffer, part: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < data.length; at += part) yield data.subarray(at, at + part);
}

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

function ok<T>(r: Result<T>): T {
  if (r.kind !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(r)}`);
  return r.value;
}

describe.each(runtimes)('%s', (_name, start) => {
  let rt: Runtime;
  let ex: Executions;
  beforeAll(async () => {
    rt = await start();
    ex = new Executions({ transport: new DirectTransport(), supportStates: () => 'verified', maxFileBytes: CAP });
  }, 60_000);
  afterAll(async () => rt?.stop());

  const up = (p: string, content: Buffer | AsyncIterable<Uint8Array>) =>
    ex.upload({ session, path: p, content, timeoutMs: 30_000 }, rt.binding);
  const down = (p: string) => ex.download({ session, path: p, timeoutMs: 30_000 }, rt.binding);

  test('300 KiB (past the 128 KiB argv limit): byte-identical in the runtime and back', async () => {
    const data = randomBytes(300 * 1024);
    const sent = ok(await up('upload-300k.bin', data));
    expect(sent).toMatchObject({ path: 'upload-300k.bin', bytes: 307_200 });
    expect(sha(readFileSync(path.join(rt.root, 'upload-300k.bin')))).toBe(sha(data));
    const got = ok(await down('upload-300k.bin'));
    expect(got.bytes).toBe(307_200);
    expect(got.content.equals(data)).toBe(true);
  });

  test('6 MiB streamed from an iterable of unknown length: byte-identical in the runtime and back', async () => {
    const data = randomBytes(6 << 20);
    const sent = ok(await up('upload-6m.bin', parts(data, 100_000)));
    expect(sent.bytes).toBe(6 << 20);
    expect(sha(readFileSync(path.join(rt.root, 'upload-6m.bin')))).toBe(sha(data));
    const got = ok(await down('upload-6m.bin'));
    expect(got.bytes).toBe(6 << 20);
    expect(sha(got.content)).toBe(sha(data));
  }, 60_000);

  test('binary: every byte value and a run of 0xff survive both ways', async () => {
    const data = Buffer.concat([
      Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
      Buffer.alloc(4096, 0xff),
      Buffer.from([0x0d, 0x0a, 0x0d, 0x00]),
    ]);
    ok(await up('binary.bin', data));
    expect(readFileSync(path.join(rt.root, 'binary.bin')).equals(data)).toBe(true);
    expect(ok(await down('binary.bin')).content.equals(data)).toBe(true);
  });

  test('over the cap: too-large, before sending when the size is known, at the cap when streamed; nothing written', async () => {
    const big = Buffer.alloc(CAP + 1, 0x61);
    const known = await up('too-large-known.bin', big);
    expect(known).toMatchObject({
      kind: 'failed',
      error: { category: 'too-large', size: { bytes: CAP + 1, limitBytes: CAP } },
    });
    const streamed = await up('too-large-streamed.bin', parts(big, 1 << 20));
    expect(streamed).toMatchObject({ kind: 'failed', error: { category: 'too-large', size: { limitBytes: CAP } } });
    // Give the runtime a moment to drop what it received of the cut body.
    await new Promise((r) => setTimeout(r, 500));
    expect(existsSync(path.join(rt.root, 'too-large-known.bin'))).toBe(false);
    expect(existsSync(path.join(rt.root, 'too-large-streamed.bin'))).toBe(false);
    // No temp file left beside (sandboxd writes `.sandboxd-tmp-*` and renames only a complete body).
    expect(readdirSync(rt.root).filter((f) => f.includes('tmp'))).toEqual([]);
  }, 30_000);

  test('a download over the cap: too-large, not a timeout or a truncated success', async () => {
    writeFileSync(path.join(rt.root, 'big-download.bin'), Buffer.alloc(CAP + 1, 0x62), { mode: 0o644 });
    expect(await down('big-download.bin')).toMatchObject({
      kind: 'failed',
      error: { category: 'too-large', size: { limitBytes: CAP } },
    });
    expect(ok(await down('upload-300k.bin')).bytes).toBe(307_200);
  });

  test('bad paths are refused before anything is sent; a missing file is not-found', async () => {
    expect(await up('../escape.bin', Buffer.from('x'))).toMatchObject({ kind: 'rejected', reason: 'InvalidFilePath' });
    expect(await up('', Buffer.from('x'))).toMatchObject({ kind: 'rejected', reason: 'InvalidFilePath' });
    expect(await down('no-such-file.bin')).toMatchObject({ kind: 'failed', error: { category: 'not-found' } });
  });
});

test('the python runtime sets no file mode: a mode is refused, nothing sent', async () => {
  const ex = new Executions({ transport: new DirectTransport(), supportStates: () => 'verified' });
  const binding: RuntimeBinding = {
    template: 'template/sbx/py',
    runtime: { kind: 'python-runtime', port: 1 },
    target: { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
  };
  expect(
    await ex.upload({ session, path: 'x.sh', content: Buffer.from('x'), mode: '0755', timeoutMs: 1000 }, binding),
  ).toMatchObject({ kind: 'rejected', reason: 'FileModeUnsupported' });
});

test('an unverified runtime moves no file', async () => {
  const ex = new Executions({ transport: new DirectTransport(), supportStates: () => 'configured' });
  const binding: RuntimeBinding = {
    template: 'template/sbx/sd',
    runtime: { kind: 'sandboxd', restPort: 1, grpcPort: 2 },
    target: { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
  };
  expect(await ex.download({ session, path: 'x', timeoutMs: 1000 }, binding)).toMatchObject({
    kind: 'unsupported',
    reason: 'RuntimeExecNotVerified',
    state: 'configured',
  });
});

test('through the router transport (its addressing headers on every call): the python runtime moves 300 KiB intact', async () => {
  const rt = await startPythonRuntime('v1.0.3');
  try {
    const ex = new Executions({
      transport: new RouterTransport(`http://127.0.0.1:${rt.port}`),
      supportStates: () => 'verified',
    });
    const binding: RuntimeBinding = {
      template: 'template/sbx/py',
      runtime: { kind: 'python-runtime', port: rt.port },
      target: { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
    };
    const data = randomBytes(300 * 1024);
    ok(await ex.upload({ session, path: 'routed.bin', content: data, timeoutMs: 30_000 }, binding));
    expect(readFileSync(path.join(rt.appDir, 'routed.bin')).equals(data)).toBe(true);
    const got = ok(await ex.download({ session, path: 'routed.bin', timeoutMs: 30_000 }, binding));
    expect(got).toMatchObject({ bytes: 307_200, api: 'python-runtime GET /download' });
    expect(got.content.equals(data)).toBe(true);
  } finally {
    await rt.stop();
  }
}, 60_000);
