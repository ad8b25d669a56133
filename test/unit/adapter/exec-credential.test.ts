/** The exec-credential authenticator running real plugin scripts (sh): caching until expiry, invalidation, errors naming the command. */
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { User } from '@kubernetes/client-node';
import { ExecCredentialError } from '../../../src/adapter/kubernetes/errors.js';
import { ExecCredentialAuth, type ExecSpec } from '../../../src/adapter/kubernetes/exec-credential.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'agentplane-exec-unit-'));
function script(name: string, body: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}
const runsFile = path.join(dir, 'runs');
const helper = script(
  'helper',
  `echo run >> "${runsFile}"
EXP=$(date -u -d "+$TTL seconds" +%Y-%m-%dT%H:%M:%SZ)
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-%s-%s","expirationTimestamp":"%s"}}' "$1" "$(wc -l < "${runsFile}" | tr -d ' ')" "$EXP"
echo "$KUBERNETES_EXEC_INFO" > "${dir}/exec-info"`,
);
const user = (name: string): User => ({ name, authProvider: { name: 'agentplane-exec', config: {} } }) as User;

async function header(auth: ExecCredentialAuth, name: string): Promise<string> {
  const opts: https.RequestOptions = {};
  await auth.applyAuthentication(user(name), opts);
  return String((opts.headers as Record<string, string>).Authorization);
}

beforeEach(() => writeFileSync(runsFile, ''));

test('a credential is reused until its expiry (minus 5 s), then the plugin runs again; invalidate forces a run', async () => {
  const specs = new Map<string, ExecSpec>([
    ['long', { command: helper, args: ['long'], env: [{ name: 'TTL', value: '60' }] }],
    ['short', { command: helper, args: ['short'], env: [{ name: 'TTL', value: '2' }] }],
  ]);
  const auth = new ExecCredentialAuth(specs);
  expect(await header(auth, 'long')).toBe('Bearer tok-long-1');
  expect(await header(auth, 'long')).toBe('Bearer tok-long-1');
  expect(auth.runs.get('long')).toBe(1);
  expect(JSON.parse(readFileSync(path.join(dir, 'exec-info'), 'utf8'))).toEqual({
    apiVersion: 'client.authentication.k8s.io/v1',
    kind: 'ExecCredential',
    spec: { interactive: false },
  });
  // expiring within the 5 s skew: never reused
  expect(await header(auth, 'short')).toBe('Bearer tok-short-2');
  expect(await header(auth, 'short')).toBe('Bearer tok-short-3');
  auth.invalidate('long');
  expect(await header(auth, 'long')).toBe('Bearer tok-long-4');
  expect(auth.runs.get('long')).toBe(2);
});

test('concurrent requests share one plugin run', async () => {
  const auth = new ExecCredentialAuth(
    new Map([['u', { command: helper, args: ['u'], env: [{ name: 'TTL', value: '60' }] }]]),
  );
  const headers = await Promise.all([header(auth, 'u'), header(auth, 'u'), header(auth, 'u')]);
  expect(new Set(headers)).toEqual(new Set(['Bearer tok-u-1']));
  expect(auth.runs.get('u')).toBe(1);
});

test('plugin failures are ExecCredentialErrors naming the command', async () => {
  const failing = script('failing', 'echo "cluster test unknown" >&2; exit 3');
  const garbage = script('garbage', 'echo not-json');
  const empty = script('empty', `printf '{"status":{}}'`);
  const auth = new ExecCredentialAuth(
    new Map<string, ExecSpec>([
      ['missing', { command: 'token-helper-not-installed' }],
      ['failing', { command: failing }],
      ['garbage', { command: garbage }],
      ['empty', { command: empty }],
    ]),
  );
  const err = (name: string) =>
    header(auth, name).then(
      () => undefined,
      (e: unknown) => e,
    );
  const failure = async (name: string) => {
    const e = (await err(name)) as ExecCredentialError;
    expect([e instanceof ExecCredentialError, e.reason]).toEqual([true, 'ExecCredentialFailed']);
    return { command: e.command, failure: e.failure, exitCode: e.exitCode, stderr: e.stderr };
  };
  expect(await failure('missing')).toEqual({ command: 'token-helper-not-installed', failure: 'not-found' });
  // prose: the plugin's own stderr is carried as it was written
  expect(await failure('failing')).toEqual({
    command: failing,
    failure: 'failed',
    exitCode: 3,
    stderr: 'cluster test unknown',
  });
  expect(await failure('garbage')).toEqual({ command: garbage, failure: 'not-exec-credential' });
  expect(await failure('empty')).toEqual({ command: empty, failure: 'no-credential' });
});
