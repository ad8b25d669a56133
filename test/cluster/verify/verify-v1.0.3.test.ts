/**
 * The verifier on Agent Sandbox v1.0.3, live: a v1.0.3 cluster of this file's own (secondCluster: own run dir, pod net
 * and release, kwok nodes only; the real v1.0.3 controller and router, and the stand-in running v1.0.3's own sandboxd
 * with `--listen-host=<pod IP>`, `packages/sandboxd/cmd/sandboxd/main.go@v1.0.3`). An environment synthesized with
 * AgentPlane's constructs from `loadRelease('v1.0.3')` (as test-cluster/env/v1.0.3.ts: template on the stand-in
 * RuntimeClass, warm pool, allow-all router as the local router process runs) is applied and verified with `runVerify`
 * from its descriptor:
 * - `conversion` is `unsupported` with `ReleaseHasNoConversion`: v1.0.3 serves v1beta1 only and ships no conversion
 *   webhook (`k8s/crds/*.yaml@v1.0.3`) — never failed, never verified;
 * - sandbox-api and extensions-api reach their required states; runtime-exec is `verified` against the real v1.0.3
 *   sandboxd on the pod IP;
 * - negative: the same environment with the runtime silent (stand-in mode `none`) keeps runtime-exec below verified
 *   with `RuntimeSilent`.
 * The adapter on that cluster detects family v1.0 and reports conversion `unsupported`. Last, a conversion webhook stanza
 * left on the Sandbox CRD is named (ConversionWebhookLeftover) and conversion still reads `unsupported`.
 */
import * as k8s from '@kubernetes/client-node';
import { App } from 'cdk8s';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KubeCapabilityAdapter } from '../../../src/adapter/adapter.js';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { KubeSessions } from '../../../src/adapter/kubernetes/sessions.js';
import {
  AgentEnvironment,
  descriptorJson,
  sandboxdPodSpec,
  SANDBOXD_GRPC_PORT,
  SANDBOXD_REST_PORT,
  SANDBOXD_RUNTIME,
} from '../../../src/constructs/index.js';
import { loadRelease, type LoadedRelease } from '../../../src/releases/index.js';
import { synthesizeEnvironment } from '../../../src/synth/index.js';
import { planFromDescriptor, runVerify, RUN_LABEL } from '../../../src/verify/index.js';
import type { VerifyReport } from '../../../src/verify/report.js';
import { serverSideApply, type KubeObject } from '../../../test-cluster/kube.js';
import { readRuntimes, RUNTIME_ANNOTATION } from '../../../test-cluster/runtime.js';
import { freshNamespace, secondCluster, waitFor, type Cluster } from '../helpers.js';
import { MIRROR } from '../../mirror.js';

const SANDBOXD_IMAGE = 'registry.local/agentplane-test/sandboxd:v1.0.3';
const ROUTER_IMAGE = 'registry.local/agentplane-test/sandbox-router:v1.0.3';
const cluster = secondCluster('verify-v1.0.3', { release: 'v1.0.3', podNet: 15 });
let c: Cluster;
let loaded: LoadedRelease;

beforeAll(async () => {
  c = cluster.start();
  loaded = await loadRelease('v1.0.3', { mirror: MIRROR });
}, 240_000);

afterAll(() => cluster.stop(), 60_000);

/**
 * Synthesizes the v1.0.3 environment in `ns` (its pods' runtime: `mode`), applies its template and pool (the
 * cluster's install, RuntimeClass and router come from test-cluster/env/v1.0.3.ts), writes environment.json.
 */
async function environment(ns: string, mode: 'sandboxd' | 'none'): Promise<string> {
  const env = new AgentEnvironment(new App(), 'verify-v103', {
    release: loaded,
    install: false,
    defaultNamespace: ns,
    createNamespaces: false,
  });
  const rc = env.addRuntimeClass('standin', {
    preset: 'gvisor',
    name: 'standin',
    handler: 'standin',
    scheduling: { nodeSelector: { 'agentplane.io/runtime': 'standin' } },
  });
  const template = env.addTemplate('sandboxd', {
    name: 'sandboxd',
    runtimeClass: rc,
    podSpec: sandboxdPodSpec({ image: SANDBOXD_IMAGE }),
    runtime: SANDBOXD_RUNTIME,
    podMetadata: { annotations: { [RUNTIME_ANNOTATION]: mode } },
  });
  env.addWarmPool('pool', { name: 'sandboxd', template, replicas: 1 });
  env.addRouter('router', {
    image: ROUTER_IMAGE,
    authorization: { mode: 'allow-all', acknowledgeUnauthenticated: true },
    sandboxPorts: [SANDBOXD_REST_PORT, SANDBOXD_GRPC_PORT],
    callers: [],
  });
  const s = synthesizeEnvironment(env);
  expect(s.descriptor.release.tag).toBe('v1.0.3');
  const objects = s.objects
    .map((o) => o.object as unknown as KubeObject)
    .filter((o) => o.kind === 'SandboxTemplate' || o.kind === 'SandboxWarmPool');
  expect(objects.map((o) => `${o.apiVersion} ${o.kind}`).sort()).toEqual([
    'extensions.agents.x-k8s.io/v1beta1 SandboxTemplate',
    'extensions.agents.x-k8s.io/v1beta1 SandboxWarmPool',
  ]);
  await serverSideApply(c.info.kubeconfig, objects);
  const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-verify-v103-'));
  writeFileSync(path.join(dir, 'environment.json'), descriptorJson(s.descriptor));
  // The pool's pod is served (or, for `none`, recorded silent) by the stand-in before the verifier starts.
  await waitFor(`stand-in runtime for the pool in ${ns}`, 60_000, async () =>
    readRuntimes(cluster.runDir).find(
      (r) => r.namespace === ns && r.mode === mode && (mode === 'none' || r.pid !== null),
    ),
  );
  return dir;
}

async function verify(dir: string, runId: string): Promise<VerifyReport> {
  const plan = planFromDescriptor(JSON.parse(readFileSync(path.join(dir, 'environment.json'), 'utf8')), dir, {
    transport: 'direct',
    routerUrl: `http://127.0.0.1:${c.info.ports.routerHttp}`,
    probeTimeoutMs: 3_000,
    readyTimeoutMs: 60_000,
  });
  expect(plan.release).toBe('v1.0.3');
  // A v1.0 descriptor declares no `conversion` (the release has none: AgentEnvironment adds it only for a family that
  // converts). Asked for here with required `absent`, so the row is reported and judged: `unsupported` meets only that.
  expect(plan.requirements.map((r) => r.name)).not.toContain('conversion');
  const { report } = await runVerify({
    plan: { ...plan, requirements: [...plan.requirements, { name: 'conversion', required: 'absent' }] },
    client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
    loaded,
    controllerMode: 'external',
    progress: () => undefined,
    runId,
  });
  return report;
}

const row = (r: VerifyReport, name: string) => {
  const found = r.capabilities.find((x) => x.name === name);
  if (!found) throw new Error(`no row ${name} in the report: ${r.capabilities.map((x) => x.name).join(', ')}`);
  return found;
};

async function leftovers(ns: string, runId: string): Promise<string[]> {
  const out: string[] = [];
  for (const [group, plural] of [
    ['agents.x-k8s.io', 'sandboxes'],
    ['extensions.agents.x-k8s.io', 'sandboxclaims'],
    ['extensions.agents.x-k8s.io', 'sandboxwarmpools'],
  ] as const) {
    const list = (await c.custom.listNamespacedCustomObject({
      group,
      version: 'v1beta1',
      plural,
      namespace: ns,
      labelSelector: `${RUN_LABEL}=${runId}`,
    })) as { items: Array<{ metadata: { name: string } }> };
    out.push(...list.items.map((i) => `${plural}/${i.metadata.name}`));
  }
  return out;
}

test('the adapter on the v1.0.3 cluster: family v1.0, conversion unsupported, both APIs compatible at v1beta1', async () => {
  expect(c.info.release).toBe('v1.0.3');
  const client = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
  const live = await new KubeSessions(client).liveRelease(true);
  expect(live.kind).toBe('ok');
  if (live.kind !== 'ok') return;
  expect(live.value.family).toBe('v1.0');
  expect(live.value.coreVersions).toEqual(['v1beta1']);
  const caps = await new KubeCapabilityAdapter({ client }).capabilities('verify-v1.0.3');
  // prose: the message names the served version the state rests on
  expect(caps.capabilities).toEqual([
    { name: 'sandbox-api', state: 'compatible', reason: 'VersionServed', message: expect.stringContaining('v1beta1') },
    {
      name: 'extensions-api',
      state: 'compatible',
      reason: 'VersionServed',
      message: expect.stringContaining('v1beta1'),
    },
    {
      name: 'conversion',
      state: 'unsupported',
      reason: 'FamilyConvertsNothing',
      message: 'family v1.0 serves one API version and converts nothing',
    },
  ]);
}, 60_000);

test('healthy sandboxd: conversion unsupported (ReleaseHasNoConversion), the APIs meet their requirements, runtime-exec verified against v1.0.3 sandboxd', async () => {
  const ns = await freshNamespace(c, 'vfy103');
  const dir = await environment(ns, 'sandboxd');
  // The pool's pod is served by v1.0.3's own sandboxd, bound to the pod IP itself (`--listen-host`).
  const served = readRuntimes(cluster.runDir).filter((r) => r.namespace === ns && r.mode === 'sandboxd');
  expect(served.length).toBeGreaterThan(0);
  for (const r of served) {
    expect(r.listenHost).toBe(r.podIP);
    const argv = readFileSync(`/proc/${r.pid}/cmdline`, 'utf8').split('\0');
    expect(argv).toContain(`--listen-host=${r.podIP}`);
    expect(argv.some((a) => a.includes(`${path.sep}agent-sandbox-v1.0.3${path.sep}`))).toBe(true);
  }
  const report = await verify(dir, 'ab0001');

  const conversion = row(report, 'conversion');
  expect(conversion.state).toBe('unsupported');
  expect(conversion.evidence.map((e) => [e.verdict, e.reason])).toEqual([['unsupported', 'ReleaseHasNoConversion']]);
  // prose: the evidence cites the pinned release files it rests on (path@tag), which users follow up
  expect(conversion.evidence[0]!.message).toContain('k8s/crds/*.yaml@v1.0.3');
  expect(['failed', 'verified']).not.toContain(conversion.state);

  for (const name of ['sandbox-api', 'extensions-api']) {
    const r = row(report, name);
    expect({ name, met: r.met, nextReason: r.nextReason }).toEqual({ name, met: true, nextReason: null });
    expect(r.evidence.some((e) => e.reason === 'ConversionWebhookLeftover')).toBe(false);
  }

  const exec = row(report, 'runtime-exec');
  expect({ state: exec.state, nextReason: exec.nextReason }).toEqual({ state: 'verified', nextReason: null });
  const proven = exec.evidence.filter((e) => e.step === 'verified' && e.verdict === 'proven');
  expect(proven.length).toBeGreaterThan(0);
  // The runtime that answered: a warm pool member's sandboxd (adopted by the probe claim).
  expect(report.tuple.runtimeServer.source).toMatch(/answered: sandboxd of [\w-]+ via direct$/);
  expect(report.tuple.crdRelease.value).toBe('v1.0.3');
  expect(report.leftovers).toEqual([]);
  expect(await leftovers(ns, 'ab0001')).toEqual([]);
}, 300_000);

test('silent runtime (stand-in none): runtime-exec stays below verified with RuntimeSilent; conversion still unsupported, not failed', async () => {
  const ns = await freshNamespace(c, 'vfy103-silent');
  const dir = await environment(ns, 'none');
  const report = await verify(dir, 'ab0002');
  const exec = row(report, 'runtime-exec');
  expect(exec.state).not.toBe('verified');
  expect(exec.state).toBe('configured');
  expect(exec.nextReason).toBe('RuntimeSilent');
  const silent = exec.evidence.find((e) => e.reason === 'RuntimeSilent')!;
  expect([silent.step, silent.verdict]).toEqual(['verified', 'unknown']);
  expect(row(report, 'conversion').state).toBe('unsupported');
  expect(report.outcome).toBe('not-verified');
  expect(await leftovers(ns, 'ab0002')).toEqual([]);
}, 300_000);

// Last: it changes the cluster-scoped Sandbox CRD of this file's own cluster.
test('a conversion webhook stanza left on the Sandbox CRD: sandbox-api names ConversionWebhookLeftover and misses its requirement; conversion stays unsupported', async () => {
  const ext = c.kc.makeApiClient(k8s.ApiextensionsV1Api);
  // What a v0.5.x install leaves behind when only the CRDs' versions are rewritten (`k8s/crds/*.yaml@v0.5.6`).
  await ext.patchCustomResourceDefinition(
    {
      name: 'sandboxes.agents.x-k8s.io',
      body: {
        spec: {
          conversion: {
            strategy: 'Webhook',
            webhook: {
              conversionReviewVersions: ['v1'],
              clientConfig: {
                service: {
                  namespace: 'agent-sandbox-system',
                  name: 'agent-sandbox-webhook',
                  path: '/convert',
                  port: 443,
                },
              },
            },
          },
        },
      },
    },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
  const ns = await freshNamespace(c, 'vfy103-leftover');
  const dir = await environment(ns, 'sandboxd');
  const report = await verify(dir, 'ab0003');
  const api = row(report, 'sandbox-api');
  expect(api.evidence.find((e) => e.reason === 'ConversionWebhookLeftover')).toMatchObject({
    step: 'configured',
    verdict: 'missing',
    field: 'spec.conversion.strategy',
    value: 'Webhook',
  });
  expect(api.met).toBe(false);
  expect(api.nextReason).toBe('ConversionWebhookLeftover');
  // The extensions CRDs were left alone.
  expect(row(report, 'extensions-api').evidence.some((e) => e.reason === 'ConversionWebhookLeftover')).toBe(false);
  const conversion = row(report, 'conversion');
  expect([conversion.state, conversion.evidence.map((e) => e.reason)]).toEqual([
    'unsupported',
    ['ReleaseHasNoConversion'],
  ]);
}, 300_000);
