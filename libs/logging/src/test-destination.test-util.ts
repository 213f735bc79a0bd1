import { Writable } from 'node:stream';
import type { LogDestination } from './create-logger';

/** A log destination in memory, written synchronously: every line written, as text. */
export function memoryDestination(isTerminal = false): LogDestination & { lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      lines.push(
        ...String(chunk)
          .split('\n')
          .filter((line) => line !== ''),
      );
      done();
    },
  });
  return { lines, isTerminal, stream };
}

/** The JSON lines written, parsed. */
export function jsonLines(destination: { lines: string[] }): Record<string, unknown>[] {
  return destination.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}
