// `npm run build` (also run by `npm pack`): the package's built forms under lib/.
// - lib/bundle: the ES module entry points (index, adapter, verify, diff: package.json exports) and the CLI (main, run
//   by bin/agentplane.js), bundled by esbuild in one build with code splitting: their shared modules sit once in
//   lib/bundle/chunks/, so every entry uses the same classes (`instanceof` holds across them). Third-party packages are
//   bundled in (start-up loads a few dozen files, not thousands), except the cdk8s peers, which the user's app shares,
//   and the TypeScript loader tsx, which bin/ registers from node_modules.
// - lib/esm: tsc's declarations of src/ and imports/ (the `types` of package.json exports).
// - lib/cjs/index.cjs: the construct entry point (src/index.ts) bundled to CommonJS, dependencies left external, for
//   `require` consumers (cdk8s apps on ts-node, jest); its declarations are lib/esm's, copied under a
//   `"type": "commonjs"` package.json so TypeScript reads them as CommonJS. The subpath entries (adapter, verify, diff)
//   are ESM only: they load @kubernetes/client-node 1.x, which is ESM only.
// - lib/data: files read at run time, at their repository paths (src/model/package-info.ts `dataFile`).
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
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
// The sandboxd client's protobuf description (src/adapter/runtime/sandboxd.ts) and the tested-combinations matrix
// `agentplane compat` reads.
for (const file of ['src/adapter/runtime/proto', 'test/compat/matrix.json'])
  cpSync(join(root, file), join(lib, 'data', file), { recursive: true });

/** Runs one esbuild build; a warning fails it like an error. */
async function bundle(options) {
  const result = await build({ absWorkingDir: root, bundle: true, platform: 'node', target: 'node20', ...options });
  if (result.warnings.length > 0) throw new Error(`esbuild: ${result.warnings.length} warning(s), see above`);
}

await bundle({
  entryPoints: {
    index: 'src/index.ts',
    adapter: 'src/adapter/adapter.ts',
    verify: 'src/verify/index.ts',
    diff: 'src/diff/index.ts',
    main: 'src/cli/main.ts',
  },
  outdir: join(lib, 'bundle'),
  chunkNames: 'chunks/[name]-[hash]',
  format: 'esm',
  splitting: true,
  external: ['cdk8s', 'cdk8s-plus-28', 'constructs', 'tsx', 'tsx/*'],
  // Bundled CommonJS packages require() Node's built-in modules (and optional packages such as ws's bufferutil):
  // esbuild's shim calls the `require` in scope, which an ES module has only when made with createRequire. (`__dirname`
  // stays undefined: grpc-js reads its channelz and ORCA .proto files with it, server and xDS features we never use.)
  banner: {
    js: "import { createRequire as __agentplaneCreateRequire } from 'node:module';\nconst require = __agentplaneCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});

await bundle({
  entryPoints: [join(root, 'src/index.ts')],
  outfile: join(lib, 'cjs/index.cjs'),
  packages: 'external',
  format: 'cjs',
  // import.meta.url has no CommonJS form: each use becomes the bundle's own file URL.
  define: { 'import.meta.url': '__agentplaneFileUrl' },
  banner: { js: 'const __agentplaneFileUrl = require("node:url").pathToFileURL(__filename).href;' },
  logLevel: 'warning',
});
cpSync(join(lib, 'esm'), join(lib, 'cjs'), { recursive: true });
writeFileSync(join(lib, 'cjs/package.json'), '{ "type": "commonjs" }\n');
