/**
 * A bounded in-memory registry of executions, so `queryExecution` can answer after `startExecution` returned. When full,
 * the oldest finished execution is evicted; when every slot holds a running execution, new ones are refused.
 */
import type { ExecutionRef, ExecutionStatus } from '../types.js';
import { streamOutput, type ProcessResult } from './process.js';

export interface ExecutionEntry {
  readonly ref: ExecutionRef;
  readonly startedAt: number;
  /** Final status once finished. */
  final?: ExecutionStatus;
  /** Live output while running (with the bytes captured so far, when the runtime streams). */
  readonly live: () => { stdout: string; stderr: string; output?: ProcessResult['output'] };
}

/** Default number of executions kept. */
export const DEFAULT_REGISTRY_CAPACITY = 256;

export class ExecutionRegistry {
  private readonly entries = new Map<string, ExecutionEntry>();

  constructor(readonly capacity = DEFAULT_REGISTRY_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`registry capacity must be a positive integer, got ${capacity}`);
  }

  get size(): number {
    return this.entries.size;
  }

  get(executionId: string): ExecutionEntry | undefined {
    return this.entries.get(executionId);
  }

  /** Whether {@link add} would succeed now. */
  hasRoom(): boolean {
    return this.entries.size < this.capacity || [...this.entries.values()].some((e) => e.final !== undefined);
  }

  /** Adds an entry; returns false (and adds nothing) when every slot holds a running execution. */
  add(entry: ExecutionEntry): boolean {
    if (this.entries.size >= this.capacity) {
      const evictable = [...this.entries.values()].find((e) => e.final !== undefined);
      if (!evictable) return false;
      this.entries.delete(evictable.ref.executionId);
    }
    this.entries.set(entry.ref.executionId, entry);
    return true;
  }

  /** The status of an entry now: final if finished, else `running` with live output. */
  status(entry: ExecutionEntry): ExecutionStatus {
    if (entry.final) return entry.final;
    const live = entry.live();
    return {
      executionId: entry.ref.executionId,
      state: 'running',
      stdout: live.stdout,
      stderr: live.stderr,
      durationMs: Date.now() - entry.startedAt,
      ...(live.output
        ? { output: { stdout: streamOutput(live.output.stdout), stderr: streamOutput(live.output.stderr) } }
        : {}),
    };
  }
}
