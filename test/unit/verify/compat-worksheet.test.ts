/** The compatibility worksheet's rows join the live tuple, the release facts and the tested matrix (`agentplane compat` renders them). */
import { readFileSync } from 'node:fs';
import { MatrixSchema, worksheetRows, type CompatibilityTuple, type Matrix } from '../../../src/verify/index.js';

const e = (value: string): { value: string; source: string } => ({ value, source: 'test' });
const tuple: CompatibilityTuple = {
  kubernetes: e('v1.36.5'),
  crdRelease: e('v0.5.6'),
  controller: e('registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6'),
  extensions: e('v0.5.6'),
  router: e('not deployed'),
  runtimeServer: e('sandboxd (registry.local/sandboxd:v0.5.6)'),
  clientSdk: e('agentplane 0.1.0'),
  containerRuntime: e('containerd://2.1.0'),
  cni: e('unknown'),
};
const matrix: Matrix = {
  generatedBy: 'test',
  rows: [
    {
      release: 'v0.5.6',
      tuple: {
        kubernetes: 'v1.36.3',
        crdRelease: 'v0.5.6',
        controller: 'agent-sandbox-controller v0.5.6 (local process)',
        extensions: 'v0.5.6',
        router: 'sandbox-router v0.5.6 (Go)',
        runtimeServer: 'sandboxd v0.5.6',
        containerRuntime: 'kwok-v0.8.0',
        cni: 'unknown',
      },
      passed: 12,
      failed: 0,
      testFiles: [],
      ranAt: '2026-11-29T12:00:00Z',
    },
    {
      release: 'v0.5.6',
      tuple: { containerRuntime: 'containerd://2.1.0' },
      passed: 3,
      failed: 1,
      testFiles: [],
      ranAt: '2026-11-29T12:00:00Z',
    },
  ],
};

describe('compat worksheet', () => {
  it('a declared application client is a tuple part: tested only when a passing run had that SDK, version and mode', () => {
    const declared = { ...tuple, clientSdk: e('k8s-agent-sandbox 1.0.8 (router)') };
    const withClient: Matrix = {
      ...matrix,
      rows: [
        ...matrix.rows,
        { ...matrix.rows[0]!, tuple: { ...matrix.rows[0]!.tuple, clientSdk: 'k8s-agent-sandbox 1.0.8 (router)' } },
      ],
    };
    expect(worksheetRows(declared, 'v0.5.6', withClient).find((r) => r.part === 'clientSdk')).toEqual(
      expect.objectContaining({ live: 'k8s-agent-sandbox 1.0.8 (router)', tested: 'yes' }),
    );
    expect(worksheetRows(declared, 'v0.5.6', matrix).find((r) => r.part === 'clientSdk')?.tested).toBe('no');
    expect(
      worksheetRows({ ...tuple, clientSdk: e('k8s-agent-sandbox 1.0.8 (tunnel)') }, 'v0.5.6', withClient).find(
        (r) => r.part === 'clientSdk',
      )?.tested,
    ).toBe('no');
  });

  it('marks parts a passing test run had for the same release; Kubernetes compares by minor, runtime by kind and release version', () => {
    const rows = worksheetRows(tuple, 'v0.5.6', matrix);
    expect(rows.map((r) => [r.part, r.tested])).toEqual([
      ['kubernetes', 'yes'],
      ['crdRelease', 'yes'],
      ['controller', 'no'],
      ['extensions', 'yes'],
      ['router', 'not deployed'],
      ['runtimeServer', 'yes'],
      ['clientSdk', 'n/a'],
      ['containerRuntime', 'no'],
      ['cni', 'n/a'],
    ]);
    expect(rows.find((r) => r.part === 'kubernetes')?.builtFor).toBe('1.36 (k8s.io/api v0.36.3, go.mod@v0.5.6)');
    expect(rows.find((r) => r.part === 'controller')?.builtFor).toBe(
      'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6',
    );
  });

  it("the controller compares by placement: a Deployment of v0.5.6 is not the harness's local process, an out-of-cluster controller (assumed the pinned release) is", () => {
    expect(worksheetRows(tuple, 'v0.5.6', matrix).find((r) => r.part === 'controller')).toEqual(
      expect.objectContaining({ live: 'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6', tested: 'no' }),
    );
    const external = worksheetRows({ ...tuple, controller: e('out-of-cluster') }, 'v0.5.6', matrix).find(
      (r) => r.part === 'controller',
    );
    expect(external).toEqual(
      expect.objectContaining({ live: 'out-of-cluster (assumed v0.5.6, the pinned release)', tested: 'yes' }),
    );
    const onlyOld = {
      ...matrix,
      rows: matrix.rows.map((r) => ({
        ...r,
        tuple: { ...r.tuple, controller: 'agent-sandbox-controller v0.5.0 (local process)' },
      })),
    };
    expect(
      worksheetRows({ ...tuple, controller: e('out-of-cluster') }, 'v0.5.6', onlyOld).find(
        (r) => r.part === 'controller',
      )?.tested,
    ).toBe('no');
  });

  it('a part the environment does not deploy is "not deployed", never a gap; a deployed router of unknown version is not covered', () => {
    const none = worksheetRows({ ...tuple, runtimeServer: e('none') }, 'v0.5.6', matrix);
    expect(none.filter((r) => r.tested === 'not deployed').map((r) => r.part)).toEqual(['router', 'runtimeServer']);
    const routed = worksheetRows(
      { ...tuple, router: e('sandbox-router agent-sandbox-system/sandbox-router-svc') },
      'v0.5.6',
      matrix,
    );
    expect(routed.find((r) => r.part === 'router')?.tested).toBe('no');
  });

  it('mixed node runtimes are covered when each ran in a passing row, alone or beside others', () => {
    const rt = (live: string, rows: Array<Record<string, string>>): string | undefined =>
      worksheetRows({ ...tuple, containerRuntime: e(live) }, 'v0.5.6', {
        ...matrix,
        rows: rows.map((t) => ({ ...matrix.rows[0]!, tuple: t })),
      }).find((r) => r.part === 'containerRuntime')?.tested;
    const mixed = { containerRuntime: 'containerd://2.2.9, kwok-0.8.0' };
    expect(rt('containerd://2.2.9', [mixed])).toBe('yes');
    expect(rt('kwok-0.8.0, containerd://2.2.9', [mixed])).toBe('yes');
    expect(rt('containerd://2.2.9, kwok-0.8.0', [{ containerRuntime: 'kwok-0.8.0' }])).toBe('no');
    expect(rt('containerd://2.2.10', [mixed])).toBe('no');
    // a failed row covers nothing
    expect(
      worksheetRows({ ...tuple, containerRuntime: e('containerd://2.1.0') }, 'v0.5.6', matrix).find(
        (r) => r.part === 'containerRuntime',
      )?.tested,
    ).toBe('no');
  });

  it('rows of another release never count', () => {
    expect(worksheetRows(tuple, 'v0.4.6', matrix).filter((r) => r.tested === 'yes')).toEqual([]);
  });

  test("the package's matrix: the client modes test/cluster/client/ runs are tested, the others are not", () => {
    const shipped = MatrixSchema.parse(JSON.parse(readFileSync('test/compat/matrix.json', 'utf8')));
    const mode = (m: string): string | undefined =>
      worksheetRows({ ...tuple, clientSdk: e(`k8s-agent-sandbox 1.0.8 (${m})`) }, 'v0.5.6', shipped).find(
        (r) => r.part === 'clientSdk',
      )?.tested;
    expect(['router', 'tunnel', 'in-cluster', 'gateway', 'sandboxd-pod-tunnel'].map((m) => [m, mode(m)])).toEqual([
      ['router', 'yes'],
      ['tunnel', 'yes'],
      ['in-cluster', 'yes'],
      ['gateway', 'no'],
      ['sandboxd-pod-tunnel', 'no'],
    ]);
  });
});
