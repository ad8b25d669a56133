/**
 * With `-o json|yaml` a failing command writes one error document to stdout (src/cli/error-document.ts), in the format
 * asked for, with the exit code it exits with; stderr keeps the message. Per command: a usage error, a typed domain
 * error and, where the command reaches one, an unreachable cluster (a closed loopback port) or release source, run as
 * a real process (bin/agentplane.js, compiled: `npm run build` first). Documents are matched by reason, exit code and
 * details, never by sentences.
 */
import { jest } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { ErrorDocumentSchema } from '../../../src/cli/error-document-schema.js';
import { errorDocument, requestedOutput, type ErrorDocument } from '../../../src/cli/error-document.js';
import { KubeconfigError } from '../../../src/adapter/kubernetes/errors.js';
import { ChecksumMismatchError } from '../../../src/releases/errors.js';
import { MIRROR } from '../constructs/fixture.js';
import { DESCRIPTOR } from '../verify/fixtures.js';

jest.setTimeout(180_000);

const ROOT = path.resolve(import.meta.dirname, '../../..');
const BIN = path.join(ROOT, 'bin/agentplane.js');
const DEV = path.join(ROOT, 'examples/dev-gvisor/environment.ts');

function tmp(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), `agentplane-errdoc-${prefix}-`));
}

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}, cwd = ROOT): Run {
  const r = spawnSync(process.execPath, [BIN, '--cache-dir', tmp('cache'), ...args], {
    encoding: 'utf8',
    cwd,
    env: { ...process.env, NODE_OPTIONS: '', KUBECONFIG: '', AGENTPLANE_MIRROR: MIRROR, ...env },
    timeout: 180_000,
    maxBuffer: 64 << 20,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The one error document on stdout (the whole of stdout parses as it), checked against the schema and the exit code. */
function documentOf(r: Run, format: 'json' | 'yaml' = 'json'): ErrorDocument {
  const doc = ErrorDocumentSchema.parse(format === 'json' ? JSON.parse(r.stdout) : parse(r.stdout));
  expect(doc.exitCode).toBe(r.status);
  // the error line on stderr names the document's reason code
  expect(r.stderr).toMatch(new RegExp(`^error \\[${doc.reason}\\]: `, 'm'));
  return doc;
}

const summary = (d: ErrorDocument): [string, string, number] => [d.command, d.reason, d.exitCode];

let kubeconfig: string;
beforeAll(async () => {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((resolve) => srv.close(resolve));
  kubeconfig = path.join(tmp('kube'), 'kubeconfig');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: t, context: {cluster: c, user: u}}]\n`,
  );
});

/** A directory holding an environment.json with `content`. */
function envDir(content: string): string {
  const dir = tmp('env');
  writeFileSync(path.join(dir, 'environment.json'), content);
  return dir;
}

describe('the document itself', () => {
  test('the hint is split from the message; the class fields are details, JSON-safe', () => {
    const release = new ChecksumMismatchError('k8s/x.yaml', 'aa', 'bb', 'mirror /m', 'mirror');
    const doc = ErrorDocumentSchema.parse(errorDocument(release, 'synth', 3));
    // prose: the document's message is the subject: the hint must be split out of it
    expect([doc.reason, doc.hint, doc.message.includes('hint')]).toEqual(['ChecksumMismatch', release.hint, false]);
    expect(doc.details).toEqual({
      file: 'k8s/x.yaml',
      expected: 'aa',
      actual: 'bb',
      source: 'mirror /m',
      origin: 'mirror',
    });
    const kube = errorDocument(new KubeconfigError('no context "x"', 'pass --context'), 'verify', 2);
    // prose: the document's message is the subject: the error's words without the hint it appends
    expect([kube.message, kube.hint]).toEqual(['no context "x"', 'pass --context']);
    // an error's own `details` field is the document's details, one level, not details.details
    const none = errorDocument(
      new KubeconfigError('no kubeconfig', 'pass --kubeconfig', { problem: 'none-found' }),
      'verify',
      2,
    );
    expect(none.details).toEqual({ problem: 'none-found' });
  });

  test("its apiVersion is in AgentPlane's one API group, the descriptor's", () => {
    const doc = errorDocument(new KubeconfigError('no context "x"', 'pass --context'), 'verify', 2);
    expect(doc.apiVersion).toBe('agentplane.dev/v1alpha1');
    expect(doc.apiVersion).toBe(DESCRIPTOR.apiVersion);
  });

  test('anything else is InternalError with its class name (the stack stays on stderr)', () => {
    const doc = ErrorDocumentSchema.parse(errorDocument(new TypeError('x is undefined'), 'diff', 1));
    expect([doc.reason, doc.exitCode, doc.details]).toEqual(['InternalError', 1, { error: 'TypeError' }]);
    expect(JSON.stringify(doc)).not.toMatch(/\n\s+at /);
  });

  test('-o is read from the command line as commander takes it: the last one wins, nothing after --', () => {
    expect(requestedOutput(['verify', '-o', 'table', '--output', 'json'])).toBe('json');
    expect(requestedOutput(['verify', '-oyaml'])).toBe('yaml');
    expect(requestedOutput(['verify', '--output=yaml', '--kubeconfig', 'k'])).toBe('yaml');
    expect(requestedOutput(['diff', 'a', 'b', '--', '-o', 'json'])).toBeUndefined();
    expect(requestedOutput(['synth', 'x.ts'])).toBeUndefined();
  });
});

describe('synth', () => {
  test('usage: an unknown flag (yaml) and a missing module (json)', () => {
    const flag = cli(['synth', DEV, '-o', 'yaml', '--no-such-flag']);
    expect(summary(documentOf(flag, 'yaml'))).toEqual(['synth', 'InvalidUsage', 2]);
    expect(documentOf(flag, 'yaml').details).toEqual({ code: 'commander.unknownOption' });
    expect(flag.stderr).toContain('(run agentplane synth --help for usage)');
    const missing = cli(['synth', '/nonexistent/environment.ts', '-o', 'json']);
    expect(summary(documentOf(missing))).toEqual(['synth', 'InvalidUsage', 2]);
  });

  // The module is CommonJS (no package.json beside it, as in a `cdk8s init` project): its error is still the CLI's own
  // class (one copy of the library), so it keeps its reason and fields instead of becoming EnvironmentModuleUnusable.
  test('domain: bad template props carry the construct path, the prop and the value', () => {
    const dir = tmp('module');
    const file = path.join(dir, 'environment.ts');
    writeFileSync(
      file,
      "import { defineEnvironments, AgentEnvironment, sandboxdPodSpec, SANDBOXD_RUNTIME } from 'cdk8s-agentplane';\n" +
        'export default defineEnvironments(async (ctx) => {\n' +
        "  const env = new AgentEnvironment(ctx.app, 'env', { release: await ctx.loadRelease('v0.5.6') });\n" +
        "  const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });\n" +
        "  env.addTemplate('py', { runtimeClass: rc, runtime: SANDBOXD_RUNTIME, podSpec: sandboxdPodSpec({ image: 'registry.example.internal/sandboxd:v0.5.6', workspaceSize: 'big' }) });\n" +
        '});\n',
    );
    for (const output of ['json', 'yaml'] as const) {
      const doc = documentOf(cli(['synth', file, '--out', path.join(dir, 'out'), '-o', output]), output);
      expect(summary(doc)).toEqual(['synth', 'InvalidProps', 4]);
      expect(doc.details['path']).toBe('env/py');
      expect(doc.details['construct']).toBe('SandboxTemplate');
      expect(doc.details['problems']).toEqual([
        expect.objectContaining({
          prop: 'podSpec.volumes.workspace.emptyDir.sizeLimit',
          reason: 'NotAQuantity',
          value: 'big',
        }),
      ]);
      expect(doc.hint).toEqual(expect.any(String));
      expect(doc.message).not.toContain(doc.hint);
    }
  });

  test('release source unreachable: a missing AGENTPLANE_MIRROR, also under --stdout -o json', () => {
    const r = cli(['synth', DEV, '--stdout', '-o', 'json'], { AGENTPLANE_MIRROR: '/nonexistent' });
    const doc = documentOf(r);
    expect(summary(doc)).toEqual(['synth', 'MirrorDirectoryMissing', 3]);
    expect(doc.details['source']).toBe('mirror /nonexistent');
  });

  test('-o table keeps stdout empty', () => {
    const r = cli(['synth', DEV], { AGENTPLANE_MIRROR: '/nonexistent' });
    expect(r.status).toBe(3);
    expect(r.stdout).toBe('');
  });
});

describe('verify', () => {
  test('usage: no --env while dist/ holds two environments', () => {
    const cwd = tmp('two');
    for (const name of ['a', 'b']) {
      mkdirSync(path.join(cwd, 'dist', name), { recursive: true });
      writeFileSync(path.join(cwd, 'dist', name, 'environment.json'), JSON.stringify({ ...DESCRIPTOR, name }));
    }
    const r = cli(['verify', '--kubeconfig', kubeconfig, '-o', 'json'], {}, cwd);
    expect(summary(documentOf(r))).toEqual(['verify', 'InvalidUsage', 2]);
    expect(r.stderr).toContain('(run agentplane verify --help for usage)');
  });

  test('domain: an environment.json that is not a descriptor', () => {
    const doc = documentOf(
      cli(['verify', '--env', envDir('{"name": 1}'), '--kubeconfig', kubeconfig, '-o', 'yaml']),
      'yaml',
    );
    expect(summary(doc)).toEqual(['verify', 'EnvironmentDescriptorInvalid', 4]);
  });

  test('unreachable cluster: ClusterUnreachable, exit 7, details.category, VerifyCouldNotRun where it stopped', () => {
    const dir = envDir(JSON.stringify(DESCRIPTOR));
    const doc = documentOf(cli(['verify', '--env', dir, '--kubeconfig', kubeconfig, '-o', 'json']));
    expect(summary(doc)).toEqual(['verify', 'ClusterUnreachable', 7]);
    expect(doc.details).toEqual({ category: 'unreachable', commandReason: 'VerifyCouldNotRun' });
    const table = cli(['verify', '--env', dir, '--kubeconfig', kubeconfig]);
    expect([table.status, table.stdout]).toEqual([7, '']);
  });

  test('--from-cluster against an unreachable cluster: ClusterUnreachable, exit 7, StoredReportUnusable where it stopped', () => {
    const doc = documentOf(cli(['verify', '--from-cluster', '--kubeconfig', kubeconfig, '-o', 'json']));
    expect(summary(doc)).toEqual(['verify', 'ClusterUnreachable', 7]);
    expect(doc.details).toEqual({
      configMap: 'agent-sandboxes/agentplane-verify-report',
      category: 'unreachable',
      commandReason: 'StoredReportUnusable',
    });
  });
});

describe('compat (failures: the code every command gives them)', () => {
  test('usage: a bad --controller', () => {
    const r = cli(['compat', '--env', envDir(JSON.stringify(DESCRIPTOR)), '--controller', 'outside', '-o', 'json']);
    expect(summary(documentOf(r))).toEqual(['compat', 'InvalidUsage', 2]);
    expect(documentOf(r).details).toEqual({ code: 'commander.invalidArgument' });
  });

  test('domain: an invalid descriptor', () => {
    const doc = documentOf(cli(['compat', '--env', envDir('[]'), '--kubeconfig', kubeconfig, '-o', 'json']));
    expect(summary(doc)).toEqual(['compat', 'EnvironmentDescriptorInvalid', 4]);
  });

  test('unreachable cluster: ClusterUnreachable, no worksheet', () => {
    const r = cli(['compat', '--env', envDir(JSON.stringify(DESCRIPTOR)), '--kubeconfig', kubeconfig, '-o', 'yaml']);
    const doc = documentOf(r, 'yaml');
    expect(summary(doc)).toEqual(['compat', 'ClusterUnreachable', 7]);
    expect(doc.details).toEqual({ category: 'unreachable', commandReason: 'ClusterUnusable' });
    expect(parse(r.stdout)).not.toHaveProperty('rows');
  });
});

describe('diff (failures: the code every command gives them)', () => {
  test('usage: no BASE without --live', () => {
    expect(summary(documentOf(cli(['diff', '-o', 'json'])))).toEqual(['diff', 'InvalidUsage', 2]);
  });

  test('domain: a manifest that is not YAML names the file', () => {
    const base = tmp('base');
    const head = tmp('head');
    writeFileSync(path.join(head, 'bad.yaml'), 'kind: [unclosed\n');
    const doc = documentOf(cli(['diff', base, head, '-o', 'json']));
    expect(summary(doc)).toEqual(['diff', 'ManifestUnparsable', 4]);
    expect(doc.details['file']).toBe('bad.yaml');
  });

  test('unreachable cluster with --live', () => {
    const head = tmp('live');
    writeFileSync(
      path.join(head, 'cm.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\ndata: {a: b}\n',
    );
    const doc = documentOf(cli(['diff', '--live', head, '--kubeconfig', kubeconfig, '-o', 'json']));
    expect(summary(doc)).toEqual(['diff', 'ClusterUnreachable', 7]);
    expect([doc.details['category'], doc.details['commandReason']]).toEqual(['unreachable', 'LiveReadFailed']);
  });
});

describe('plan-upgrade', () => {
  test('usage: --to missing', () => {
    const doc = documentOf(cli(['plan-upgrade', '--from', 'v0.4.6', '-o', 'json']));
    expect(summary(doc)).toEqual(['plan-upgrade', 'InvalidUsage', 2]);
    expect(doc.details).toEqual({ code: 'commander.missingMandatoryOptionValue' });
  });

  test('release: a missing AGENTPLANE_MIRROR', () => {
    const doc = documentOf(
      cli(['plan-upgrade', '--from', 'v0.4.6', '--to', 'v0.5.6', '-o', 'yaml'], { AGENTPLANE_MIRROR: '/nonexistent' }),
      'yaml',
    );
    expect(summary(doc)).toEqual(['plan-upgrade', 'MirrorDirectoryMissing', 3]);
  });

  test('unreachable cluster: exit 7', () => {
    const doc = documentOf(cli(['plan-upgrade', '--to', 'v0.5.6', '--kubeconfig', kubeconfig, '-o', 'json']));
    expect([doc.command, doc.exitCode]).toEqual(['plan-upgrade', 7]);
  });
});

describe('migrate-storage', () => {
  test('unreachable cluster: ClusterUnreachable (StorageReadFailed where it stopped), exit 7, nothing done (details.result has no kind)', () => {
    for (const args of [[], ['--apply']]) {
      const doc = documentOf(cli(['migrate-storage', ...args, '--kubeconfig', kubeconfig, '-o', 'json']));
      expect(summary(doc)).toEqual(['migrate-storage', 'ClusterUnreachable', 7]);
      expect(doc.details['commandReason']).toBe('StorageReadFailed');
      expect((doc.details as { result: { kinds: unknown[] } }).result.kinds).toEqual([]);
    }
  });

  test('usage: a --resume that is not a marker', () => {
    const doc = documentOf(cli(['migrate-storage', '--resume', 'yesterday', '-o', 'json']));
    expect(summary(doc)).toEqual(['migrate-storage', 'InvalidUsage', 2]);
  });
});

describe('mirror pull', () => {
  test('release: an unknown release is UnknownRelease, exit 3, as in synth and plan-upgrade', () => {
    const r = cli(['mirror', 'pull', 'v9.9.9', '--to', tmp('to'), '-o', 'json']);
    expect(summary(documentOf(r))).toEqual(['mirror pull', 'UnknownRelease', 3]);
  });

  test('domain: a source mirror with a changed file is a checksum mismatch naming the file', () => {
    const source = tmp('source');
    cpSync(path.join(MIRROR, 'v0.5.6'), path.join(source, 'v0.5.6'), { recursive: true });
    const file = 'k8s/crds/extensions.agents.x-k8s.io_sandboxwarmpools.yaml';
    writeFileSync(path.join(source, 'v0.5.6', file), '# changed\n', { flag: 'a' });
    const to = tmp('to');
    const doc = documentOf(cli(['--mirror', source, 'mirror', 'pull', 'v0.5.6', '--to', to, '-o', 'json']));
    expect(summary(doc)).toEqual(['mirror pull', 'ChecksumMismatch', 3]);
    expect([doc.details['file'], doc.details['origin']]).toEqual([file, 'mirror']);
  });

  test('release source unreachable: a missing AGENTPLANE_MIRROR', () => {
    const doc = documentOf(
      cli(['mirror', 'pull', 'v0.5.6', '--to', tmp('to'), '-o', 'json'], { AGENTPLANE_MIRROR: '/nonexistent' }),
    );
    expect(summary(doc)).toEqual(['mirror pull', 'MirrorDirectoryMissing', 3]);
  });
});
