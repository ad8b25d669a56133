/**
 * One failure, one exit code and one reason, across every command (docs/reference/exit-codes.md, src/cli/exit-codes.ts):
 * each command that talks to a cluster gives an unreachable one (a closed loopback port) exit 7 `ClusterUnreachable`
 * with `details.category: unreachable`; a manifest that is not YAML is exit 4 `ManifestUnparsable` and a bad
 * descriptor exit 4 `EnvironmentDescriptorInvalid` wherever they are read; an unusable kubeconfig (a context it does not have) exit 2 `KubeconfigUnusable`; each command that names a
 * release gives an unknown one exit 3 `UnknownRelease`; an unknown flag is exit 2 `InvalidUsage` everywhere. The
 * cluster options are global: before the command, after it, or from $KUBECONFIG. The error line on stderr names the
 * document's reason. Run as a real process (bin/agentplane.js, compiled: `npm run build` first); documents are
 * matched by reason, code and details.
 */
import { jest } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ErrorDocumentSchema } from '../../../src/cli/error-document-schema.js';
import type { ErrorDocument } from '../../../src/cli/error-document.js';
import { ExitCode } from '../../../src/cli/exit-codes.js';
import { MIRROR } from '../constructs/fixture.js';
import { DESCRIPTOR } from '../verify/fixtures.js';

jest.setTimeout(300_000);

const ROOT = path.resolve(import.meta.dirname, '../../..');
const BIN = path.join(ROOT, 'bin/agentplane.js');

function tmp(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), `agentplane-uniform-${prefix}-`));
}

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}): Run {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    cwd: work,
    env: { ...process.env, NODE_OPTIONS: '', KUBECONFIG: '', HOME: work, AGENTPLANE_MIRROR: MIRROR, ...env },
    timeout: 120_000,
    maxBuffer: 64 << 20,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * The error document of a `-o json` run, checked against the schema and the exit status; the error line on stderr
 * names the same reason.
 */
function documentOf(r: Run): ErrorDocument {
  const doc = ErrorDocumentSchema.parse(JSON.parse(r.stdout));
  expect(doc.exitCode).toBe(r.status);
  expect(r.stderr).toMatch(new RegExp(`^error \\[${doc.reason}\\]: `, 'm'));
  return doc;
}

/** A field of a detail object (migrate-storage reports its stop as `details.failure`). */
const nested = (doc: ErrorDocument, key: string, field: string): unknown =>
  (doc.details[key] as Record<string, unknown> | undefined)?.[field];

let work: string;
let kubeconfig: string;
let envDir: string;
let liveDir: string;
beforeAll(async () => {
  work = tmp('work');
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((resolve) => srv.close(resolve));
  kubeconfig = path.join(work, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: t, context: {cluster: c, user: u}}]\n`,
  );
  envDir = path.join(work, 'env');
  mkdirSync(envDir);
  writeFileSync(path.join(envDir, 'environment.json'), JSON.stringify(DESCRIPTOR));
  liveDir = path.join(work, 'live');
  mkdirSync(liveDir);
  writeFileSync(
    path.join(liveDir, 'cm.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\ndata: {a: b}\n',
  );
});

/** Every command that talks to a cluster, with the arguments it needs besides the cluster options. */
const CLUSTER_COMMANDS: ReadonlyArray<readonly [string, () => string[]]> = [
  ['verify', () => ['verify', '--env', envDir]],
  ['verify --from-cluster', () => ['verify', '--from-cluster']],
  ['compat', () => ['compat', '--env', envDir]],
  ['diff --live', () => ['diff', '--live', liveDir]],
  ['plan-upgrade', () => ['plan-upgrade', '--to', 'v1.0.3']],
  ['migrate-storage', () => ['migrate-storage']],
];

describe('an unreachable cluster: exit 7 ClusterUnreachable, details.category unreachable, in every command', () => {
  const unreachable = [ExitCode.cluster, 'ClusterUnreachable', 'unreachable'];
  test.each(CLUSTER_COMMANDS)('%s, --kubeconfig after the command', (_name, args) => {
    const r = cli([...args(), '--kubeconfig', kubeconfig, '-o', 'json']);
    const doc = documentOf(r);
    expect([doc.exitCode, doc.reason, doc.details['category'] ?? nested(doc, 'failure', 'category')]).toEqual(
      unreachable,
    );
    // the command's own code says where it stopped; the error line names the shared reason
    expect(doc.details['commandReason']).toEqual(expect.stringMatching(/^[A-Z][A-Za-z]+$/));
    expect(r.stderr).toMatch(/^error \[ClusterUnreachable\]: /m);
  });

  test.each(CLUSTER_COMMANDS)('%s, --kubeconfig before the command', (_name, args) => {
    const doc = documentOf(cli(['--kubeconfig', kubeconfig, ...args(), '-o', 'json']));
    expect([doc.exitCode, doc.reason, doc.details['category'] ?? nested(doc, 'failure', 'category')]).toEqual(
      unreachable,
    );
  });

  test.each(CLUSTER_COMMANDS)('%s, from $KUBECONFIG (a list with a missing file)', (_name, args) => {
    const list = ['/nonexistent/kubeconfig', kubeconfig].join(path.delimiter);
    const doc = documentOf(cli([...args(), '-o', 'json'], { KUBECONFIG: list }));
    expect([doc.exitCode, doc.reason, doc.details['category'] ?? nested(doc, 'failure', 'category')]).toEqual(
      unreachable,
    );
  });
});

describe('an unusable kubeconfig: exit 2 KubeconfigUnusable in every command', () => {
  test.each(CLUSTER_COMMANDS)('%s --context nope (global, before the command)', (_name, args) => {
    const doc = documentOf(cli(['--context', 'nope', ...args(), '--kubeconfig', kubeconfig, '-o', 'json']));
    expect([doc.reason, doc.exitCode, doc.details]).toEqual([
      'KubeconfigUnusable',
      ExitCode.usage,
      expect.objectContaining({ problem: 'context-unknown', name: 'nope', known: ['t'] }),
    ]);
  });

  test.each(CLUSTER_COMMANDS.filter(([n]) => n !== 'verify --from-cluster'))(
    '%s with no kubeconfig anywhere',
    (_name, args) => {
      const doc = documentOf(cli([...args(), '-o', 'json']));
      expect([doc.exitCode, doc.reason]).toEqual([
        ExitCode.usage,
        expect.stringMatching(/^(KubeconfigUnusable|InvalidUsage)$/),
      ]);
    },
  );
});

describe('an unusable manifest or descriptor: exit 4, one reason in every command that reads it', () => {
  test.each<[string, () => string[]]>([
    ['diff BASE HEAD', () => ['diff', badManifests(), liveDir]],
    ['diff --live', () => ['diff', '--live', badManifests(), '--kubeconfig', kubeconfig]],
  ])('a manifest that is not YAML: ManifestUnparsable (%s)', (_name, args) => {
    const doc = documentOf(cli([...args(), '-o', 'json']));
    expect([doc.reason, doc.exitCode, doc.details]).toEqual([
      'ManifestUnparsable',
      ExitCode.invalid,
      { file: 'broken.yaml', line: 2, column: 1 },
    ]);
  });

  test.each<[string, () => string[]]>([
    ['verify', () => ['verify', '--env', badEnvironment(), '--kubeconfig', kubeconfig]],
    ['compat', () => ['compat', '--env', badEnvironment(), '--kubeconfig', kubeconfig]],
  ])('an environment.json that is no descriptor: EnvironmentDescriptorInvalid (%s)', (_name, args) => {
    const doc = documentOf(cli([...args(), '-o', 'json']));
    expect([doc.reason, doc.exitCode, doc.details['problem']]).toEqual([
      'EnvironmentDescriptorInvalid',
      ExitCode.invalid,
      'schema',
    ]);
  });
});

/** A directory whose one manifest stops inside a flow collection. */
function badManifests(): string {
  const dir = tmp('bad');
  writeFileSync(path.join(dir, 'broken.yaml'), 'a: [\n');
  return dir;
}

/** An environment directory whose descriptor has the wrong kind. */
function badEnvironment(): string {
  const dir = tmp('badenv');
  writeFileSync(path.join(dir, 'environment.json'), JSON.stringify({ ...DESCRIPTOR, kind: 'Nope' }));
  return dir;
}

describe('an unknown release: exit 3 UnknownRelease in every command that names one', () => {
  test.each<[string, () => string[]]>([
    ['mirror pull', () => ['mirror', 'pull', 'v9.9.9', '--to', tmp('to')]],
    ['plan-upgrade --to', () => ['plan-upgrade', '--to', 'v9.9.9', '--from', 'v0.5.6']],
    ['plan-upgrade --from', () => ['plan-upgrade', '--to', 'v1.0.3', '--from', 'v9.9.9']],
    ['diff --release', () => ['diff', liveDir, liveDir, '--release', 'v9.9.9']],
    [
      'synth (a module loading it)',
      () => {
        const file = path.join(tmp('module'), 'environment.ts');
        writeFileSync(
          file,
          `import { defineEnvironments } from ${JSON.stringify(path.join(ROOT, 'src/index.js'))};\nexport default defineEnvironments(async (ctx) => { await ctx.loadRelease('v9.9.9'); });\n`,
        );
        return ['synth', file, '--out', tmp('out')];
      },
    ],
  ])('%s', (_name, args) => {
    const doc = documentOf(cli([...args(), '-o', 'json']));
    expect([doc.reason, doc.exitCode, doc.details['tag']]).toEqual(['UnknownRelease', ExitCode.release, 'v9.9.9']);
  });
});

test.each([
  ['compat'],
  ['diff'],
  ['migrate-storage'],
  ['mirror', 'pull', 'v1.0.3', '--to', '/tmp/agentplane-uniform-unused'],
  ['plan-upgrade', '--to', 'v1.0.3'],
  ['synth'],
  ['verify'],
  ['version'],
])('an unknown flag: exit 2 InvalidUsage (%s)', (...args) => {
  const doc = documentOf(cli([...args, '--no-such-flag', '-o', 'json']));
  expect([doc.reason, doc.exitCode, doc.details['code']]).toEqual([
    'InvalidUsage',
    ExitCode.usage,
    'commander.unknownOption',
  ]);
});

describe('version', () => {
  test('`version -o json`: the package version, the newest pinned release, node', () => {
    const r = cli(['version', '-o', 'json']);
    expect(r.status).toBe(0);
    const info = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(info).toEqual({
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      builtFor: 'v1.0.3',
      releases: expect.arrayContaining(['v0.5.6', 'v1.0.3']),
      node: process.version,
    });
    const plain = cli(['--version']);
    expect([plain.status, plain.stdout]).toEqual([0, `${String(info['version'])}\n`]);
    expect(cli(['version']).status).toBe(0);
  });
});
