/** The outcome of one command in a runtime, shared by sandboxd and the python runtime. */
export interface ProcessResult {
  readonly exitCode: number;
  /** UTF-8 decoded, at most the call's `maxResponseBytes` bytes (then `truncated`). */
  readonly stdout: string;
  readonly stderr: string;
  readonly truncated: boolean;
  readonly durationMs: number;
}

/** Options of one command. */
export interface ProcessOptions {
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Deadline, ms; default: the client's limits. */
  readonly deadlineMs?: number;
}
