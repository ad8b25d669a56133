/**
 * The Markdown docs link only to what exists: every relative link of README.md, CONTRIBUTING.md and docs/ names a file
 * of the repository, and an anchor names a heading (GitHub's slug) or an `<a id>` of that file.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../../..');

function markdown(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'api' ? [] : markdown(full);
    return name.endsWith('.md') ? [full] : [];
  });
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8');
  return new Set([
    ...[...text.matchAll(/^#+ (.+)$/gm)].map((m) => slug(m[1]!.trim())),
    ...[...text.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!),
  ]);
}

/** `file: link` of every relative link that names nothing. */
function brokenLinks(file: string): string[] {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((link) => !/^[a-z]+:/.test(link))
    .filter((link) => {
      const [target, anchor] = link.split('#') as [string, string | undefined];
      const resolved = target === '' ? file : path.resolve(path.dirname(file), target);
      if (!existsSync(resolved)) return true;
      return anchor !== undefined && resolved.endsWith('.md') && !anchors(resolved).has(anchor);
    })
    .map((link) => `${path.relative(ROOT, file)}: ${link}`);
}

test('the link check finds a missing file and a missing anchor, and passes good links', () => {
  expect(slug('The verifier Job and GitOps (Argo CD, Flux)')).toBe('the-verifier-job-and-gitops-argo-cd-flux');
  const dir = mkdtempSync(path.join(tmpdir(), 'links-'));
  const file = path.join(dir, 'page.md');
  writeFileSync(file, '# Title\n\n[a](nope.md) [b](#nowhere) [c](#title) [d](page.md) [e](https://x.example/y)\n');
  expect(brokenLinks(file).map((l) => l.split(': ')[1])).toEqual(['nope.md', '#nowhere']);
});

test('every relative link in README.md, CONTRIBUTING.md and docs/ resolves', () => {
  const files = [
    path.join(ROOT, 'README.md'),
    path.join(ROOT, 'CONTRIBUTING.md'),
    ...markdown(path.join(ROOT, 'docs')),
  ];
  expect(files.flatMap(brokenLinks)).toEqual([]);
});
