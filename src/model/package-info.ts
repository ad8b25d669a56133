/**
 * The package's own name, version and directory, from its package.json: the nearest one above this module that names
 * the package (the sources sit in src/, the bundle deeper, in lib/bundle/chunks/).
 */
import { existsSync, readFileSync } from 'node:fs';

export const PACKAGE_NAME = 'cdk8s-agentplane';

let found: { root: URL; version: string } | null | undefined;
function findPackage(): { root: URL; version: string } | null {
  if (found !== undefined) return found;
  for (let dir = new URL('./', import.meta.url); ; dir = new URL('../', dir)) {
    const file = new URL('package.json', dir);
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === PACKAGE_NAME && pkg.version !== undefined) return (found = { root: dir, version: pkg.version });
    }
    if (dir.pathname === '/') return (found = null);
  }
}

/** The version in the package's package.json. */
export function packageVersion(): string {
  return findPackage()?.version ?? 'unknown';
}

/** The package's directory (its package.json's), as a file URL ending in `/`. */
export function packageRoot(): URL {
  const pkg = findPackage();
  if (pkg === null) throw new Error(`no package.json of ${PACKAGE_NAME} above ${import.meta.url}`);
  return pkg.root;
}

/**
 * A file the package reads at run time, by its repository path (`test/compat/matrix.json`): that file when running
 * from the sources, else the copy `npm run build` puts at the same path under lib/data/.
 */
export function dataFile(repoPath: string): URL {
  const root = packageRoot();
  const fromSources = import.meta.url.startsWith(new URL('src/', root).href);
  return new URL(fromSources ? repoPath : `lib/data/${repoPath}`, root);
}
