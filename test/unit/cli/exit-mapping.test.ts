/**
 * Exit codes come from each error's exit category, never from its class name: one instance of every error class in
 * src, the code it maps to, the same code for a renamed copy of the class, and every code `agentplane --help` lists
 * reached through the mapping.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CommanderError } from 'commander';
import { ExecCredentialError, KubeconfigError, KubeDeadlineError } from '../../../src/adapter/kubernetes/errors.js';
import { LiveStateError } from '../../../src/adapter/kubernetes/upgrade-state.js';
import {
  StorageMigrationError,
  type StorageMigrationResult,
} from '../../../src/adapter/kubernetes/storage-migration.js';
import { notVerifiedCategory } from '../../../src/cli/commands/verify.js';
import { EXIT_CODES, exitCodeFor, refusedReadsExitCode, UsageError } from '../../../src/cli/errors.js';
import { ExitCode, exitCodeHelp } from '../../../src/cli/exit-codes.js';
import { LiveReadError } from '../../../src/cli/live-reader.js';
import {
  ConflictError,
  ConstructError,
  ConstructPropsError,
  KnownDefectiveImageError,
  MissingReferenceError,
  RbacNarrowingError,
  UnpinnedImageError,
  UnsupportedByReleaseError,
  VerifierDeliveryError,
} from '../../../src/constructs/errors.js';
import { CapacityError, UnboundedLifetimeError, UnreachableError } from '../../../src/constructs/bounds-errors.js';
import { ClientIncompatibleError } from '../../../src/constructs/client.js';
import { RouterOptionNotModeledError } from '../../../src/constructs/router.js';
import { DescriptorPartsError } from '../../../src/constructs/descriptor.js';
import { ObjectIdentityError } from '../../../src/diff/identity.js';
import { LiveObjectError } from '../../../src/diff/live.js';
import { ManifestParseError, ManifestSourceError } from '../../../src/diff/sources.js';
import { AgentPlaneError, EXIT_CATEGORIES } from '../../../src/model/errors.js';
import {
  ChecksumMismatchError,
  LockFileInvalidError,
  LockMismatchError,
  MissingFileError,
  ReleaseError,
  ReleaseParseError,
  SourceUnreachableError,
  UnknownReleaseError,
  VersionNotServedError,
} from '../../../src/releases/errors.js';
import { MirrorDirectoryMissingError, RedirectRefusedError } from '../../../src/releases/fetch.js';
import {
  DuplicateObjectError,
  EnvironmentInvalidError,
  EnvironmentModuleError,
  ObjectTooLargeError,
  OutputRuleError,
  SchemaViolationError,
} from '../../../src/synth/errors.js';
import { DuplicatePackageCopyError } from '../../../src/constructs/package-copies.js';
import { EnvironmentDescriptorError } from '../../../src/verify/environment.js';
import { ProbeGraphError } from '../../../src/verify/runner.js';
import { VerifyCouldNotRunError } from '../../../src/verify/verify.js';
import { VerifierNotReadyError } from '../../../src/verify/readiness-gate.js';
import { ClusterUnusableError } from '../../../src/verify/compat-worksheet.js';
import { StoredReportError } from '../../../src/verify/report-store.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const REF = { namespace: 'agent-sandboxes', name: 'agentplane-verify-report' };
const SANDBOX = { apiVersion: 'agents.x-k8s.io/v1beta1', kind: 'Sandbox', metadata: { name: 's', namespace: 'n' } };
const RBAC = {
  field: 'rbac.pods',
  resource: 'pods',
  verbs: ['list'],
  namespaces: ['a'],
  release: 'v0.5.6',
  grantedBy: ['ClusterRole x'],
  serviceAccount: 'system:serviceaccount:s:c',
};

/** One instance of every concrete error class, with the exit code it must give and its reason. */
const MIGRATION: StorageMigrationResult = {
  mode: 'apply',
  marker: '2026-12-05T05:00:00.000Z',
  source: 'context test',
  kinds: [],
  rewritten: 0,
  elapsedMs: 0,
  objectsPerSecond: 0,
};
const CASES: ReadonlyArray<readonly [AgentPlaneError, number, string]> = [
  [new ReleaseError('CrdNotFound', 'm', 'h'), ExitCode.release, 'CrdNotFound'],
  [new UnknownReleaseError('v9', ['v0.5.6']), ExitCode.release, 'UnknownRelease'],
  [new ChecksumMismatchError('f', 'a', 'b'), ExitCode.release, 'ChecksumMismatch'],
  [new MissingFileError('f', 'mirror /m', 'mirror'), ExitCode.release, 'MissingFile'],
  [new SourceUnreachableError('upstream', new Error('ECONNREFUSED')), ExitCode.release, 'SourceUnreachable'],
  [new MirrorDirectoryMissingError('/nonexistent'), ExitCode.release, 'MirrorDirectoryMissing'],
  [new VersionNotServedError('v0.4.6', 'Sandbox', 'v1beta1', ['v1alpha1']), ExitCode.release, 'VersionNotServed'],
  [new ReleaseParseError('f', 'bad'), ExitCode.release, 'ReleaseFileUnparsable'],
  [
    new LockFileInvalidError('agentplane.lock.json', 'bad', [{ field: '(root)', code: 'NotJson' }]),
    ExitCode.invalid,
    'LockFileInvalid',
  ],
  [
    new LockMismatchError('agentplane.lock.json', [{ field: 'commit', locked: 'a', declared: 'b' }]),
    ExitCode.lockMismatch,
    'LockMismatch',
  ],
  [new ConstructError('App/Env', 'm', 'h'), ExitCode.invalid, 'ConstructInvalid'],
  [
    new DescriptorPartsError('part env-0001 missing', 'h', 'part-missing', 'env', 'env-0001'),
    ExitCode.invalid,
    'DescriptorPartsInvalid',
  ],
  [
    new ConstructPropsError('App/Env/T', 'SandboxTemplate', [
      { prop: 'name', reason: 'NotDnsLabel', value: 'A', message: 'name: must be a DNS label' },
    ]),
    ExitCode.invalid,
    'InvalidProps',
  ],
  [
    new UnpinnedImageError('App/Env/T', 'container c', 'img:latest', 'FloatingTag', 'latest tag'),
    ExitCode.invalid,
    'UnpinnedImage',
  ],
  [
    new KnownDefectiveImageError('App/Env/T', 'container c', 'img:v1', {
      id: 'd',
      defect: 'x',
      fixedIn: 'v2',
      source: 's',
    }),
    ExitCode.invalid,
    'KnownDefectiveImage',
  ],
  [new ConflictError('App/Env', 'm', 'h'), ExitCode.invalid, 'Conflict'],
  [
    new VerifierNotReadyError([{ subject: 'Deployment s/c', reason: 'ControllerNotAvailable', detail: 'd' }], 1000),
    ExitCode.notReady,
    'NotReady',
  ],
  [
    new VerifierDeliveryError(
      'App/Env/verify',
      'TtlWithHookDelivery',
      ['delivery', 'ttlSecondsAfterFinished'],
      { delivery: 'argocd', ttlSecondsAfterFinished: 0 },
      'm',
      'h',
    ),
    ExitCode.invalid,
    'TtlWithHookDelivery',
  ],
  [new MissingReferenceError('App/Env', 'm', 'h'), ExitCode.invalid, 'MissingReference'],
  [new UnsupportedByReleaseError('App/Env', 'router', 'v0.4.6', 'm', 'h'), ExitCode.invalid, 'UnsupportedByRelease'],
  [
    new RbacNarrowingError('App/Env/Install', { ...RBAC, reason: 'ControllerWatchesCluster' }),
    ExitCode.invalid,
    'ControllerWatchesCluster',
  ],
  [
    new SchemaViolationError('dev', 'v0.5.6', [
      {
        path: 'p',
        object: { group: 'g', kind: 'K', name: 'n' },
        field: 'f',
        reason: 'UnknownField',
        message: 'unknown',
      },
    ]),
    ExitCode.invalid,
    'SchemaViolation',
  ],
  [
    new OutputRuleError('dev', [
      {
        rule: 'UnpinnedImage',
        path: 'App/dev/T/Resource',
        object: { group: 'extensions.agents.x-k8s.io', kind: 'SandboxTemplate', namespace: 'ns', name: 't' },
        field: 'spec.podTemplate.spec.containers[main].image',
        value: 'r.example/sandboxd:latest',
        message: 'not pinned',
      },
    ]),
    ExitCode.invalid,
    'OutputRuleBroken',
  ],
  [
    new DuplicatePackageCopyError(
      'App/dev',
      'cdk8s',
      '/a/node_modules/cdk8s/lib/index.js',
      '/b/node_modules/cdk8s/lib/index.js',
    ),
    ExitCode.invalid,
    'DuplicatePackageCopy',
  ],
  [
    new DuplicateObjectError('dev', [{ object: { group: 'g', kind: 'K', name: 'n' }, paths: ['a', 'b'] }]),
    ExitCode.invalid,
    'DuplicateObject',
  ],
  [
    new EnvironmentInvalidError('dev', [{ path: 'p', reason: 'Conflict', message: 'p: x' }]),
    ExitCode.invalid,
    'EnvironmentInvalid',
  ],
  [new EnvironmentModuleError('env.ts', 'm', 'h'), ExitCode.invalid, 'EnvironmentModuleUnusable'],
  [
    new ObjectTooLargeError('dev', 'object', 1048576, [
      { path: 'env/blob', object: { group: 'core', kind: 'ConfigMap', namespace: 'a', name: 'blob' }, bytes: 2000000 },
    ]),
    ExitCode.invalid,
    'ObjectTooLarge',
  ],
  [new UnboundedLifetimeError('env/claim', 'claim c'), ExitCode.invalid, 'UnboundedLifetime'],
  [
    new CapacityError('env/pool', 'NodesExhausted', 'm', 'h', {
      runtimeClass: 'kata',
      requests: { cpu: '1', memory: '1Gi' },
      nodesDeclared: 1,
      nodesNeeded: 2,
    }),
    ExitCode.invalid,
    'NodesExhausted',
  ],
  [
    new UnreachableError('env/router', 'RouterPeerMismatch', 'm', 'h', {
      template: 'sbx/py',
      router: { namespace: 'default' },
    }),
    ExitCode.invalid,
    'RouterPeerMismatch',
  ],
  [new DescriptorPartsError('m', 'h', 'checksum-mismatch', 'env'), ExitCode.invalid, 'DescriptorPartsInvalid'],
  [
    new RouterOptionNotModeledError('App/Env/Router', '--path-routing-prefix', '/s', 'v1.0.3', 'm', 'h'),
    ExitCode.invalid,
    'RouterOptionNotModeled',
  ],
  [
    new ClientIncompatibleError(
      'env/client',
      'ClientNoPool',
      'm',
      'h',
      { sdk: 's', version: '1', mode: 'router' },
      {},
      {},
    ),
    ExitCode.invalid,
    'ClientNoPool',
  ],
  [new RedirectRefusedError('https://x/f', 307, 'https://y/f'), ExitCode.release, 'RedirectRefused'],
  [new UsageError('m', 'h'), ExitCode.usage, 'InvalidUsage'],
  [
    new LiveReadError('read', SANDBOX, { category: 'unreachable', message: 'refused' }),
    ExitCode.cluster,
    'LiveReadFailed',
  ],
  [
    new LiveReadError('read', SANDBOX, { category: 'unauthenticated', message: '401' }),
    ExitCode.unauthenticated,
    'LiveReadFailed',
  ],
  [new LiveReadError('read', SANDBOX, { category: 'internal', message: '500' }), ExitCode.cluster, 'LiveReadFailed'],
  [new ClusterUnusableError({ category: 'timeout', message: 'no answer' }), ExitCode.cluster, 'ClusterUnusable'],
  [
    new ClusterUnusableError({ category: 'unauthenticated', message: '401' }),
    ExitCode.unauthenticated,
    'ClusterUnusable',
  ],
  [new LiveStateError('list', 'h'), ExitCode.cluster, 'LiveStateUnreadable'],
  [new LiveStateError('list', 'h', 'forbidden'), ExitCode.forbidden, 'LiveStateUnreadable'],
  [new LiveStateError('list', 'h', 'unreachable'), ExitCode.cluster, 'LiveStateUnreadable'],
  // migrate-storage maps write failures and an unconfirmed re-list to its own 13/14 (migrate-storage-exit-codes.ts)
  [
    new StorageMigrationError('StorageReadFailed', 'm', MIGRATION, { category: 'unreachable', message: 'refused' }),
    ExitCode.cluster,
    'StorageReadFailed',
  ],
  [
    new StorageMigrationError('StorageWriteFailed', 'm', MIGRATION, { category: 'forbidden', message: '403' }),
    ExitCode.forbidden,
    'StorageWriteFailed',
  ],
  [
    new ExecCredentialError('m', 'cmd', 'h', { failure: 'not-found' }),
    ExitCode.unauthenticated,
    'ExecCredentialFailed',
  ],
  [new KubeconfigError('m', 'h', { problem: 'none-found' }), ExitCode.usage, 'KubeconfigUnusable'],
  [new KubeDeadlineError('get', 5000), ExitCode.cluster, 'DeadlineExceeded'],
  [new EnvironmentDescriptorError('m', 'h'), ExitCode.invalid, 'EnvironmentDescriptorInvalid'],
  [new VerifyCouldNotRunError('m', 'h'), ExitCode.cluster, 'VerifyCouldNotRun'],
  [new VerifyCouldNotRunError('m', 'h', 'forbidden'), ExitCode.forbidden, 'VerifyCouldNotRun'],
  [new ProbeGraphError('cycle', ['a', 'a']), ExitCode.internal, 'ProbeGraphInvalid'],
  [new LiveObjectError('m', 'h'), ExitCode.internal, 'LiveObjectRefused'],
  [new ObjectIdentityError('m', 'h'), ExitCode.invalid, 'ObjectIdentityInvalid'],
  [new ManifestParseError('f', 'line 1'), ExitCode.invalid, 'ManifestUnparsable'],
  [new ManifestSourceError('m', 'h'), ExitCode.invalid, 'ManifestSourceInvalid'],
  // the exit codes verify --from-cluster gave a failed report read before it had a class
  [new StoredReportError(REF, 'm', 'not-found'), ExitCode.notVerified, 'StoredReportUnusable'],
  [new StoredReportError(REF, 'm', 'forbidden'), ExitCode.forbidden, 'StoredReportUnusable'],
  [new StoredReportError(REF, 'm', 'unauthenticated'), ExitCode.unauthenticated, 'StoredReportUnusable'],
  [new StoredReportError(REF, 'm', 'invalid'), ExitCode.invalid, 'StoredReportUnusable'],
  [new StoredReportError(REF, 'm', 'unreachable'), ExitCode.cluster, 'StoredReportUnusable'],
  [new StoredReportError(REF, 'm', 'unknown'), ExitCode.cluster, 'StoredReportUnusable'],
];

/** Names of the error classes declared in src (`class XError extends`). */
function declaredErrorClasses(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...declaredErrorClasses(full));
    else if (entry.name.endsWith('.ts'))
      for (const m of readFileSync(full, 'utf8').matchAll(/^(?:export )?(abstract )?class (\w+Error) extends/gm))
        if (!m[1]) out.push(m[2]!);
  }
  return out;
}

describe('exit codes by category', () => {
  test('every concrete error class in src is covered here, and each extends AgentPlaneError', () => {
    const covered = new Set(CASES.map(([e]) => e.constructor.name));
    expect(declaredErrorClasses(path.join(ROOT, 'src')).filter((n) => !covered.has(n))).toEqual([]);
    for (const [e] of CASES) expect(e).toBeInstanceOf(AgentPlaneError);
  });

  test.each(CASES.map(([e, code, reason]) => [e.constructor.name, e, code, reason] as const))(
    '%s: exit %#',
    (_name, err, code, reason) => {
      expect(exitCodeFor(err)).toBe(code);
      expect(err.reason).toBe(reason);
      expect(err.reason).toMatch(/^[A-Z][A-Za-z0-9]*$/);
    },
  );

  test.each(CASES.map(([e, code]) => [e.constructor.name, e, code] as const))(
    '%s renamed keeps its exit code',
    (name, err, code) => {
      const Renamed = class extends (err.constructor as new (...args: never[]) => Error) {};
      Object.defineProperty(Renamed, 'name', { value: `Not${name}` });
      const renamed = Object.assign(Object.create(Renamed.prototype) as AgentPlaneError, err);
      expect(renamed.constructor.name).toBe(`Not${name}`);
      expect(exitCodeFor(renamed)).toBe(code);
    },
  );

  test('a foreign error that only carries a known class name or a category is internal (1)', () => {
    expect(exitCodeFor(Object.assign(new Error('x'), { name: 'KubeconfigError' }))).toBe(ExitCode.internal);
    expect(exitCodeFor(Object.assign(new Error('x'), { category: 'unauthenticated' }))).toBe(ExitCode.internal);
    expect(exitCodeFor('a string')).toBe(ExitCode.internal);
  });

  test('every category has its own code', () => {
    expect(new Set(EXIT_CATEGORIES.map((c) => EXIT_CODES[c])).size).toBe(EXIT_CATEGORIES.length);
  });

  test('verify below its requirements: 8 for refused credentials, 9 for refused reads, else 6', () => {
    const row = (cause?: string) => ({ met: false, evidence: [{ ...(cause ? { cause } : {}) }] });
    const code = (causes: Array<string | undefined>) =>
      EXIT_CODES[notVerifiedCategory({ capabilities: causes.map(row) } as never)];
    expect(code([undefined])).toBe(ExitCode.notVerified);
    expect(code(['timeout'])).toBe(ExitCode.notVerified);
    expect(code(['forbidden', undefined])).toBe(ExitCode.forbidden);
    expect(code(['forbidden', 'unauthenticated'])).toBe(ExitCode.unauthenticated);
  });

  test('an answer the cluster left incomplete (diff --live, compat) exits with the code of its failures', () => {
    expect(refusedReadsExitCode(['forbidden', 'invalid'])).toBe(ExitCode.forbidden);
    expect(refusedReadsExitCode(['forbidden', 'unauthenticated'])).toBe(ExitCode.unauthenticated);
    expect(refusedReadsExitCode(['timeout', 'invalid'])).toBe(ExitCode.cluster);
    expect(refusedReadsExitCode(['internal'])).toBe(ExitCode.cluster);
    expect(refusedReadsExitCode([undefined])).toBe(ExitCode.cluster);
    expect(refusedReadsExitCode(['invalid', 'not-found', 'too-large', 'conflict'])).toBe(ExitCode.invalid);
  });

  test('every exit code --help documents is reached: 0 by help, the others through an error or a verify report', () => {
    const documented = [...exitCodeHelp().matchAll(/^ {2}(\d+) /gm)].map((m) => Number(m[1]));
    expect(documented).toEqual(Object.values(ExitCode));
    const reached = new Set<number>([
      exitCodeFor(new CommanderError(0, 'commander.helpDisplayed', '')),
      exitCodeFor(new CommanderError(1, 'commander.unknownOption', '')),
      ...CASES.map(([e]) => exitCodeFor(e)),
      EXIT_CODES[notVerifiedCategory({ capabilities: [{ met: false, evidence: [{}] }] } as never)],
    ]);
    expect(documented.filter((c) => !reached.has(c))).toEqual([]);
  });
});
