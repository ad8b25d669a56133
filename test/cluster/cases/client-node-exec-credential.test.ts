/**
 * Case client-node-exec-credential on the real API server: a kubeconfig `exec` user whose plugin (a small shell script)
 * hands out real ServiceAccount tokens minted with the TokenRequest API and bound to a Secret, with an `expirationTimestamp`
 * the test controls. The adapter re-runs the plugin when that expiry passes, and once after a 401 (the test revokes a token
 * by deleting its bound Secret, which the API server checks on every request); a 401 that persists is reported naming the
 * context and user, never the token; a missing plugin is named.
 */
import * as k8s from '@kubernetes/client-node';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { connect, freshNamespace, waitFor, type Cluster } from '../helpers.js';
import { writeKubeconfig } from '../adapter/kube-env.js';

let c: Cluster;
let ns: string;
let dir: string;

const PLUGIN = `#!/bin/sh
# token-helper get-token --cluster test: prints an ExecCredential with the token in $DIR/token, valid for $DIR/ttl seconds.
DIR="$(dirname "$0")"
echo run >> "$DIR/runs"
TTL=$(cat "$DIR/ttl")
EXP=$(date -u -d "+$TTL seconds" +%Y-%m-%dT%H:%M:%SZ)
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"%s"}}' "$(cat "$DIR/token")" "$EXP"
`;

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'case25');
  await c.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'ci' } } });
  const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  await rbac.createNamespacedRole({
    namespace: ns,
    body: {
      metadata: { name: 'read-sandboxes' },
      rules: [{ apiGroups: ['agents.x-k8s.io'], resources: ['sandboxes'], verbs: ['list'] }],
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace: ns,
    body: {
      metadata: { name: 'ci-read' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-sandboxes' },
      subjects: [{ kind: 'ServiceAccount', name: 'ci', namespace: ns }],
    },
  });
  dir = mkdtempSync(path.join(os.tmpdir(), 'agentplane-exec-'));
  writeFileSync(path.join(dir, 'token-helper'), PLUGIN);
  chmodSync(path.join(dir, 'token-helper'), 0o755);
  writeFileSync(path.join(dir, 'runs'), '');
}, 30_000);
afterAll(async () => {
  if (ns) await c.core.deleteNamespace({ name: ns });
});

/** A token of SA `ci` bound to a fresh Secret `name` (deleting the Secret revokes it). */
async function mint(name: string): Promise<string> {
  const secret = await c.core.createNamespacedSecret({ namespace: ns, body: { metadata: { name } } });
  const tr = await c.core.createNamespacedServiceAccountToken({
    namespace: ns,
    name: 'ci',
    body: {
      spec: {
        audiences: [],
        expirationSeconds: 600,
        boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name, uid: secret.metadata!.uid! },
      },
    },
  });
  return tr.status!.token!;
}

function hand(token: string, ttlSeconds: number): void {
  writeFileSync(path.join(dir, 'token'), token);
  writeFileSync(path.join(dir, 'ttl'), String(ttlSeconds));
}

const runs = (): number => readFileSync(path.join(dir, 'runs'), 'utf8').split('\n').filter(Boolean).length;

/** Waits until the API server answers 401 to `token` (it reads the bound Secret through an informer, so not instantly). */
async function untilRejected(token: string): Promise<void> {
  const probe = KubeClient.connect({ kubeconfig: writeKubeconfig(c.info, 'probe', { token }) });
  await waitFor('revoked token rejected', 15_000, async () => {
    const r = await probe.call('list namespaces', () => probe.api(k8s.CoreV1Api).listNamespace());
    return r.kind === 'failed' && r.error.category === 'unauthenticated' ? true : undefined;
  });
}

function execUser(command: string): Record<string, unknown> {
  return {
    exec: {
      apiVersion: 'client.authentication.k8s.io/v1',
      command,
      args: ['get-token', '--cluster', 'test'],
      interactiveMode: 'Never',
    },
  };
}

test('refresh at expiry and once on 401; a lasting 401 names context and user, never the token', async () => {
  const client = KubeClient.connect({
    kubeconfig: writeKubeconfig(c.info, 'ci', execUser(path.join(dir, 'token-helper'))),
  });
  const list = () =>
    client.call(`list sandboxes.agents.x-k8s.io in ${ns}`, () =>
      client.api(k8s.CustomObjectsApi).listNamespacedCustomObject({
        group: 'agents.x-k8s.io',
        version: 'v1beta1',
        namespace: ns,
        plural: 'sandboxes',
      }),
    );

  hand(await mint('tok-a'), 8);
  expect((await list()).kind).toBe('ok');
  expect((await list()).kind).toBe('ok');
  expect(runs()).toBe(1); // cached while not expired

  hand(await mint('tok-b'), 3600);
  await new Promise((r) => setTimeout(r, 4000)); // tok-a's stated expiry (8 s, refreshed 5 s early) passes
  expect((await list()).kind).toBe('ok');
  expect(runs()).toBe(2);

  // Revoke tok-b mid-run: its bound Secret goes; the API server then answers 401.
  const tokB = readFileSync(path.join(dir, 'token'), 'utf8');
  await c.core.deleteNamespacedSecret({ namespace: ns, name: 'tok-b' });
  await untilRejected(tokB);
  hand(await mint('tok-c'), 3600);
  const afterRevoke = await list();
  expect(afterRevoke.kind).toBe('ok');
  expect(runs()).toBe(3); // one 401, one plugin run, one retry

  // A token that stays revoked: one retry, then a typed authentication failure.
  const revoked = readFileSync(path.join(dir, 'token'), 'utf8');
  await c.core.deleteNamespacedSecret({ namespace: ns, name: 'tok-c' });
  await untilRejected(revoked);
  const failed = await list();
  expect(runs()).toBe(4); // the 401 made it ask the plugin once more (same revoked token), then it gave up
  expect(failed.kind).toBe('failed');
  if (failed.kind === 'failed') {
    expect(failed.error).toMatchObject({
      category: 'unauthenticated',
      code: 401,
      request: { user: 'ci', context: 'ctx' },
    });
    expect(JSON.stringify(failed.error)).not.toContain(revoked);
  }
}, 60_000);

test('a missing plugin is an authentication failure naming the command', async () => {
  const client = KubeClient.connect({
    kubeconfig: writeKubeconfig(c.info, 'ci', execUser('token-helper-not-installed')),
  });
  const r = await client.call('list namespaces', () => client.api(k8s.CoreV1Api).listNamespace());
  expect(r.kind === 'failed' && r.error).toMatchObject({
    category: 'unauthenticated',
    credentialPlugin: 'token-helper-not-installed',
  });
});
