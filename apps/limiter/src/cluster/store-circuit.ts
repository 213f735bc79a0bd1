import { Logger } from '@nestjs/common';

/** How long a store call may take, end to end, before the request is answered by the policy. */
export const STORE_TIMEOUT_MS = 500;
/** REDIS_TIMEOUT_MS allows at most this: a request waiting longer is better refused. */
export const MAX_STORE_TIMEOUT_MS = 60_000;

/**
 * Requests in a row whose calls failed (timeouts, lost connections) that open a node's circuit.
 * A request alone timing out can be a blip (a fork for a save, a long script); three in a row with
 * no answer between them mean the node is gone. Requests, not calls: one call carries the
 * requests of one event-loop turn, and each of them waited the whole timeout, so the circuit opens
 * after one REDIS_TIMEOUT_MS under any load, and a caller alone pays it at most three times.
 */
export const FAILURES_TO_OPEN = 3;

/**
 * While a circuit is open, a PING (with its own REDIS_TIMEOUT_MS) goes to the node this long after
 * the previous probe ended: at most 4 small commands a second per node, and exact decisions are
 * back within about this long of the node answering again.
 */
export const PROBE_EVERY_MS = 250;

/** A store call that found no answer within REDIS_TIMEOUT_MS, counted from when it was asked. */
export class StoreTimeoutError extends Error {
  override readonly name = 'StoreTimeoutError';
  constructor(node: string, timeoutMs: number) {
    super(`Redis ${node} did not answer within ${timeoutMs} ms (REDIS_TIMEOUT_MS)`);
  }
}

/** A store call not made: the node's circuit is open, the request is answered by its policy. */
export class CircuitOpenError extends Error {
  override readonly name = 'CircuitOpenError';
  constructor(node: string) {
    super(`Redis ${node} is not answering (circuit open); answered by onStoreFailure`);
  }
}

/**
 * Whether a failed call says the node is unreachable or hung (a timeout, a closed connection),
 * not that it answered with an error: an error reply (NOSCRIPT, MOVED, BUSY...) comes from a node
 * that is there, and is answered without waiting.
 */
export function isNodeFailure(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = e.cause) {
    if (e.name === 'ReplyError') return false;
  }
  return true;
}

/**
 * Runs `late` once `ms` have passed and the I/O of that event-loop turn has been read. A timer
 * due after a busy turn fires before that turn's I/O is read: without the extra step, a reply
 * sitting in the socket would count as a timeout (and towards opening the circuit).
 */
export function afterDeadline(ms: number, late: () => void): NodeJS.Timeout {
  return setTimeout(() => setImmediate(late), ms);
}

/** `call`, or a rejection with `error` once `ms` have passed, whichever comes first. */
export function withDeadline<T>(call: Promise<T>, ms: number, error: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = afterDeadline(ms, () => reject(error()));
  });
  return Promise.race([call, deadline]).finally(() => clearTimeout(timer));
}

export interface CircuitOptions {
  /** Each probe's own deadline: REDIS_TIMEOUT_MS. */
  readonly timeoutMs: number;
  readonly failuresToOpen?: number;
  readonly probeEveryMs?: number;
}

/**
 * One Redis node's circuit. Closed: calls go to the node, and `FAILURES_TO_OPEN` requests in a row
 * failed by the node (no answer between them) open it. Open: the store makes no call (each request is
 * answered by its quota's onStoreFailure at once) and `ping` probes the node every
 * `PROBE_EVERY_MS`; the first answer closes it. Open and close are logged once each.
 */
export class Circuit {
  private failures = 0;
  private openedAt: number | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** What a call refused by the open circuit rejects with (one object: nothing to allocate). */
  readonly refusal: CircuitOpenError;
  private readonly failuresToOpen: number;
  private readonly probeEveryMs: number;

  constructor(
    readonly node: string,
    private readonly ping: () => Promise<unknown>,
    private readonly options: CircuitOptions,
    private readonly log = new Logger('Redis'),
  ) {
    this.refusal = new CircuitOpenError(node);
    this.failuresToOpen = options.failuresToOpen ?? FAILURES_TO_OPEN;
    this.probeEveryMs = options.probeEveryMs ?? PROBE_EVERY_MS;
  }

  get isOpen(): boolean {
    return this.openedAt !== undefined;
  }

  /** The outcome of one call made while closed (undefined: the node answered) for `requests`. */
  record(error: unknown, requests = 1): void {
    if (this.openedAt !== undefined || this.stopped) return;
    if (error === undefined || !isNodeFailure(error)) {
      this.failures = 0;
      return;
    }
    this.failures += requests;
    if (this.failures < this.failuresToOpen) return;
    this.openedAt = Date.now();
    const why = error instanceof Error ? error.message : JSON.stringify(error);
    this.log.warn(
      `Redis ${this.node}: circuit open after ${this.failures} failed requests in a row (last: ${why}); ` +
        `its requests are answered by onStoreFailure without asking it, and a PING probes it every ${this.probeEveryMs} ms`,
    );
    this.scheduleProbe();
  }

  /** Shutdown: no more probes; an open circuit stays open. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
  }

  private scheduleProbe(): void {
    if (this.stopped) return;
    this.probeTimer = setTimeout(this.probe, this.probeEveryMs);
    this.probeTimer.unref();
  }

  private readonly probe = (): void => {
    this.probeTimer = undefined;
    const timeoutMs = this.options.timeoutMs;
    const late = (): Error => new StoreTimeoutError(this.node, timeoutMs);
    // A ping that throws (no such node any more) is a failed probe like one that rejects.
    const answer = Promise.resolve().then(() => this.ping());
    withDeadline(answer, timeoutMs, late).then(
      () => this.close(),
      () => this.scheduleProbe(),
    );
  };

  private close(): void {
    if (this.stopped || this.openedAt === undefined) return;
    const seconds = ((Date.now() - this.openedAt) / 1000).toFixed(1);
    this.openedAt = undefined;
    this.failures = 0;
    this.log.log(`Redis ${this.node} answers again: circuit closed after ${seconds} s open`);
  }
}
