// Module resolve hook (node:module register) installed by bin/agentplane.js before it imports a TypeScript
// environment module: the module's imports of this package (by name, or of its src/*.ts when it lives in this
// repository, like examples/) resolve to the compiled ES modules the CLI runs, so both share one copy of every module.
let root;
let name;
export function initialize(data) {
  ({ root, name } = data);
}

export async function resolve(specifier, context, next) {
  if (specifier === name || specifier.startsWith(`${name}/`)) {
    const conditions = (context.conditions ?? []).filter((c) => c !== 'require');
    return next(specifier, {
      ...context,
      parentURL: `${root}package.json`,
      conditions: [...new Set([...conditions, 'import', 'node'])],
    });
  }
  const result = await next(specifier, context);
  const url = result.url;
  if (url.startsWith(`${root}src/`) && url.endsWith('.ts') && !url.endsWith('.d.ts')) {
    return { url: `${root}lib/esm/${url.slice(root.length, -3)}.js`, format: 'module', shortCircuit: true };
  }
  return result;
}
