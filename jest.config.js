/** Jest in ESM mode (client-node 1.x is ESM-only); see ../shared/NOTES-ECOSYSTEM.md §1.4. */
const tsJest = ['ts-jest', { useESM: true }];
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
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/{unit,contract,cases}/**/*.test.ts'] },
    // npm pack, then fresh CommonJS and ESM cdk8s projects install the tarball (test/packaging/README.md).
    { ...common, displayName: 'packaging', testMatch: ['<rootDir>/test/packaging/*.test.ts'] },
    // Real loopback control plane (test-cluster/README.md): started once per run, torn down if this run started it.
    {
      ...common,
      displayName: 'cluster',
      testMatch: ['<rootDir>/test/cluster/**/*.test.ts'],
      globalSetup: '<rootDir>/test/cluster/global-setup.ts',
      globalTeardown: '<rootDir>/test/cluster/global-teardown.ts',
    },
  ],
};
