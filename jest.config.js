/** Jest in ESM mode: @kubernetes/client-node 1.x is ESM only, so the tests load it as ES modules. */
const tsJest = ['ts-jest', { useESM: true }];
const RUNTIMES = '\\.(sandboxd|python-runtime|runtimes)\\.test\\.ts$';
const common = {
  preset: 'ts-jest/presets/default-esm',
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.tsx?$': tsJest },
  setupFiles: ['<rootDir>/test/setup-env.cjs'],
};
export default {
  // Loading a release from a cold cache takes seconds on a busy 2-core machine; jest's 5 s default is no bound on speed
  // (speed targets live in `npm run bench`), only a cause of spurious failures.
  testTimeout: 60_000,
  projects: [
    // No process of its own beyond node: `npm test`, the inner loop (CONTRIBUTING.md).
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/{unit,contract,cases}/**/*.test.ts'],
      testPathIgnorePatterns: [RUNTIMES],
    },
    // The real runtime servers as local processes: the sandboxd binary from the test-cluster build and the upstream
    // python runtime in the client venv. A test that starts one is named `*.sandboxd.test.ts`,
    // `*.python-runtime.test.ts`, or `*.runtimes.test.ts` when it starts both.
    {
      ...common,
      displayName: 'runtimes',
      testMatch: ['<rootDir>/test/{unit,contract,cases}/**/*.{sandboxd,python-runtime,runtimes}.test.ts'],
    },
    // npm pack, then fresh CommonJS and ESM cdk8s projects install the tarball (test/packaging/README.md).
    { ...common, displayName: 'packaging', testMatch: ['<rootDir>/test/packaging/*.test.ts'] },
    // Real loopback control plane (test-cluster/README.md): started once per run, torn down if this run started it.
    {
      ...common,
      displayName: 'cluster',
      testMatch: ['<rootDir>/test/cluster/**/*.test.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/cluster/retry-once.cjs'],
      globalSetup: '<rootDir>/test/cluster/global-setup.ts',
      globalTeardown: '<rootDir>/test/cluster/global-teardown.ts',
    },
  ],
};
