import { RequestAbortedError } from './errors';

/**
 * One caller's promise, settled exactly once: by the reply, the failure policy, or its
 * AbortSignal, whichever comes first.
 */
export class PendingCall<T> {
  readonly promise: Promise<T>;
  settled = false;
  /** The mux token of the request this call went out in alone, for cancelling on abort. */
  token = '';
  private resolveCall!: (value: T) => void;
  private rejectCall!: (error: unknown) => void;
  private signal: AbortSignal | undefined;
  private onAbort: (() => void) | undefined;

  constructor(signal?: AbortSignal, onAbort?: (call: { readonly token: string }) => void) {
    this.promise = new Promise<T>((resolve, reject) => {
      this.resolveCall = resolve;
      this.rejectCall = reject;
    });
    if (signal === undefined) return;
    if (signal.aborted) {
      this.fail(new RequestAbortedError());
      return;
    }
    this.signal = signal;
    this.onAbort = () => {
      this.fail(new RequestAbortedError());
      onAbort?.(this);
    };
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  succeed(value: T): void {
    if (this.settled) return;
    this.settle();
    this.resolveCall(value);
  }

  fail(error: unknown): void {
    if (this.settled) return;
    this.settle();
    this.rejectCall(error);
  }

  /** Settles with what `produce` returns, or fails with what it throws. */
  settleWith(produce: () => T): void {
    if (this.settled) return;
    let value: T;
    try {
      value = produce();
    } catch (error) {
      this.fail(error);
      return;
    }
    this.succeed(value);
  }

  private settle(): void {
    this.settled = true;
    if (this.signal !== undefined && this.onAbort !== undefined) {
      this.signal.removeEventListener('abort', this.onAbort);
    }
  }
}
