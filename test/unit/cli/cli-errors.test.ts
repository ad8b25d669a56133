/**
 * Usage errors and exit codes of `agentplane` as a real process (bin/agentplane.js), the way a new user meets them:
 * bad flag values, missing paths, dist/ with two environments, a mirror that does not exist. No cluster is needed:
 * every case here stops before one is dialled.
 */
import { jest } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MIRROR } from '../constructs/fixture.js';
import { DESCRIPTOR } from '../verify/fixtures.js';

jest.setTimeout(120_000);

const ROOT = path.resolve(import.meta.dirname, '../../..');
const DEV = path.join(ROOT, 'examples/dev-gvisor/environment.ts');
/** A stack frame line: no usage error may print one. */
const STACK = /^\s+at /m;

function cli(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): { status: number | null; stderr: string; stdout: string } {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/agentplane.js'), ...args], {
    encoding: 'utf8',
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, NODE_OPTIONS: '', KUBECONFIG: '', AGENTPLANE_MIRROR: MIRROR, ...opts.env },
    timeout: 120_000,
    maxBuffer: 64 << 20,
  });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

function tmp(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), `agentplane-cli-${prefix}-`));
}

/** A working directory whose dist/ holds the two environments `npm run synth` writes, and a kubeconfig file. */
function twoEnvironments(): { cwd: string; kubeconfig: string } {
  const cwd = tmp('two');
  for (const name of ['dev-gvisor', 'prod-kata']) {
    mkdirSync(path.join(cwd, 'dist', name), { recursive: true });
    writeFileSync(path.join(cwd, 'dist', name, 'environment.json'), JSON.stringify({ ...DESCRIPTOR, name }));
  }
  const kubeconfig = path.join(cwd, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    'apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: t, context: {cluster: c, user: u}}]\n',
  );
  return { cwd, kubeconfig };
}

describe('dist/ with two environments and no --env', () => {
  test.each(['compat', 'verify'])('%s: exit 2, the message and hint naming both, no stack', (command) => {
    const { cwd, kubeconfig } = twoEnvironments();
    const r = cli([command, '--kubeconfig', kubeconfig], { cwd });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /^error \[InvalidUsage\]: dist\/ holds 2 environments \(dist\/dev-gvisor, dist\/prod-kata\): say which one to use\nhint: pass --env, e.g. --env dist\/dev-gvisor\n/,
    );
    expect(r.stderr).not.toMatch(STACK);
    expect(r.stdout).toBe('');
  });

  test('verify --env dist: exit 2 naming the environments inside', () => {
    const { cwd, kubeconfig } = twoEnvironments();
    const r = cli(['verify', '--env', 'dist', '--kubeconfig', kubeconfig], { cwd });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      "error [InvalidUsage]: option '--env <dir>' argument 'dist' is invalid. dist holds no environment.json; the environments in it are dist/dev-gvisor, dist/prod-kata: pass one of them",
    );
  });

  test('verify with no dist/ at all: exit 2 saying to synthesize first', () => {
    const r = cli(['verify'], { cwd: tmp('empty') });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /^error \[InvalidUsage\]: no --env given and no synthesized environment under .*dist\nhint: run `agentplane synth` first, or pass --env/,
    );
    expect(r.stderr).toContain('(run agentplane verify --help for usage)');
  });
});

describe('bad flag values are usage errors (exit 2) naming the option and the expected form', () => {
  const env = twoEnvironments();
  const dev = path.join(env.cwd, 'dist/dev-gvisor');
  test.each<[string, string[], string]>([
    [
      'verify --probe-timeout abc',
      ['verify', '--env', dev, '--probe-timeout', 'abc'],
      `option '--probe-timeout <duration>' argument 'abc' is invalid. "abc" is not a duration: use e.g. 5s, 500ms or 2m`,
    ],
    [
      'verify --ready-timeout 0',
      ['verify', '--env', dev, '--ready-timeout', '0'],
      `option '--ready-timeout <duration>' argument '0' is invalid. "0" is not a positive duration`,
    ],
    [
      'verify --sandbox s1',
      ['verify', '--env', dev, '--sandbox', 's1'],
      `option '--sandbox <ns/name...>' argument 's1' is invalid. "s1" is not <namespace>/<name>: pass e.g. --sandbox sbx/s1`,
    ],
    [
      'verify --router-url',
      ['verify', '--env', dev, '--router-url', 'ftp://127.0.0.1'],
      `option '--router-url <url>' argument 'ftp://127.0.0.1' is invalid. "ftp://127.0.0.1" is not an http or https URL`,
    ],
    [
      'verify --router-canary-host',
      ['verify', '--env', dev, '--router-canary-host', 'pod-ip'],
      `option '--router-canary-host <ip>' argument 'pod-ip' is invalid. "pod-ip" is not an IP address: give e.g. 10.0.3.7`,
    ],
    [
      'verify --junit in a missing dir',
      ['verify', '--env', dev, '--junit', '/nonexistent/report.xml'],
      `option '--junit <file>' argument '/nonexistent/report.xml' is invalid. the directory /nonexistent does not exist`,
    ],
    [
      'verify --transport',
      ['verify', '--env', dev, '--transport', 'ssh'],
      `option '--transport <kind>' argument 'ssh' is invalid. Allowed choices are port-forward, direct, router.`,
    ],
    [
      'verify --env missing',
      ['verify', '--env', '/nonexistent'],
      `option '--env <dir>' argument '/nonexistent' is invalid. /nonexistent does not exist`,
    ],
    [
      'compat --controller',
      ['compat', '--env', dev, '--controller', 'outside'],
      `option '--controller <mode>' argument 'outside' is invalid. Allowed choices are deployment, external.`,
    ],
    [
      'compat --matrix missing',
      ['compat', '--env', dev, '--matrix', '/nonexistent.json'],
      `option '--matrix <file>' argument '/nonexistent.json' is invalid. /nonexistent.json does not exist`,
    ],
    [
      'synth -o',
      ['synth', DEV, '-o', 'xml'],
      `option '-o, --output <format>' argument 'xml' is invalid. Allowed choices are table, json, yaml, markdown.`,
    ],
    [
      'synth --out a file',
      ['synth', DEV, '--out', DEV],
      `option '--out <dir>' argument '${DEV}' is invalid. ${DEV} is a file, not a directory`,
    ],
    [
      'synth --lock in a missing dir',
      ['synth', DEV, '--lock', '/nonexistent/agentplane.lock.json'],
      `option '--lock <file>' argument '/nonexistent/agentplane.lock.json' is invalid. the directory /nonexistent does not exist: create it first`,
    ],
  ])('%s', (_name, args, message) => {
    const r = cli(args, { cwd: env.cwd });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`error [InvalidUsage]: ${message}`);
    expect(r.stderr).toContain(`(run agentplane ${args[0]} --help for usage)`);
    expect(r.stderr).not.toMatch(STACK);
  });

  test('--kubeconfig, a global option, after the command: a missing file is exit 2, KubeconfigUnusable as from $KUBECONFIG', () => {
    const flag = cli(['verify', '--env', dev, '--kubeconfig', '/nonexistent', '-o', 'json'], { cwd: env.cwd });
    const list = cli(['verify', '--env', dev, '-o', 'json'], {
      cwd: env.cwd,
      env: { KUBECONFIG: ['/nonexistent', '/nonexistent-too'].join(path.delimiter) },
    });
    for (const r of [flag, list]) {
      expect(r.status).toBe(2);
      expect(JSON.parse(r.stdout)).toMatchObject({ reason: 'KubeconfigUnusable', exitCode: 2 });
    }
    expect(JSON.parse(flag.stdout).details).toEqual({ problem: 'file-missing', name: '/nonexistent' });
    expect(JSON.parse(list.stdout).details).toEqual({ problem: 'none-found' });
  });

  test('an unknown release is a release error (exit 3), not a usage error: --release, --to', () => {
    for (const args of [
      ['diff', 'a', 'b', '--release', 'v9.9.9'],
      ['plan-upgrade', '--to', 'v0.6.0', '--from', 'v0.5.6'],
    ]) {
      const r = cli(args, { cwd: env.cwd });
      expect(r.status).toBe(3);
      expect(r.stderr).not.toMatch(STACK);
    }
  });

  test('a global option or an unknown command points at agentplane --help', () => {
    const r = cli(['--cache-dir', DEV, 'synth', DEV]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      `error [InvalidUsage]: option '--cache-dir <dir>' argument '${DEV}' is invalid. ${DEV} is a file, not a directory\n(run agentplane --help for usage)\n`,
    );
    expect(cli(['nosuch']).stderr).toContain('(run agentplane --help for usage)');
  });
});

describe('missing paths are usage errors', () => {
  test('synth nosuch.ts: exit 2', () => {
    const r = cli(['synth', 'nosuch.ts']);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      'error [InvalidUsage]: no such environment module: nosuch.ts (give the path of your environment module, e.g. ./environment.ts)\n(run agentplane synth --help for usage)\n',
    );
  });

  test('--help documents missing paths under exit 2', () => {
    expect(cli(['--help']).stdout).toMatch(
      /\n\s+2 +usage error: .*a named file or directory that does not exist, an unusable kubeconfig or context\n/,
    );
  });
});

describe('a mirror that does not exist is refused even when the cache is warm', () => {
  test('--mirror /nonexistent: exit 2 naming the option; AGENTPLANE_MIRROR=/nonexistent: exit 3 release error', () => {
    const cache = tmp('cache');
    const warm = cli(['--cache-dir', cache, 'synth', DEV, '--stdout']);
    expect(warm.status).toBe(0);

    const flag = cli(['--mirror', '/nonexistent', '--cache-dir', cache, 'synth', DEV, '--stdout']);
    expect(flag.status).toBe(2);
    expect(flag.stderr).toContain(
      "error [InvalidUsage]: option '--mirror <dir>' argument '/nonexistent' is invalid. /nonexistent does not exist: give an existing directory",
    );
    expect(flag.stdout).toBe('');

    const fromEnv = cli(['--cache-dir', cache, 'synth', DEV, '--stdout'], {
      env: { AGENTPLANE_MIRROR: '/nonexistent' },
    });
    expect(fromEnv.status).toBe(3);
    expect(fromEnv.stderr).toContain(
      'error [MirrorDirectoryMissing]: cannot reach release source mirror /nonexistent: the mirror directory does not exist',
    );
    // the hint is about the directory, not the network
    expect(fromEnv.stderr).toContain(
      'hint: /nonexistent does not exist: point AGENTPLANE_MIRROR (or --mirror) at an existing directory laid out as <dir>/<tag>/<path>, fill one with agentplane mirror pull <release...> --to DIR, or unset AGENTPLANE_MIRROR',
    );
    expect(fromEnv.stderr).not.toMatch(/network/);
    expect(fromEnv.stdout).toBe('');
  });
});

describe('kubeconfig context and synth output flags', () => {
  test('verify --context nope: exit 2, the message and its hint once, not "could not run"', () => {
    const { cwd, kubeconfig } = twoEnvironments();
    const r = cli(
      ['verify', '--env', path.join(cwd, 'dist/dev-gvisor'), '--kubeconfig', kubeconfig, '--context', 'nope'],
      { cwd },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      `error [KubeconfigUnusable]: context "nope" is not in kubeconfig "${kubeconfig}" (contexts: t); pass --context with one of the listed contexts (in code: the context option of connect())\n(run agentplane verify --help for usage)\n`,
    );
  });

  test('synth --stdout --out DIR: exit 2, nothing written', () => {
    const out = tmp('out');
    const r = cli(['synth', DEV, '--stdout', '--out', out]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      'error [InvalidUsage]: --stdout writes no files, so --out has no effect: give one of them',
    );
    expect(r.stderr).toContain('(run agentplane synth --help for usage)');
    expect(r.stdout).toBe('');
    expect(readdirSync(out)).toEqual([]);
  });

  test('synth --out with an absolute path shows it as given; a relative one stays relative', () => {
    const out = tmp('abs');
    const abs = cli(['synth', DEV, '--out', out, '-o', 'json']);
    expect(abs.status).toBe(0);
    const files = (JSON.parse(abs.stdout) as { environments: Array<{ files: string[] }> }).environments[0]!.files;
    expect(files.length).toBeGreaterThan(1);
    for (const f of files) expect(f.startsWith(`${out}/dev-gvisor/`)).toBe(true);
    expect(cli(['synth', DEV, '--out', out]).stdout).toContain(`│ ${path.join(out, 'dev-gvisor')} `);
    const cwd = tmp('rel');
    expect(cli(['synth', DEV, '--out', 'build'], { cwd }).stdout).toContain('│ build/dev-gvisor ');
  });
});
