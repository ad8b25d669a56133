/**
 * Case netpol-enforcement-probe on the REAL node (a cluster of this file's own, `up.sh --real-node-only`, because it
 * kills that cluster's kube-router). examples/dev-gvisor, applied unchanged: ONE template (gVisor), whose
 * controller-managed policy `shell-network-policy` admits ingress from the router only and egress outside private
 * ranges, so two sandboxes of it are peers the policy denies. `agentplane verify` with the default transport
 * (port-forward) must make the peers it needs itself (two fresh sandboxes of the template) and:
 * - with kube-router running: `network-isolation: verified`, the evidence carrying the enforcement latency (pod start
 *   -> first denied attempt that was blocked) and the early held connection's fate;
 * - with kube-router killed (SIGKILL, as a crashed agent: its iptables rules and ipsets stay in place, so older pods
 *   stay constrained while new ones are open): `failed` with `PolicyNotEnforced` in EVERY run, naming the CNI seen.
 * Stand-ins, said here: the controller runs as the test cluster's local process (`--controller external`; its image
 * cannot be pulled here), and sandboxd's image is the project's own under the reference the example pins.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { serverSideApply, type KubeObject } from '../../../test-cluster/kube.js';
import { waitFor, type Cluster } from '../helpers.js';
import { describeRealNode, ownRealNodeCluster } from '../real-node-helpers.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const own = ownRealNodeCluster('netpolenf');
const { env, runDir } = own;
/** Verify runs with the policy agent dead: every one must fail. */
const DEAD_RUNS = 3;

interface Evidence {
  step: string;
  verdict: string;
  reason: string;
  subject: string;
  message: string;
  field?: string;
  value?: string;
  observed?: Record<string, number>;
  objects?: string[];
}
interface Capability {
  name: string;
  state: string;
  nextReason?: string;
  evidence: Evidence[];
}

/** Runs argv inside the node's network and mount namespaces (where kube-router's iptables rules live). */
function inNode(argv: string[]): { status: number | null; stdout: string; stderr: string } {
  const holder = readFileSync(path.join(runDir, 'pids', 'node-ns.pid'), 'utf8').trim();
  return spawnSync('nsenter', ['--target', holder, '--net', '--mount', '--', ...argv], { encoding: 'utf8' });
}

describeRealNode(
  'case netpol-enforcement-probe: examples/dev-gvisor on the real node, kube-router running and dead',
  () => {
    let c: Cluster;
    let out: string;
    let dir: string;

    beforeAll(async () => {
      c = own.start();
      out = mkdtempSync(path.join(tmpdir(), 'agentplane-netpolenf-'));
      const synth = spawnSync(
        'node',
        ['bin/agentplane.js', 'synth', 'examples/dev-gvisor/environment.ts', '--out', out],
        { cwd: repo, env, encoding: 'utf8' },
      );
      if (synth.status !== 0) throw new Error(`synth failed: ${synth.stderr}`);
      dir = path.join(out, 'dev-gvisor');
      const files = readdirSync(dir)
        .filter((f) => /^\d\d-.*\.yaml$/.test(f) && f !== '00-crds.yaml')
        .sort();
      for (const f of files) {
        const objects = parseAllDocuments(readFileSync(path.join(dir, f), 'utf8'))
          .map((d) => d.toJS() as KubeObject)
          .filter((o) => o !== null);
        await serverSideApply(c.info.kubeconfig, objects);
      }
    }, 600_000);

    afterAll(() => {
      own.stop();
      if (out) rmSync(out, { recursive: true, force: true });
    });

    /** `agentplane verify` of dev-gvisor, as a user runs it (default transport); exit code and network-isolation. */
    function verify(): { status: number | null; net: Capability; leftovers: unknown[] } {
      const run = spawnSync(
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
        { cwd: repo, env, encoding: 'utf8', timeout: 540_000 },
      );
      const report = JSON.parse(run.stdout) as { capabilities: Capability[]; leftovers: unknown[] };
      return {
        status: run.status,
        net: report.capabilities.find((r) => r.name === 'network-isolation')!,
        leftovers: report.leftovers,
      };
    }

    test('one template: verified while kube-router runs (latency measured), failed PolicyNotEnforced in every run once it is dead', async () => {
      const on = verify();
      const observed = on.net.evidence.find((e) => e.reason === 'EnforcementObserved');
      // The measurement, printed for the record (pod start -> first blocked denied dial; rounds; the held connection).
      process.stderr.write(`netpol-enforcement-probe running: ${JSON.stringify(observed?.observed)}\n`);
      expect({ status: on.status, state: on.net.state, verdict: observed?.verdict }).toEqual({
        status: 0,
        state: 'verified',
        verdict: 'proven',
      });
      // Three members (the workload probe's sandbox and two fresh peers), every sample clean, latency measured.
      expect(observed!.observed).toMatchObject({ members: 3, rounds: 5, cleanRounds: 5, earlyConnectionSurvived: 0 });
      expect(observed!.observed!.enforcementLatencyMs).toBeGreaterThanOrEqual(observed!.observed!.firstAttemptMs!);
      expect(observed!.observed!.spanMs).toBeGreaterThanOrEqual(10_000);
      expect(observed!.objects).toEqual(['dev-sandboxes/shell-network-policy']);
      expect(on.leftovers).toEqual([]);

      // A crashed policy agent: SIGKILL, nothing cleaned up; its rules stay in place.
      const pid = Number(readFileSync(path.join(runDir, 'pids', 'kube-router.pid'), 'utf8'));
      process.kill(pid, 'SIGKILL');
      await waitFor('kube-router gone', 30_000, async () => {
        try {
          process.kill(pid, 0);
          return undefined;
        } catch {
          return true;
        }
      });
      const rules = inNode(['iptables', '-w', '-S', 'KUBE-ROUTER-FORWARD']).stdout.trim().split('\n');
      expect(rules.length).toBeGreaterThan(1);

      for (let i = 1; i <= DEAD_RUNS; i += 1) {
        const off = verify();
        const leak = off.net.evidence.find((e) => e.step === 'verified' && e.reason === 'PolicyNotEnforced');
        process.stderr.write(
          `netpol-enforcement-probe dead run ${i}: ${off.net.state} ${leak?.field} ${JSON.stringify(leak?.observed)}\n`,
        );
        expect({
          run: i,
          state: off.net.state,
          next: off.net.nextReason,
          verdict: leak?.verdict,
        }).toEqual({
          run: i,
          state: 'failed',
          next: 'PolicyNotEnforced',
          verdict: 'contradicted',
        });
        // The dial that leaked is between sandboxes of the one template; the policy that should have denied it is named.
        expect(leak!.subject).toMatch(/^pod dev-sandboxes\/verify-\w+-[pnm]-shell-\w+$/);
        expect(leak!.value).toBe('peer connected');
        expect(leak!.objects).toEqual(['dev-sandboxes/shell-network-policy']);
        // prose: the CNI facts seen are part of the "present but not enforced" finding (no observed field carries them)
        expect(leak!.message).toMatch(/^policy present but not enforced: .*; CNI seen: /);
        expect(off.leftovers).toEqual([]);
      }
    }, 1_800_000);
  },
);
