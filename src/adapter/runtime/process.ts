/** The outcome of one command in a runtime, shared by sandboxd and the python runtime. */
import type { StreamOutput } from '../types.js';

/** One output stream as captured: the bytes kept (up to the per-stream cap) and how many there were. */
export interface CapturedStream {
  readonly data: Buffer;
  /** Bytes the command wrote as far as the adapter saw them (kept + dropped). */
  readonly totalBytes: number;
  readonly truncated: boolean;
}

export interface ProcessResult {
  /** The exit status; for a command killed by a signal, 128 + the signal number (the shell's and the kubelet's rule). */
  readonly exitCode: number;
  /** The signal that killed the command, when the runtime says so. */
  readonly signal?: number;
  /** UTF-8 decoded (invalid bytes replaced, see `output.*.lossy`), at most the call's `maxResponseBytes` bytes (then `truncated`). */
  readonly stdout: string;
  readonly stderr: string;
  /** Whether either stream was cut at the cap. */
  readonly truncated: boolean;
  readonly durationMs: number;
  /** The streams as bytes with their counts. */
  readonly output: { readonly stdout: CapturedStream; readonly stderr: CapturedStream };
}

/** Options of one command. */
export interface ProcessOptions {
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Deadline, ms; default: the client's limits. */
  readonly deadlineMs?: number;
  /** Bytes fed to stdin, then end-of-file (sandboxd `Start` only); default none: end-of-file at once. */
  readonly stdin?: Uint8Array;
}

/** Collects a stream's bytes up to a cap, counting what it drops. */
export class Capture {
  private readonly parts: Buffer[] = [];
  private kept = 0;
  private total = 0;
  constructor(private readonly cap: number) {}
  get truncated(): boolean {
    return this.total > this.kept;
  }
  add(chunk: Buffer): void {
    this.total += chunk.length;
    const room = this.cap - this.kept;
    if (room <= 0) return;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.parts.push(part);
    this.kept += part.length;
  }
  data(): Buffer {
    return Buffer.concat(this.parts);
  }
  text(): string {
    return this.data().toString('utf8');
  }
  stream(): CapturedStream {
    return { data: this.data(), totalBytes: this.total, truncated: this.truncated };
  }
}

/**
 * Decodes bytes as UTF-8 and says whether that lost anything. A multi-byte character cut at the end of a truncated
 * stream is not counted as loss (the cut is reported by `truncated`).
 */
export function decodeUtf8(data: Buffer, truncated = false): { text: string; lossy: boolean } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(data), lossy: false };
  } catch {
    if (truncated) {
      for (let cut = 1; cut <= 3 && cut < data.length; cut++) {
        const lead = data[data.length - cut]!;
        if (lead < 0xc2 || lead > 0xf4) continue; // only a lead byte starts a character the cut may have split
        try {
          new TextDecoder('utf-8', { fatal: true }).decode(data.subarray(0, data.length - cut));
          return { text: data.toString('utf8'), lossy: false };
        } catch {
          // try a shorter prefix
        }
      }
    }
    return { text: data.toString('utf8'), lossy: true };
  }
}

/** The JSON-facing form of a captured stream. */
export function streamOutput(s: CapturedStream): StreamOutput {
  const { text, lossy } = decodeUtf8(s.data, s.truncated);
  return {
    base64: s.data.toString('base64'),
    bytes: s.data.length,
    totalBytes: s.totalBytes,
    truncated: s.truncated,
    text,
    encoding: 'utf-8',
    lossy,
  };
}

/**
 * A captured stream of text the runtime already decoded (the python runtime answers strings, decoded with universal
 * newlines: the command's `\r\n` and `\r` arrive as `\n`, so these bytes are the runtime's answer, not the command's).
 */
export function textStream(text: string): CapturedStream {
  const data = Buffer.from(text, 'utf8');
  return { data, totalBytes: data.length, truncated: false };
}
