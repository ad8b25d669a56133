/**
 * Node kind: the REAL node alone (a cluster of its own, `up.sh --real-node-only`: no kwok node, the real node
 * untainted), so examples/dev-gvisor applies unchanged and its pods run there. What a new user does (README): synthesize
 * dev-gvisor, apply its phase files in order (the CRD phase aside: the test cluster's CRDs carry a loopback `url:`
 * conversion webhook), run `agentplane verify --env <dir>` with the default transport (port-forward) — exit 0.
 * Stand-ins, said here: the controller's image cannot be pulled on this machine, so the controller runs as the test
 * cluster's local process (`--controller external`); its Deployment's pod stays unpulled. sandboxd's image is the
 * project's own (test-cluster/scripts/images.sh) under the reference the example pins.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { serverSideApply, type KubeObject } from '../../../test-cluster/kube.js';
import type { Cluster } from '../helpers.js';
import { describeRealNode, ownRealNodeCluster } from '../real-node-helpers.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const own = ownRealNodeCluster('devgvisor');
const { env } = own;
describeRealNode('examples/dev-gvisor on a real-node-only cluster', () => {
  let c: Cluster;
  let out: string;

  beforeAll(async () => {
    c = own.start();
    out = mkdtempSync(path.join(tmpdir(), 'agentplane-devgvisor-'));
    const synth = spawnSync(
      'node',
      ['bin/agentplane.js', 'synth', 'examples/dev-gvisor/environment.ts', '--out', out],
      { cwd: repo, env, encoding: 'utf8' },
    );
    if (synth.status !== 0) throw new Error(`synth failed: ${synth.stderr}`);
  }, 600_000);

  afterAll(() => {
    own.stop();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  test('dev-gvisor, applied unchanged onto the real node, verifies with the default transport: exit 0', async () => {
    const dir = path.join(out, 'dev-gvisor');
    const files = readdirSync(dir)
      .filter((f) => /^\d\d-.*\.yaml$/.test(f) && f !== '00-crds.yaml')
      .sort();
    expect(files[0]).toBe('01-namespaces.yaml');
    for (const f of files) {
      const objects = parseAllDocuments(readFileSync(path.join(dir, f), 'utf8'))
        .map((d) => d.toJS() as KubeObject)
        .filter((o) => o !== null);
      await serverSideApply(c.info.kubeconfig, objects);
    }
    const verify = spawnSync(
      'node',
      [
        'bin/agentplane.js',
        'verify',
        '--env',
        dir,
        '--kubeconfig',
        c.info.kubeconfig,
        '--controller',
        'external',
        '-o',
        'json',
      ],
      { cwd: repo, env, encoding: 'utf8', timeout: 420_000 },
    );
    const report = JSON.parse(verify.stdout) as {
      capabilities: Array<{
        name: string;
        state: string;
        next?: string;
        evidence: Array<{ step: string; verdict: string; reason: string; field?: string; value?: string }>;
      }>;
    };
    const states = Object.fromEntries(report.capabilities.map((r) => [r.name, r.state]));
    expect({ status: verify.status, states }).toEqual({
      status: 0,
      // One template: the verifier makes the peers its enforcement test needs (case netpol-enforcement-probe).
      states: expect.objectContaining({
        'runtime-exec': 'verified',
        'runtime-class/gvisor': 'verified',
        'network-isolation': 'verified',
      }),
    });
    // Case gvisor-evidence-markers: a kernel unlike the node's and a gVisor marker read from a file.
    const gv = report.capabilities.find((r) => r.name === 'runtime-class/gvisor')!.evidence;
    expect(gv.find((e) => e.reason === 'KernelDiffersFromNode')?.verdict).toBe('proven');
    const marker = gv.find((e) => e.reason === 'GvisorKernel');
    expect([marker?.verdict, marker?.field]).toEqual(['proven', '/proc/version']);
  }, 600000);
});
