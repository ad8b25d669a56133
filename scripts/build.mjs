// `npm run build` (also run by `npm pack`): the package's compiled forms under lib/.
// - lib/esm: tsc over src/ and imports/ (ES modules, declarations), what bin/ and `import` consumers load;
// - lib/cjs/index.cjs: the construct entry point (src/index.ts) bundled to CommonJS by esbuild, dependencies left
//   external, for `require` consumers (cdk8s apps on ts-node, jest); its declarations are lib/esm's, copied under a
//   `"type": "commonjs"` package.json so TypeScript reads them as CommonJS. The subpath entries (adapter, verify, diff)
//   are ESM only: they load @kubernetes/client-node 1.x, which is ESM only.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lib = join(root, 'lib');
rmSync(lib, { recursive: true, force: true });

execFileSync(
  process.execPath,
  [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')],
  { stdio: 'inherit' },
);
// Files the compiled modules read at run time beside themselves (tsc copies only .ts output): the sandboxd client's
// protobuf description, loaded by src/adapter/runtime/sandboxd.ts.
cpSync(join(root, 'src/adapter/runtime/proto'), join(lib, 'esm/src/adapter/runtime/proto'), { recursive: true });
// The tested-combinations matrix `agentplane compat` reads, at the same path relative to the compiled command.
cpSync(join(root, 'test/compat/matrix.json'), join(lib, 'esm/test/compat/matrix.json'));

await build({
  entryPoints: [join(root, 'src/index.ts')],
  outfile: join(lib, 'cjs/index.cjs'),
  bundle: true,
  packages: 'external',
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // import.meta.url has no CommonJS form: each use becomes the bundle's own file URL.
  define: { 'import.meta.url': '__agentplaneFileUrl' },
  banner: { js: 'const __agentplaneFileUrl = require("node:url").pathToFileURL(__filename).href;' },
  logLevel: 'warning',
});
cpSync(join(lib, 'esm'), join(lib, 'cjs'), { recursive: true, filter: (src) => !src.endsWith('.js') });
mkdirSync(join(lib, 'cjs'), { recursive: true });
writeFileSync(join(lib, 'cjs/package.json'), '{ "type": "commonjs" }\n');
