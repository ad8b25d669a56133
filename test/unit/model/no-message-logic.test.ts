/**
 * Logic matches reasons, never sentences: no file in src branches on the text of a message. Read from each file's
 * syntax tree (TypeScript's parser), so a message that is only built, printed or passed on does not count. Message
 * text is a property `message`, `detail` or `hint`, a variable named like one (`msg`, `errorMessage`), or a variable
 * initialised from either (`const d = r.detail.toLowerCase()`). Logic on it is
 * - a string search on it: `.startsWith`, `.endsWith`, `.includes`, `.match`, `.matchAll`, `.search`, `.indexOf`;
 * - a regular expression tested against it: `/…/.test(x.message)`;
 * - an (in)equality with a string: `x.message === '…'`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { messageLogic, sources } from './message-scan.js';

const SRC = path.resolve(import.meta.dirname, '../../../src');

/**
 * Functions allowed to read message text, as `file#function`, each because its text is the only signal there is:
 * kube-apiserver's 500 for a webhook whose TLS handshake failed has no reason or details, only Go's error text
 * (test/cluster/cases/conversion-cabundle-drift.webhook-tls.test.ts). The python runtime answers its own failures
 * (exec timeout, output decode failure) as HTTP 200 exit 1 with only Python's exception text to tell them apart
 * (`main.py@v0.5.6` `execute_command`; test/cases/runtime-payload-bytes.python-runtime.test.ts). The kubelet records
 * every sandbox-creation failure under the one reason FailedCreatePodSandBox; only the container runtime's text in the
 * event message tells an unknown handler (permanent) from a CNI hiccup (test/cluster/verify/verify-real-node.test.ts).
 * grpc-js ends a call that never reached a connection and one whose connection dropped mid-stream with the same
 * UNAVAILABLE status; only its details text tells them apart (test/unit/adapter/grpc-errors.test.ts).
 */
const ALLOWED: ReadonlySet<string> = new Set([
  'adapter/kubernetes/errors.ts#isWebhookTlsFailure',
  'adapter/runtime/grpc-errors.ts#droppedAfterSend',
  'adapter/runtime/python-runtime.ts#runtimeOwnFailure',
  'verify/probes/pod-fault.ts#permanentSandboxCause',
]);

const FOUND = sources(SRC).flatMap((f) => messageLogic(path.relative(SRC, f), readFileSync(f, 'utf8')));
const where = (h: string): string => h.slice(0, h.indexOf(':'));

test('the scan catches each form of logic on message text and passes messages that are only built or passed on', () => {
  const bad = [
    "if (e.message.startsWith('claim')) x();",
    'const f = findings.filter((f) => f.message.includes("stale"));',
    'const m = err.message.match(/(\\d+)h/);',
    'if (/forbidden|403/i.test(failed.message)) y();',
    "if (r.detail === 'timeout') z();",
    'const d = r.detail.toLowerCase(); if (/no such host/.test(d)) z();',
    "function f(msg: string) { return msg.endsWith('!'); }",
    "const t = r.kind === 'failed' ? r.error.message : r.message; if (t.indexOf('x') >= 0) z();",
  ];
  for (const line of bad) expect(messageLogic('x.ts', line)).toHaveLength(1);
  const good = [
    'const text = `${what}: ${err.message}`;',
    "if (e.message !== undefined) out.push(e.message.split('\\n')[0]);",
    "if (e.reason === 'ClaimStale') x();",
    'if (/^\\d+$/.test(port)) y();',
    "if (body.includes('no such host')) z();",
  ];
  for (const line of good) expect(messageLogic('x.ts', line)).toEqual([]);
});

test('no file in src branches on message text outside the allowed functions', () => {
  expect(FOUND.filter((h) => !ALLOWED.has(where(h)))).toEqual([]);
});

test('every allowed function still reads message text (the list stays as short as the need)', () => {
  expect([...ALLOWED].filter((a) => !FOUND.some((h) => where(h) === a))).toEqual([]);
});
