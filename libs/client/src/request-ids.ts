import { randomBytes } from 'node:crypto';

/**
 * Request ids unique across processes and cheap to make: a random prefix per client and a
 * counter (no random bytes per call). 22 + up to 11 characters, well within the contract's 128.
 */
export class RequestIdGenerator {
  private readonly prefix = `${randomBytes(16).toString('base64url')}-`;
  private counter = 0;

  next(): string {
    this.counter = (this.counter + 1) % Number.MAX_SAFE_INTEGER;
    return this.prefix + this.counter.toString(36);
  }
}
