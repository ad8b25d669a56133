/**
 * A FAKE RuntimeProber for the isolation tests: it plays the inside of one sandbox — the files a reader may print, the
 * tools its image has, and `dmesg`. No runtime that runs on this machine or the kwok test cluster shows a gVisor or
 * Kata kernel (sandboxd runs natively there); the live node's runsc and runc pods are the real counterpart
 * (test/cluster/cases/gvisor-evidence-markers.real-node.test.ts).
 */
import type { ExecOutput, RuntimeCall, RuntimeProber } from '../../../src/verify/runtime-prober.js';

export interface Inside {
  /** Files by absolute path; a path not listed does not exist. */
  readonly files: Readonly<Record<string, string>>;
  /** The image's tools (argv[0]); `dmesg` answers only when listed and `dmesg` output is given. */
  readonly tools: readonly string[];
  readonly dmesg?: string;
}

const ok = (stdout: string): RuntimeCall<ExecOutput> => ({
  kind: 'answered',
  value: { exitCode: 0, stdout, stderr: '' },
  durationMs: 3,
});
const fail = (exitCode: number, stderr: string): RuntimeCall<ExecOutput> => ({
  kind: 'answered',
  value: { exitCode, stdout: '', stderr },
  durationMs: 3,
});

/** The runtime of one sandbox as {@link Inside} describes it; `asked` records every argv in order. */
export function insideRuntime(inside: Inside): RuntimeProber & { asked: string[][] } {
  const asked: string[][] = [];
  const never = async (): Promise<RuntimeCall<string>> => ({ kind: 'error', durationMs: 0, detail: 'not asked here' });
  return {
    asked,
    health: never,
    fileRoundTrip: never,
    readFile: never,
    close: async () => undefined,
    async execute(_t, argv) {
      asked.push([...argv]);
      const [tool = ''] = argv;
      if (!inside.tools.includes(tool)) return fail(127, `exec: "${tool}": executable file not found in $PATH`);
      if (tool === 'dmesg')
        return inside.dmesg === undefined ? fail(1, 'dmesg: klogctl: not permitted') : ok(inside.dmesg);
      const path = argv.at(-1)!;
      const content = inside.files[path];
      return content === undefined ? fail(1, `${tool}: ${path}: No such file or directory`) : ok(`${content}\n`);
    },
  };
}
