// Module resolve hook (node:module register) used by bin/agentplane.js when it runs the compiled CLI from lib/: a
// module under src/ or imports/ that resolves to its .ts source is sent to its compiled lib/ file instead, so a
// TypeScript environment module and the CLI share one copy of every module. Registered after tsx, so it runs first
// and asks tsx (next) to resolve.
let root;
export function initialize(data) {
  root = data.root;
}

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  const url = result.url;
  if (url.startsWith(root) && url.endsWith('.ts') && !url.endsWith('.d.ts')) {
    const rel = url.slice(root.length);
    if (rel.startsWith('src/') || rel.startsWith('imports/')) return { url: `${root}lib/${rel.slice(0, -3)}.js`, format: 'module', shortCircuit: true };
  }
  return result;
}
