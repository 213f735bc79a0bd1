import type { Logger } from '@nestjs/common';
import {
  Circuit,
  CircuitOpenError,
  FAILURES_TO_OPEN,
  PROBE_EVERY_MS,
  StoreTimeoutError,
  isNodeFailure,
  withDeadline,
} from './store-circuit';

/** What ioredis rejects with when Redis answered an error (redis-errors' ReplyError). */
function replyError(message: string): Error {
  const e = new Error(message);
  e.name = 'ReplyError';
  return e;
}

const TIMEOUT_MS = 500;

/** A circuit on fake timers whose PING answers as `pings` says, and its log lines. */
function circuitWith(pings: () => Promise<unknown>) {
  const lines: string[] = [];
  const log = {
    warn: (m: string) => lines.push(`warn ${m}`),
    log: (m: string) => lines.push(`log ${m}`),
  } as unknown as Logger;
  let probes = 0;
  const circuit = new Circuit(
    'redis-a:6379',
    () => {
      probes++;
      return pings();
    },
    { timeoutMs: TIMEOUT_MS },
    log,
  );
  return { circuit, lines, probes: () => probes };
}

/**
 * Runs the timers due within `ms`, then the setImmediate a deadline defers its verdict to (real:
 * it waits for the I/O of the turn) and the promises after it.
 */
async function advance(ms: number): Promise<void> {
  await jest.advanceTimersByTimeAsync(ms);
  await new Promise((resolve) => setImmediate(resolve));
  await jest.advanceTimersByTimeAsync(0);
}

describe('store circuit', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  it('counts timeouts and lost connections, not error replies (the node answered those)', () => {
    expect(isNodeFailure(new StoreTimeoutError('a:1', 500))).toBe(true);
    expect(isNodeFailure(new Error('Connection is closed.'))).toBe(true);
    expect(isNodeFailure(new Error('Command timed out'))).toBe(true);
    expect(isNodeFailure(replyError('NOSCRIPT No matching script'))).toBe(false);
    // The pool wraps MOVED replies of a misconfigured URL in an error of its own.
    const moved = new Error('points at a cluster node', { cause: replyError('MOVED 1 a:1') });
    expect(isNodeFailure(moved)).toBe(false);
  });

  it(`opens after ${FAILURES_TO_OPEN} failures in a row; an answer between them starts the count again`, () => {
    const { circuit, lines } = circuitWith(() => new Promise(() => undefined));
    const lost = new Error('Connection is closed.');
    for (let i = 1; i < FAILURES_TO_OPEN; i++) circuit.record(lost);
    circuit.record(undefined);
    circuit.record(replyError('BUSY'));
    for (let i = 1; i < FAILURES_TO_OPEN; i++) circuit.record(lost);
    expect(circuit.isOpen).toBe(false);
    circuit.record(lost);
    expect(circuit.isOpen).toBe(true);
    expect(circuit.refusal).toBeInstanceOf(CircuitOpenError);
    // More failures while open log nothing more.
    circuit.record(lost);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^warn Redis redis-a:6379: circuit open after 3 failed requests in a row \(last: Connection is closed\.\)/,
    );
    circuit.stop();
  });

  it('counts every request of a failed call: one batch of requests that all waited the timeout is enough', () => {
    const { circuit } = circuitWith(() => new Promise(() => undefined));
    circuit.record(new StoreTimeoutError('a', 1), FAILURES_TO_OPEN - 1);
    expect(circuit.isOpen).toBe(false);
    circuit.record(undefined, 64);
    circuit.record(new StoreTimeoutError('a', 1), FAILURES_TO_OPEN);
    expect(circuit.isOpen).toBe(true);
    circuit.stop();
  });

  it('while open, probes every PROBE_EVERY_MS (each PING bounded by the timeout) and closes on the first answer', async () => {
    let answer = false;
    const { circuit, lines, probes } = circuitWith(() =>
      answer ? Promise.resolve('PONG') : new Promise(() => undefined),
    );
    for (let i = 0; i < FAILURES_TO_OPEN; i++) circuit.record(new StoreTimeoutError('a', 1));
    expect(probes()).toBe(0);
    await advance(PROBE_EVERY_MS);
    expect(probes()).toBe(1);
    // A hung PING: the next probe starts PROBE_EVERY_MS after this one's deadline, not before.
    await advance(TIMEOUT_MS);
    expect(probes()).toBe(1);
    await advance(PROBE_EVERY_MS);
    expect(probes()).toBe(2);
    expect(circuit.isOpen).toBe(true);
    answer = true;
    await advance(TIMEOUT_MS + PROBE_EVERY_MS);
    expect(probes()).toBe(3);
    expect(circuit.isOpen).toBe(false);
    expect(lines.filter((l) => l.startsWith('log '))).toEqual([
      expect.stringMatching(
        /^log Redis redis-a:6379 answers again: circuit closed after \d+\.\d s open$/,
      ),
    ]);
    // Closed: no more probes, and it takes FAILURES_TO_OPEN new failures to open again.
    await advance(10 * PROBE_EVERY_MS);
    expect(probes()).toBe(3);
    circuit.record(new Error('Connection is closed.'));
    expect(circuit.isOpen).toBe(false);
  });

  it('a probe that throws or rejects keeps it open; stop ends the probing', async () => {
    const { circuit, probes } = circuitWith(() => {
      throw new Error('not connected');
    });
    for (let i = 0; i < FAILURES_TO_OPEN; i++) circuit.record(new Error('lost'));
    await advance(3 * PROBE_EVERY_MS);
    expect(probes()).toBe(3);
    expect(circuit.isOpen).toBe(true);
    circuit.stop();
    await advance(10 * PROBE_EVERY_MS);
    expect(probes()).toBe(3);
  });

  it('withDeadline: the answer if it comes in time, else the error once the time is up', async () => {
    const late = (): Error => new StoreTimeoutError('a:1', 100);
    await expect(withDeadline(Promise.resolve(7), 100, late)).resolves.toBe(7);
    const hung = withDeadline(new Promise(() => undefined), 100, late);
    const outcome = hung.then(
      () => 'answered',
      (e: Error) => e.message,
    );
    await advance(100);
    await expect(outcome).resolves.toBe(
      'Redis a:1 did not answer within 100 ms (REDIS_TIMEOUT_MS)',
    );
  });
});
