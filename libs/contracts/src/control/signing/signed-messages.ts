import type { SigningKey, VerifyKey } from './control-keys';
import { signatureLine, trustedKeys, verifyLine, type Refusal } from './control-signature';

/**
 * Requests (keyStats, resetKey) and stats reports are NATS messages: their signature line goes
 * in a header and its `seq` is the sender's clock (epoch ms). A receiver takes a message signed
 * within MESSAGE_WINDOW_MS of its own clock, once: it remembers the nonces it took until they
 * could no longer be fresh, so a captured reset cannot be sent again, now or later.
 */

/** How far a sender's clock may be from the receiver's; also how long a nonce is remembered. */
export const MESSAGE_WINDOW_MS = 30_000;
/** Nonces remembered at most; past that, signed messages are refused until old ones expire. */
export const REMEMBERED_NONCES = 65_536;

export type MessageCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly refusal: Refusal; readonly reason: string };

/** The nonces taken in the window, in the order taken. */
export class FreshNonces {
  private readonly expiry = new Map<string, number>();
  private readonly order: string[] = [];
  private head = 0;
  private latest = -Infinity;

  constructor(
    private readonly windowMs = MESSAGE_WINDOW_MS,
    private readonly capacity = REMEMBERED_NONCES,
  ) {}

  /** Takes `nonce` signed at `at` and received at `now`, or says why not. */
  take(nonce: string, at: number, now: number): MessageCheck {
    // A clock set back neither shortens what is remembered nor makes a forgotten nonce fresh.
    this.latest = Math.max(this.latest, now);
    // One signed a whole window before the latest instant would be forgotten as it is taken
    // (remembered until at + window): stale, or it could be taken again in the same ms.
    if (at > now + this.windowMs || at <= this.latest - this.windowMs) {
      const away = Math.round((at - now) / 1000);
      return {
        ok: false,
        refusal: 'stale',
        reason: `signed ${away} s from this clock, outside ±${this.windowMs / 1000} s`,
      };
    }
    this.forgetExpired(this.latest);
    if (this.expiry.has(nonce)) {
      return { ok: false, refusal: 'replayed', reason: `nonce ${nonce} was taken already` };
    }
    if (this.expiry.size >= this.capacity) {
      return {
        ok: false,
        refusal: 'replayed',
        reason: `more than ${this.capacity} signed messages in ${this.windowMs / 1000} s`,
      };
    }
    // Fresh until at + window, on this clock: remembered that long (kept in arrival order, so
    // one from a sender whose clock is ahead may hold the ones behind it a little longer).
    this.expiry.set(nonce, at + this.windowMs);
    this.order.push(nonce);
    return { ok: true };
  }

  get size(): number {
    return this.expiry.size;
  }

  private forgetExpired(now: number): void {
    while (this.head < this.order.length) {
      const nonce = this.order[this.head]!;
      if (this.expiry.get(nonce)! > now) break;
      this.expiry.delete(nonce);
      this.head++;
    }
    // Compact once half of the array is behind the head.
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order.splice(0, this.head);
      this.head = 0;
    }
  }
}

/** Checks signed messages from the trusted keys: signature, then freshness. */
export class MessageVerifier {
  private readonly trusted: (signer: string) => VerifyKey | undefined;
  private readonly nonces: FreshNonces;

  constructor(keys: readonly VerifyKey[], windowMs = MESSAGE_WINDOW_MS, capacity?: number) {
    this.trusted = trustedKeys(keys);
    this.nonces = new FreshNonces(windowMs, capacity);
  }

  /**
   * `line`: the message's signature header; `headers`: the values of the headers the sender
   * signed with the body, in order.
   */
  check(
    line: string | undefined,
    subject: string,
    headers: readonly string[],
    body: Uint8Array,
    now: number,
  ): MessageCheck {
    const checked = verifyLine(line, { kind: 'msg', subject, headers }, body, this.trusted);
    if (!checked.ok) return checked;
    return this.nonces.take(checked.line.nonce, checked.line.seq, now);
  }
}

/** The signature header of a message sent at `now` on `subject` with `headers` and `body`. */
export function signMessage(
  key: SigningKey,
  subject: string,
  headers: readonly string[],
  body: Uint8Array | string,
  now: number,
): string {
  return signatureLine(key, { kind: 'msg', subject, headers }, Math.floor(now), body);
}
