/**
 * Router limits at synthesis (case router-timeout-layers): the router construct sets its timeouts (only the flags the
 * pinned release's router has), synthesis warns when a router ends a synchronous call before a python runtime's exec
 * limit (plus margin), and refuses a declared client whose longest command passes a limit on its path.
 */
import { jest } from '@jest/globals';
import {
  ClientIncompatibleError,
  UnsupportedByReleaseError,
  type AgentEnvironment,
  type SandboxRouter,
} from '../../../src/constructs/index.js';
import { synthesizeEnvironment } from '../../../src/synth/index.js';
import { thrownBy } from '../thrown.js';
import { newEnvironment, podSpec, release } from './fixture.js';

jest.setTimeout(120_000);

const ROUTER_IMAGE = 'registry.example.internal/agent-sandbox/sandbox-router-go:v0.5.6';
const PY_IMAGE = 'registry.example.internal/agent-sandbox/python-runtime-sandbox:v0.5.6';
const PY_RUNTIME = { kind: 'python-runtime', container: 'main', ports: [8888] } as const;

interface Parts {
  tag?: 'v0.4.6' | 'v0.5.6' | 'v1.0.3';
  responseHeaderTimeoutSeconds?: number;
  proxyTimeoutSeconds?: number;
  execLimitSeconds?: string;
}

async function env(parts: Parts = {}): Promise<{ e: AgentEnvironment; router: () => SandboxRouter }> {
  const e = newEnvironment(await release(parts.tag ?? 'v0.5.6'), 'env', { install: false });
  const rc = e.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  const extra = parts.execLimitSeconds
    ? { env: [{ name: 'SANDBOX_EXEC_TIMEOUT_SECONDS', value: parts.execLimitSeconds }] }
    : {};
  const t = e.addTemplate('py', { runtimeClass: rc, podSpec: podSpec(PY_IMAGE, extra), runtime: PY_RUNTIME });
  e.addWarmPool('pool', { template: t });
  let router: SandboxRouter | undefined;
  const make = (): SandboxRouter =>
    (router ??= e.addRouter('router', {
      image: ROUTER_IMAGE,
      authorization: { mode: 'allow-all', acknowledgeUnauthenticated: true },
      callers: [],
      ...(parts.responseHeaderTimeoutSeconds !== undefined
        ? { responseHeaderTimeoutSeconds: parts.responseHeaderTimeoutSeconds }
        : {}),
      ...(parts.proxyTimeoutSeconds !== undefined ? { proxyTimeoutSeconds: parts.proxyTimeoutSeconds } : {}),
    }));
  return { e, router: make };
}

describe.each(['v0.5.6', 'v1.0.3'] as const)('SandboxRouter timeouts, %s', (tag) => {
  test("defaults: upstream's --proxy-timeout=180s stays, the 30 s header timeout is the router's default", async () => {
    const r = (await env({ tag })).router();
    expect(r.args.filter((a) => a.includes('timeout'))).toEqual(['--proxy-timeout=180s']);
    expect(r.timeouts).toEqual({
      responseHeaderTimeout: { ms: 30_000, source: 'default' },
      proxyTimeout: { ms: 180_000, source: 'flag' },
    });
    expect(r.syncLimitMs).toBe(30_000);
  });

  test("set: the flags are written, upstream's proxy timeout is replaced, the limits follow", async () => {
    const r = (await env({ tag, responseHeaderTimeoutSeconds: 400, proxyTimeoutSeconds: 600 })).router();
    expect(r.args.filter((a) => a.includes('timeout'))).toEqual([
      '--response-header-timeout=6m40s',
      '--proxy-timeout=10m',
    ]);
    expect(r.syncLimitMs).toBe(400_000);
  });
});

test('a timeout prop on a release whose router takes no such flag is refused, naming the prop and release', async () => {
  const { router } = await env({ tag: 'v0.4.6', responseHeaderTimeoutSeconds: 60 });
  const err = thrownBy(router, UnsupportedByReleaseError, 'UnsupportedByRelease');
  expect([err.path, err.setting, err.release]).toEqual(['env/router', 'responseHeaderTimeoutSeconds', 'v0.4.6']);
});

describe('synthesis: router limits against the runtime exec limit', () => {
  test('the default router (30 s) before a python runtime (300 s): a typed warning, synthesis goes on', async () => {
    const { e, router } = await env();
    router();
    const s = synthesizeEnvironment(e);
    expect(s.warnings.map((w) => [w.reason, w.path, w.router, w.template, w.execLimitMs])).toEqual([
      [
        'RouterLimitBelowExecLimit',
        'env/router',
        { path: 'env/router', syncLimitMs: 30_000, setting: '--response-header-timeout' },
        'agent-sandboxes/py',
        300_000,
      ],
    ]);
    expect(s.notes).toHaveLength(s.warnings.length);
  });

  test("the proxy timeout decides when it is the smaller; the runtime's own SANDBOX_EXEC_TIMEOUT_SECONDS counts", async () => {
    const { e, router } = await env({
      responseHeaderTimeoutSeconds: 900,
      proxyTimeoutSeconds: 120,
      execLimitSeconds: '200',
    });
    router();
    const w = synthesizeEnvironment(e).warnings;
    expect(w.map((x) => [x.router.syncLimitMs, x.router.setting, x.execLimitMs])).toEqual([
      [120_000, '--proxy-timeout', 200_000],
    ]);
  });

  test('router limits at or above the exec limit plus the margin: no warning', async () => {
    const { e, router } = await env({ responseHeaderTimeoutSeconds: 305, proxyTimeoutSeconds: 305 });
    router();
    expect(synthesizeEnvironment(e).warnings).toEqual([]);
  });
});

describe('synthesis: a declared client whose longest command passes a limit is refused', () => {
  function refusal(e: AgentEnvironment): ClientIncompatibleError {
    return thrownBy(() => e.seal(), ClientIncompatibleError, 'ClientCommandExceedsRouterLimit');
  }

  test('router mode, 120 s commands, the default router: refused with both values', async () => {
    const { e, router } = await env();
    router();
    e.addClient({ sdk: 'k8s-agent-sandbox', version: '1.0.8', mode: 'router', commandTimeoutSeconds: 120 });
    const err = refusal(e);
    expect([err.path, err.needs, err.offers]).toEqual([
      'env/client-k8s-agent-sandbox-router',
      { commandTimeoutSeconds: 120 },
      { routerLimit: { seconds: 30, setting: '--response-header-timeout' } },
    ]);
  });

  test("a router long enough, a runtime limit too short: refused by the runtime's exec limit", async () => {
    const { e, router } = await env({
      responseHeaderTimeoutSeconds: 400,
      proxyTimeoutSeconds: 400,
      execLimitSeconds: '60',
    });
    router();
    e.addClient({ sdk: 'k8s-agent-sandbox', version: '1.0.8', mode: 'router', commandTimeoutSeconds: 120 });
    const err = thrownBy(() => e.seal(), ClientIncompatibleError, 'ClientCommandExceedsExecLimit');
    expect([err.needs, err.offers]).toEqual([
      { commandTimeoutSeconds: 120 },
      { template: 'agent-sandboxes/py', execLimit: { seconds: 60, from: 'env' } },
    ]);
  });

  test('every limit long enough: accepted', async () => {
    const { e, router } = await env({ responseHeaderTimeoutSeconds: 400, proxyTimeoutSeconds: 400 });
    router();
    e.addClient({ sdk: 'k8s-agent-sandbox', version: '1.0.8', mode: 'router', commandTimeoutSeconds: 120 });
    expect(() => e.seal()).not.toThrow();
  });
});
