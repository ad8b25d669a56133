/**
 * The limit derivation of a synchronous call (case router-timeout-layers): router facts per pinned release, a deployed
 * router's flags and env over them, the runtime's exec limit, the adapter's longest deadline; the smallest decides.
 */
import {
  formatGoDuration,
  parseGoDuration,
  routerLimitFacts,
  runtimeExecLimitFacts,
} from '../../../src/releases/router-limits.js';
import { exceededLayer, routerLimits, syncCallLimits } from '../../../src/adapter/runtime/layer-limits.js';
import { MAX_DEADLINE_MS } from '../../../src/adapter/runtime/limits.js';

const go = routerLimitFacts('v0.5.6')!;
const deployed = (args: string[], env: Record<string, string> = {}) => ({ name: 'ns/sandbox-router', args, env });

test('router facts per pinned release: the Go router ignores X-Sandbox-Timeout, the python router takes it from v0.5.0', () => {
  const row = (tag: string) => {
    const f = routerLimitFacts(tag)!;
    return [f.router, f.responseHeaderTimeoutMs, f.proxyTimeoutMs, f.honoursSandboxTimeout, f.flags];
  };
  const goFlags = { responseHeaderTimeout: '--response-header-timeout', proxyTimeout: '--proxy-timeout' };
  expect(row('v1.0.3')).toEqual(['go', 30_000, 180_000, false, goFlags]);
  expect(row('v0.5.6')).toEqual(['go', 30_000, 180_000, false, goFlags]);
  expect(row('v0.5.0')).toEqual(['python', undefined, 180_000, true, {}]);
  expect(row('v0.4.6')).toEqual(['python', undefined, 180_000, false, {}]);
  expect(routerLimitFacts('v9.9.9')).toBeUndefined();
});

test('runtime exec limits per release: python runtime 300 s from v0.5.6, none before; sandboxd streams', () => {
  expect(runtimeExecLimitFacts('v1.0.3', 'python-runtime').execLimitMs).toBe(300_000);
  expect(runtimeExecLimitFacts('v0.5.6', 'python-runtime').execLimitMs).toBe(300_000);
  expect(runtimeExecLimitFacts('v0.5.0', 'python-runtime').execLimitMs).toBeUndefined();
  expect(runtimeExecLimitFacts('v0.5.6', 'sandboxd')).toMatchObject({ streaming: true });
});

test('Go durations both ways', () => {
  expect(['30s', '1m30s', '500ms', '1.5h', '0', 'abc', '', '30'].map(parseGoDuration)).toEqual([
    30_000,
    90_000,
    500,
    5_400_000,
    0,
    undefined,
    undefined,
    undefined,
  ]);
  expect([30_000, 90_000, 180_000, 500, 3_600_000].map(formatGoDuration)).toEqual([
    '30s',
    '1m30s',
    '3m',
    '500ms',
    '1h',
  ]);
});

test("a deployed router's flags win over its env, which wins over the release's defaults; bad values are ignored", () => {
  const pick = (args: string[], env?: Record<string, string>) => {
    const l = routerLimits(go, deployed(args, env));
    return [
      l.responseHeaderTimeout?.limitMs,
      l.responseHeaderTimeout?.source,
      l.proxyTimeout.limitMs,
      l.proxyTimeout.source,
    ];
  };
  expect(pick([])).toEqual([30_000, 'release-default', 180_000, 'release-default']);
  expect(pick(['--proxy-timeout=180s'])).toEqual([30_000, 'release-default', 180_000, 'deployment-flag']);
  expect(pick(['--response-header-timeout', '45s'], { PROXY_TIMEOUT_SECONDS: '90' })).toEqual([
    45_000,
    'deployment-flag',
    90_000,
    'deployment-env',
  ]);
  expect(pick(['--proxy-timeout=2m'], { PROXY_TIMEOUT_SECONDS: '90' })).toEqual([
    30_000,
    'release-default',
    120_000,
    'deployment-flag',
  ]);
  expect(pick(['--response-header-timeout=abc', '--proxy-timeout=-1s'], { PROXY_TIMEOUT_SECONDS: 'x' })).toEqual([
    30_000,
    'release-default',
    180_000,
    'release-default',
  ]);
  // Go's flag package: the last occurrence wins.
  expect(pick(['--response-header-timeout=10s', '--response-header-timeout=20s'])[0]).toBe(20_000);
});

describe('the smallest layer decides', () => {
  const router = routerLimits(go, deployed(['--proxy-timeout=180s']));

  test('python runtime through the Go router: the 30 s response-header timeout, named', () => {
    const l = syncCallLimits('router', { kind: 'python-runtime' }, 'v0.5.6', router);
    expect(l.effective).toEqual({
      layer: 'router',
      setting: 'router-response-header-timeout',
      limitMs: 30_000,
      source: 'release-default',
      label: 'router response-header timeout 30s',
    });
    expect(l.layers.map((x) => [x.setting, x.limitMs])).toEqual([
      ['router-response-header-timeout', 30_000],
      ['router-proxy-timeout', 180_000],
      ['runtime-exec-timeout', 300_000],
      ['adapter-max-deadline', MAX_DEADLINE_MS],
    ]);
    expect(exceededLayer(30_000, l)).toBeUndefined();
    expect(exceededLayer(30_001, l)?.setting).toBe('router-response-header-timeout');
  });

  test("python runtime direct: the runtime's exec limit, the runtime spec's value over the release's", () => {
    expect(syncCallLimits('direct', { kind: 'python-runtime' }, 'v1.0.3').effective).toMatchObject({
      layer: 'runtime',
      limitMs: 300_000,
      source: 'release-default',
    });
    expect(
      syncCallLimits('direct', { kind: 'python-runtime', execLimitMs: 600_000 }, 'v1.0.3').effective,
    ).toMatchObject({ layer: 'runtime', limitMs: 600_000, source: 'runtime-spec' });
  });

  test("sandboxd streams (Start): only the adapter's longest deadline; the router's limits do not apply", () => {
    const l = syncCallLimits('port-forward', { kind: 'sandboxd' }, 'v0.5.6', router);
    expect([l.streaming, l.effective.setting, l.effective.limitMs]).toEqual([
      true,
      'adapter-max-deadline',
      MAX_DEADLINE_MS,
    ]);
  });
});
