/**
 * Manifest sources: a git ref is checked out into a temporary worktree, synthesized there by the given command and
 * read back; the worktree is removed afterwards. Uses a throw-away repository and a copy command as "synth" (the real
 * `agentplane synth` is exercised by the synth tests).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { diffManifests, ManifestSourceError, readManifestDir, readManifestSource } from '../../../src/diff/index.js';
import { rejectedBy } from '../thrown.js';

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-C', cwd, '-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], {
    encoding: 'utf8',
  });

function repoWithTwoCommits(): string {
  const repo = mkdtempSync(path.join(tmpdir(), 'agentplane-src-'));
  git(repo, 'init', '-q');
  mkdirSync(path.join(repo, 'manifests'));
  mkdirSync(path.join(repo, 'node_modules'));
  writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n');
  const pool = (replicas: number): string =>
    `apiVersion: extensions.agents.x-k8s.io/v1beta1\nkind: SandboxWarmPool\nmetadata:\n  name: pool\n  namespace: agents\nspec:\n  replicas: ${replicas}\n  sandboxTemplateRef:\n    name: python\n`;
  writeFileSync(path.join(repo, 'manifests', 'pool.yaml'), pool(1));
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'one');
  git(repo, 'tag', 'base');
  writeFileSync(path.join(repo, 'manifests', 'pool.yaml'), pool(2));
  git(repo, 'commit', '-q', '-am', 'two');
  return repo;
}

describe('manifest sources', () => {
  it('synthesizes two git refs in temporary worktrees and diffs them; no worktree is left behind', async () => {
    const repo = repoWithTwoCommits();
    const opts = { repo, synthCommand: ['cp', '-r', 'manifests', '{out}'] };
    const [base, head] = [await readManifestSource('base', opts), await readManifestSource('HEAD', opts)];
    expect([base.label, head.label]).toEqual(['base', 'HEAD']);
    const report = diffManifests(base, head);
    expect(report.objects.map((o) => o.fields)).toEqual([
      [{ path: 'spec.replicas', op: 'changed', before: 1, after: 2 }],
    ]);
    expect(git(repo, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
  });

  it('a failing synth names the ref and the command, and still removes the worktree', async () => {
    const repo = repoWithTwoCommits();
    const command = ['sh', '-c', 'echo broken template >&2; exit 3'];
    const err = await rejectedBy(
      readManifestSource('base', { repo, synthCommand: command }),
      ManifestSourceError,
      'ManifestSourceInvalid',
    );
    // stderr is the synth command's own output, passed through
    expect(err.synth).toEqual({ ref: 'base', command, stderr: 'broken template' });
    expect(git(repo, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
  });

  it('a git ref of a repository that is no AgentPlane checkout needs --synth-command: refused before running anything, worktree removed', async () => {
    const repo = repoWithTwoCommits();
    const err = await rejectedBy(readManifestSource('base', { repo }), ManifestSourceError, 'SynthCommandNeeded');
    expect(err.synth).toBeUndefined();
    expect(git(repo, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
  });

  it('an argument that is neither a directory nor a ref is refused with what to pass instead', async () => {
    await expect(readManifestSource('no-such-ref-or-dir', { repo: repoWithTwoCommits() })).rejects.toBeInstanceOf(
      ManifestSourceError,
    );
  });

  it('a directory with environment subdirectories keys objects by environment, so equal names in two environments never collide', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-envs-'));
    for (const env of ['dev', 'prod']) {
      mkdirSync(path.join(dir, env));
      writeFileSync(
        path.join(dir, env, 'environment.json'),
        JSON.stringify({ apiVersion: 'agentplane.dev/v1alpha1', kind: 'EnvironmentDescriptor', name: env }),
      );
      writeFileSync(
        path.join(dir, env, '01.yaml'),
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: agents\ndata:\n  tier: ${env}\n`,
      );
    }
    const set = await readManifestDir(dir);
    expect(set.objects).toHaveLength(2);
    expect(diffManifests(set, set).counts.unchanged).toBe(2);
    expect(readdirSync(dir).sort()).toEqual(['dev', 'prod']);
  });
});
