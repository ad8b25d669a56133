/**
 * Controller flags a pinned release does not define: the controller exits 2 on an unknown flag, so synthesis refuses
 * them. v1.0.3 removed every webhook flag (`cmd/agent-sandbox-controller/main.go@v0.5.6` against `@v1.0.3`); the
 * metrics-TLS flags arrived in v1.0.3 (`cmd/agent-sandbox-controller/main.go@v1.0.3`, absent at every earlier tag).
 */
import type { ReleaseTag } from '../releases/index.js';

const WEBHOOK_FLAGS = [
  '--webhook-port',
  '--webhook-cert-dir',
  '--webhook-cert-name',
  '--webhook-key-name',
  '--webhook-service-name',
  '--webhook-namespace',
  '--manage-webhook-certs',
  '--enable-webhook',
] as const;

const METRICS_TLS_FLAGS = [
  '--metrics-secure-serving',
  '--metrics-cert-dir',
  '--tls-min-version',
  '--tls-cipher-suites',
];

const ABSENT: Readonly<Record<ReleaseTag, readonly string[]>> = {
  'v0.4.6': METRICS_TLS_FLAGS,
  'v0.5.0': METRICS_TLS_FLAGS,
  'v0.5.6': METRICS_TLS_FLAGS,
  'v1.0.3': WEBHOOK_FLAGS,
};

/** The args that set a flag the controller of `tag` does not define (Go accepts `-flag`, `--flag`, `--flag=value`). */
export function flagsUnknownTo(tag: ReleaseTag, args: readonly string[]): string[] {
  const absent = ABSENT[tag];
  const name = (arg: string): string => `--${arg.replace(/^--?/, '').split('=')[0]}`;
  return args.filter((a) => a.startsWith('-') && absent.includes(name(a)));
}
