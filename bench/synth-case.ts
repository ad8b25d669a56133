/**
 * One benchmark case, run in its own process so peak RSS belongs to it alone. Prints one JSON line:
 * `{ case, objects, bytes, loadMs, synthMs, totalMs, maxRssMb, largestObjectBytes, largestDescriptorBytes }`.
 *   install-one-template: the v0.5.6 install + one gVisor runtime class + one sandboxd template.
 *   generated-N (N ≥ 1): the v0.5.6 install + N templates + N warm pools (growth rows: 10 … 10,000).
 * The two sizes are the largest object's JSON and the largest descriptor ConfigMap's (the descriptor or one of its
 * parts) in bytes, for the API server's limits (1 MiB per object; 256 KiB of annotations for client-side apply).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { App } from 'cdk8s';
import { AgentEnvironment, sandboxdPodSpec, SANDBOXD_RUNTIME } from '../src/constructs/index.js';
import { loadRelease } from '../src/releases/index.js';
import { synthesizeEnvironment, writeSynthesis } from '../src/synth/index.js';

const which = process.argv[2];
const mirror = process.argv[3];
const cacheDir = process.argv[4];
const generated = /^generated-([1-9][0-9]*)$/.exec(which ?? '');
if ((which !== 'install-one-template' && generated === null) || mirror === undefined || cacheDir === undefined) {
  process.stderr.write('usage: synth-case.ts install-one-template|generated-<N> <mirror> <cache-dir>\n');
  process.exit(2);
}
const start = performance.now();
const release = await loadRelease('v0.5.6', { mirror, cacheDir });
const loaded = performance.now();
const env = new AgentEnvironment(new App(), 'bench', { release });
const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
const count = generated === null ? 1 : Number(generated[1]);
for (let i = 0; i < count; i++) {
  const t = env.addTemplate(`t${i}`, {
    runtimeClass: rc,
    podSpec: sandboxdPodSpec({ image: 'registry.example.internal/agent-sandbox/sandboxd:v0.5.6' }),
    runtime: SANDBOXD_RUNTIME,
  });
  if (generated !== null) env.addWarmPool(`p${i}`, { template: t, replicas: 1 });
}
const synth = synthesizeEnvironment(env);
writeSynthesis(mkdtempSync(join(tmpdir(), 'agentplane-bench-')), synth);
const end = performance.now();
const jsonBytes = (o: unknown): number => Buffer.byteLength(JSON.stringify(o));
const descriptor = synth.objects.filter(
  (o) => o.object.kind === 'ConfigMap' && /^agentplane-environment(-[0-9]{4})?$/.test(String(o.object.metadata?.name)),
);
process.stdout.write(
  `${JSON.stringify({
    case: which,
    objects: synth.objects.length,
    bytes: synth.files.reduce((n, f) => n + Buffer.byteLength(f.content), 0),
    loadMs: Math.round(loaded - start),
    synthMs: Math.round(end - loaded),
    totalMs: Math.round(end - start),
    maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    largestObjectBytes: Math.max(...synth.objects.map((o) => jsonBytes(o.object))),
    largestDescriptorBytes: Math.max(...descriptor.map((o) => jsonBytes(o.object))),
  })}\n`,
);
