/**
 * The package's own name and version, read from its package.json: the nearest one above this module that names the
 * package (the compiled CLI sits deeper, under lib/esm/, than the sources).
 */
import { existsSync, readFileSync } from 'node:fs';

export const PACKAGE_NAME = 'cdk8s-agentplane';

/** The version in the package's package.json. */
export function packageVersion(): string {
  for (let dir = new URL('./', import.meta.url); ; dir = new URL('../', dir)) {
    const file = new URL('package.json', dir);
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === PACKAGE_NAME && pkg.version !== undefined) return pkg.version;
    }
    if (dir.pathname === '/') return 'unknown';
  }
}
