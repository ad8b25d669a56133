// Module resolve hook (node:module register) installed by bin/agentplane.js before it imports a TypeScript
// environment module: the module's imports of this package (by name, or of an entry point's source file when it lives
// in this repository, like examples/' `../../src/index.js`) resolve to the bundle the CLI runs, so both share one copy
// of every module.
let root;
let name;
export function initialize(data) {
  ({ root, name } = data);
}

/**
 * The sources of the package's entry points (package.json exports) and their bundled files; the CommonJS construct
 * entry (the package's `.` for require and import) is sent to the CLI's ES module copy of it.
 */
const ENTRIES = {
  'lib/cjs/index.cjs': 'lib/bundle/index.js',
  'src/index.ts': 'lib/bundle/index.js',
  'src/adapter/adapter.ts': 'lib/bundle/adapter.js',
  'src/verify/index.ts': 'lib/bundle/verify.js',
  'src/diff/index.ts': 'lib/bundle/diff.js',
};

export async function resolve(specifier, context, next) {
  const own = specifier === name || specifier.startsWith(`${name}/`);
  const conditions = (context.conditions ?? []).filter((c) => c !== 'require');
  const result = own
    ? await next(specifier, {
        ...context,
        parentURL: `${root}package.json`,
        conditions: [...new Set([...conditions, 'import', 'node'])],
      })
    : await next(specifier, context);
  const bundled = result.url.startsWith(root) ? ENTRIES[result.url.slice(root.length)] : undefined;
  return bundled === undefined ? result : { url: `${root}${bundled}`, format: 'module', shortCircuit: true };
}
