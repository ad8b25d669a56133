/**
 * Filling a mirror without GitHub (docs/guides/air-gapped.md): `agentplane --mirror SRC mirror pull <tag>
 * --to DIR` copies the pinned files from another mirror (a copy carried across), checks every byte, and reads nothing
 * else: a release SRC lacks is a MissingFile from the mirror, never an upstream fetch. The filled DIR then serves synth
 * with a cold cache. Run as a real process (bin/agentplane.js, compiled: `npm run build` first).
 */
import { jest } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { releaseFacts } from '../../../src/releases/index.js';
import { MIRROR } from '../constructs/fixture.js';

jest.setTimeout(180_000);

const ROOT = path.resolve(import.meta.dirname, '../../..');
const BIN = path.join(ROOT, 'bin/agentplane.js');
const DEV = path.join(ROOT, 'examples/dev-gvisor/environment.ts');

function tmp(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), `agentplane-mirror-${prefix}-`));
}

/** Runs the CLI with a cold cache and no AGENTPLANE_MIRROR: only what the command line names is a source. */
function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, '--cache-dir', tmp('cache'), ...args], {
    encoding: 'utf8',
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '', AGENTPLANE_MIRROR: '' },
    timeout: 180_000,
    maxBuffer: 64 << 20,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('mirror pull from another mirror: the same bytes, every pinned file, then synth reads only the new mirror', () => {
  // the copy carried across holds v0.5.6 only
  const source = tmp('source');
  cpSync(path.join(MIRROR, 'v0.5.6'), path.join(source, 'v0.5.6'), { recursive: true });
  const to = tmp('to');
  const r = cli(['--mirror', source, 'mirror', 'pull', 'v0.5.6', '--to', to, '-o', 'json']);
  expect(r.status).toBe(0);
  const facts = releaseFacts('v0.5.6');
  expect(JSON.parse(r.stdout)).toEqual({
    mirror: to,
    releases: [
      expect.objectContaining({
        tag: 'v0.5.6',
        commit: facts.commit,
        files: facts.files.length,
        directory: `${to}/v0.5.6`,
      }),
    ],
  });
  for (const f of facts.files)
    expect(readFileSync(path.join(to, 'v0.5.6', f.mirrorPath))).toEqual(
      readFileSync(path.join(MIRROR, 'v0.5.6', f.mirrorPath)),
    );

  const fromNew = cli(['--mirror', to, 'synth', DEV, '--stdout']);
  const fromShared = cli(['--mirror', MIRROR, 'synth', DEV, '--stdout']);
  expect([fromNew.status, fromShared.status]).toEqual([0, 0]);
  expect(fromNew.stdout).toBe(fromShared.stdout);
});

test('a release the source mirror lacks is MissingFile from that mirror (exit 3): nothing is fetched upstream', () => {
  const source = tmp('source');
  cpSync(path.join(MIRROR, 'v0.5.6'), path.join(source, 'v0.5.6'), { recursive: true });
  const to = tmp('to');
  const r = cli(['--mirror', source, 'mirror', 'pull', 'v0.4.6', '--to', to, '-o', 'json']);
  expect(r.status).toBe(3);
  const doc = JSON.parse(r.stdout) as { reason: string; details: { origin: string } };
  expect([doc.reason, doc.details.origin]).toEqual(['MissingFile', 'mirror']);
  expect(existsSync(path.join(to, 'v0.4.6'))).toBe(false);
});
