/**
 * One benchmark case, run in its own process so peak RSS belongs to it alone. Prints one JSON line:
 * `{ case, objects, bytes, loadMs, synthMs, totalMs, maxRssMb }`.
 *   install-one-template: the v0.5.6 install + one gVisor runtime class + one sandboxd template.
 *   generated-200: the v0.5.6 install + 200 templates + 200 warm pools.
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
if ((which !== 'install-one-template' && which !== 'generated-200') || mirror === undefined || cacheDir === undefined) {
  process.stderr.write('usage: synth-case.ts install-one-template|generated-200 <mirror> <cache-dir>\n');
  process.exit(2);
}
const start = performance.now();
const release = await loadRelease('v0.5.6', { mirror, cacheDir });
const loaded = performance.now();
const env = new AgentEnvironment(new App(), 'bench', { release });
const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
const count = which === 'generated-200' ? 200 : 1;
for (let i = 0; i < count; i++) {
  const t = env.addTemplate(`t${i}`, {
    runtimeClass: rc,
    podSpec: sandboxdPodSpec({ image: 'registry.example.internal/agent-sandbox/sandboxd:v0.5.6' }),
    runtime: SANDBOXD_RUNTIME,
  });
  if (which === 'generated-200') env.addWarmPool(`p${i}`, { template: t, replicas: 1 });
}
const synth = synthesizeEnvironment(env);
writeSynthesis(mkdtempSync(join(tmpdir(), 'agentplane-bench-')), synth);
const end = performance.now();
process.stdout.write(
  `${JSON.stringify({
    case: which,
    objects: synth.objects.length,
    bytes: synth.files.reduce((n, f) => n + Buffer.byteLength(f.content), 0),
    loadMs: Math.round(loaded - start),
    synthMs: Math.round(end - loaded),
    totalMs: Math.round(end - start),
    maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  })}\n`,
);
