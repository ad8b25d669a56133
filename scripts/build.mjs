// `npm run build` (also run by `npm pack`): the package's built forms under lib/.
// - lib/cjs/index.cjs: the construct entry point (src/index.ts, package.json `.`) bundled to CommonJS, for `require`
//   and `import` alike: an ES module app that also loads a CommonJS helper meets one copy of every class. It reads
//   its file URL from `__filename`, so a consumer's bundler (esbuild, webpack) can inline it.
// - lib/bundle: the ES module subpath entries (adapter, verify, diff: package.json exports) and the CLI (main, run by
//   bin/agentplane.js), bundled by esbuild in one build with code splitting: their shared modules sit once in
//   lib/bundle/chunks/. lib/bundle/index.js is the construct entry the CLI runs environment modules against
//   (bin/module-hooks.js), not an export.
// - lib/types: tsc's declarations, one tree, CommonJS like the entry they describe (lib/types/package.json); the ES
//   module subpaths' `import` types are one-line .d.mts files re-exporting it.
// - lib/data: files read at run time, at their repository paths (src/model/package-info.ts `dataFile`).
// Dependencies are either bundled or declared, never both: the packages in package.json `dependencies` (those the
// construct entry loads, and tsx, the CLI's TypeScript loader) stay external in both builds; every other third-party
// package (the Kubernetes client, gRPC, the CLI's helpers) is bundled into lib/bundle and is not a dependency. The
// peers (cdk8s, constructs, cdk8s-plus-28) are the user's, never bundled; the optional peers are for types only.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lib = join(root, 'lib');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
// Optional peers are types only: the declarations of /adapter and /diff name @kubernetes/client-node's and
// jsondiffpatch's types (a project type-checking without skipLibCheck installs them); their code is bundled.
const typesOnly = new Set(
  Object.keys(pkg.peerDependenciesMeta ?? {}).filter((p) => pkg.peerDependenciesMeta[p].optional),
);
const external = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)]
  .filter((p) => !typesOnly.has(p))
  .flatMap((p) => [p, `${p}/*`]);
rmSync(lib, { recursive: true, force: true });

execFileSync(
  process.execPath,
  [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')],
  { stdio: 'inherit' },
);
writeFileSync(join(lib, 'types/package.json'), '{ "type": "commonjs" }\n');
const subpaths = { adapter: 'src/adapter/adapter', verify: 'src/verify/index', diff: 'src/diff/index' };
for (const [name, source] of Object.entries(subpaths))
  writeFileSync(join(lib, `types/${name}.d.mts`), `export * from './${source}.js';\n`);
// The sandboxd client's protobuf description (src/adapter/runtime/sandboxd.ts) and the tested-combinations matrix
// `agentplane compat` reads.
for (const file of ['src/adapter/runtime/proto', 'test/compat/matrix.json'])
  cpSync(join(root, file), join(lib, 'data', file), { recursive: true });

/**
 * `createRequire(import.meta.url)('<package>')` (the sources load some CommonJS packages so, for ES module start-up)
 * becomes `require('<package>')`: a bundler sees it, so cdk8s is the one copy the app bundles too (and a bundled
 * package's package.json is bundled, not read from node_modules).
 */
const directRequires = {
  name: 'direct-requires',
  setup(b) {
    b.onLoad({ filter: /[/\\]src[/\\].*\.ts$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      return { contents: source.replaceAll("createRequire(import.meta.url)('", "require('"), loader: 'ts' };
    });
  },
};

/** Runs one esbuild build; a warning fails it like an error, and so does a dependency both declared and bundled. */
async function bundle(options) {
  const result = await build({
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    target: 'node20',
    metafile: true,
    external,
    plugins: [directRequires],
    ...options,
  });
  if (result.warnings.length > 0) throw new Error(`esbuild: ${result.warnings.length} warning(s), see above`);
  const declared = new Set(external.filter((p) => !p.endsWith('/*')));
  const inlined = Object.keys(result.metafile.inputs)
    .map((f) => /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f)?.[1])
    .filter((p) => p !== undefined && declared.has(p));
  if (inlined.length > 0) throw new Error(`esbuild: declared dependencies bundled: ${[...new Set(inlined)]}`);
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
  format: 'cjs',
  // import.meta.url has no CommonJS form: each use becomes the file URL of the file that runs it.
  define: { 'import.meta.url': '__agentplaneFileUrl' },
  banner: { js: 'const __agentplaneFileUrl = require("node:url").pathToFileURL(__filename).href;' },
  logLevel: 'warning',
});
