/**
 * `agentplane compat --controller external` as a real process against the test cluster, whose controller is the
 * harness's local process: it matches the committed matrix's `agent-sandbox-controller v0.5.6 (local process)` row,
 * and a part the environment does not deploy (here: no router) is `not deployed`, not a gap, so the exit is 0.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect } from './helpers.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** A v0.5.6 descriptor with one sandboxd template and no router (the worksheet reads only what it declares). */
function envDir(): string {
  const d = {
    apiVersion: 'agentplane.dev/v1alpha1', kind: 'EnvironmentDescriptor', name: 'compat-cli',
    release: { tag: 'v0.5.6', commit: '211b7579cabed9460c1a692eb687084ff4c5879d', family: 'v0.5', apiVersions: { Sandbox: 'agents.x-k8s.io/v1beta1' } },
    install: { namespace: 'agent-sandbox-system', controllerDeployment: 'agent-sandbox-controller', controllerImage: 'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6', extensions: true, certificates: 'external', serverSideApply: [] },
    runtimeClasses: [],
    templates: [{ namespace: 'compat-cli', name: 'shell', runtimeClassName: '', networkPolicyManagement: 'Managed', podLabels: { app: 'sandbox' }, runtime: { kind: 'sandboxd', container: 'sandboxd', ports: [8080, 9090] }, images: [{ container: 'sandboxd', image: 'sandboxd:v0.5.6' }] }],
    warmPools: [], claims: [], router: null, networkPolicies: [], images: {},
    capabilities: [{ capability: 'sandbox-api', required: 'verified' }],
  };
  const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-compat-'));
  writeFileSync(path.join(dir, 'environment.json'), JSON.stringify(d));
  return dir;
}

test('out-of-cluster controller of the pinned release is covered; no router is "not deployed"; exit 0', () => {
  const c = connect();
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/agentplane.js'), 'compat', '--env', envDir(), '--kubeconfig', c.info.kubeconfig, '--controller', 'external', '-o', 'json'], { encoding: 'utf8', cwd: ROOT, timeout: 60_000 });
  expect(r.stderr).toBe('');
  const out = JSON.parse(r.stdout) as { release: string; rows: Array<{ part: string; live: string; tested: string }> };
  expect(out.release).toBe('v0.5.6');
  expect(out.rows.map((row) => [row.part, row.tested])).toEqual([
    ['kubernetes', 'yes'], ['crdRelease', 'yes'], ['controller', 'yes'], ['extensions', 'yes'], ['router', 'not deployed'],
    ['runtimeServer', 'yes'], ['clientSdk', 'n/a'], ['containerRuntime', 'yes'], ['cni', 'n/a'],
  ]);
  expect(out.rows.find((row) => row.part === 'controller')!.live).toBe('out-of-cluster (assumed v0.5.6, the pinned release)');
  expect(r.status).toBe(0);
}, 90_000);
