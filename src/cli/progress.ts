/**
 * Progress on stderr: plain lines when it is not a terminal (logs, CI); on a terminal, "waiting" lines of long waits
 * overwrite one status line in place and every other line is printed above it.
 */
import type { WriteStream } from 'node:tty';

/** A line sink for `runVerify({ progress })`. */
export function progressSink(
  stream: Pick<WriteStream, 'write' | 'isTTY' | 'columns'>,
): (line: string, kind?: 'waiting') => void {
  if (!stream.isTTY) return (line) => void stream.write(`${line}\n`);
  let status = false;
  return (line, kind) => {
    const waiting = kind === 'waiting';
    const width = Math.max(20, (stream.columns ?? 80) - 1);
    if (waiting) {
      stream.write(`\r\x1b[K${line.length > width ? `${line.slice(0, width - 1)}…` : line}`);
      status = true;
      return;
    }
    stream.write(`${status ? '\r\x1b[K' : ''}${line}\n`);
    status = false;
  };
}
