/**
 * Case storedversions-upgrade-path, without a cluster: the plan
 * from the case's live state (given here as read; the read itself is test/cluster/cases/storedversions-upgrade-path),
 * and the CLI offline, which must answer `unknown` (exit 12) instead of `safe` from a schema diff and assumed storage.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import {
  loadRelease,
  planUpgrade,
  releaseFacts,
  type LiveUpgradeState,
  type LoadedRelease,
} from '../../src/releases/index.js';
import { betaOnlyRelease } from './beta-only-release.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
let r050: LoadedRelease;
let r056: LoadedRelease;
beforeAll(async () => {
  [r050, r056] = await Promise.all([loadRelease('v0.5.0'), loadRelease('v0.5.6')]);
});

/** The case's cluster: Sandbox CRD storedVersions [v1alpha1, v1beta1], two claims adopted from a pool. */
const live: LiveUpgradeState = {
  source: 'context case07',
  storedVersions: {
    Sandbox: ['v1alpha1', 'v1beta1'],
    SandboxClaim: ['v1beta1'],
    SandboxTemplate: ['v1beta1'],
    SandboxWarmPool: ['v1beta1'],
  },
  warmClaims: ['agents/a', 'agents/b'],
};

describe('case storedversions-upgrade-path', () => {
  test('--to v0.5.0 with warm-started claims is blocked citing agent-sandbox#1124 and suggesting v0.5.6', () => {
    const plan = planUpgrade(r056, r050, live);
    expect(plan.verdict).toBe('blocked');
    expect(plan.findings.filter((f) => f.severity === 'block').map((f) => f.source)).toEqual([
      'kubernetes-sigs/agent-sandbox#1124',
    ]);
    expect(plan.path.some((p) => p.startsWith('move to v0.5.6 instead of v0.5.0'))).toBe(true);
  });

  test('--to v0.5.6 reads the stored v1alpha1 and asks for a migration and a prune', () => {
    const plan = planUpgrade(r056, r056, live);
    expect(plan.verdict).toBe('needs-migration');
    expect(plan.path.at(-1)).toBe('prune status.storedVersions of the Sandbox CRD(s) to [v1beta1]');
  });

  test('a release serving only v1beta1 is refused while v1alpha1 is stored, with the path migrate -> prune -> install', () => {
    const plan = planUpgrade(r056, betaOnlyRelease(r056), live, [{ facts: releaseFacts('v0.5.0') }]);
    expect(plan.verdict).toBe('blocked');
    expect(plan.path).toEqual([
      'migrate storage at v0.5.6: rewrite every Sandbox object so it is stored as v1beta1 (agentplane migrate-storage --kubeconfig FILE shows what it would rewrite; add --apply to write)',
      'prune status.storedVersions of the Sandbox CRD(s) to [v1beta1] (migrate-storage --apply does it once every object of a kind is rewritten and a re-list confirms the count)',
      'install v0.6.0',
    ]);
  });

  test.each([
    [['--from', 'v0.5.0', '--to', 'v0.5.6'], 'upgrade', 'safe'],
    [['--from', 'v0.5.6', '--to', 'v0.5.0'], 'downgrade', 'needs-migration'],
  ])(
    'offline plan-upgrade %j is unknown (exit 12), a %s, assumed %s',
    (args, direction, assumed) => {
      const r = spawnSync(
        process.execPath,
        [path.join(ROOT, 'bin/agentplane.js'), 'plan-upgrade', ...args, '-o', 'json'],
        { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
      );
      expect(r.stderr).toBe('');
      expect(r.status).toBe(12);
      expect(JSON.parse(r.stdout)).toMatchObject({
        verdict: 'unknown',
        assumedVerdict: assumed,
        direction,
        exitCode: 12,
      });
    },
    60_000,
  );

  test('--accept takes only a known defect id (usage error, exit 2); --help lists the verdict exit codes', () => {
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [path.join(ROOT, 'bin/agentplane.js'), 'plan-upgrade', ...args], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
      });
    const bad = run('--from', 'v0.5.6', '--to', 'v0.5.0', '--accept', 'nope');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("argument 'nope' is invalid. Allowed choices are warm-claims-cold-restart.");
    const help = run('--help');
    expect(help.status).toBe(0);
    expect(
      help.stdout
        .split('\n')
        .filter((l) => /^  (0|10|11|12) /.test(l))
        .map((l) => l.trim().split(/\s+/).slice(0, 2).join(' ')),
    ).toEqual(['0 safe:', '10 needs-migration:', '11 blocked:', '12 unknown:']);
  }, 60_000);
});
