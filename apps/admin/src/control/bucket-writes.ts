import {
  ControlSequence,
  signatureLine,
  signValue,
  rememberingOpener,
  UNVERIFIED_OPENER,
  verifyingOpener,
  type RememberingOpener,
  type SigningKey,
} from '@app/contracts';
import { headers, type JetStreamClient, type KV } from 'nats';

/** The admin's writes to the control bucket: a value under a key, or the key deleted. */
export interface BucketWrites {
  put(key: string, payload: string): Promise<void>;
  delete(key: string): Promise<void>;
}

/**
 * How the admin reads the bucket: as the limiters with its public key read it (without a seed:
 * everything). Each value's signature is checked once for the life of the opener: the reads of
 * every reconcile and the guard's watch share one.
 */
export function controlOpener(bucket: string, seed: SigningKey | undefined): RememberingOpener {
  if (seed === undefined) return { ...UNVERIFIED_OPENER, remember: () => undefined };
  return rememberingOpener(verifyingOpener(bucket, seed));
}

/** nats.js's own header and value for a KV delete marker. */
const KV_OPERATION = 'KV-Operation';

/**
 * The control bucket as the admin writes and reads it. With CONTROL_SEED every write is signed
 * (docs/architecture.md, "Signed control"): a put's value is its signature line and the payload;
 * a delete is a KV delete marker whose body is its signature line, published on the key's
 * subject as nats.js's own delete is, so limiters can tell the admin's delete from anyone's. Each
 * write takes the next number of `sequence`. Without a seed, writes are plain KV puts and deletes.
 */
export class ControlBucket implements BucketWrites {
  constructor(
    readonly kv: KV,
    private readonly js: JetStreamClient,
    readonly name: string,
    private readonly seed: SigningKey | undefined,
    readonly sequence: ControlSequence,
    /** How the admin reads the bucket (controlOpener); it knows the admin's own writes. */
    readonly opener: RememberingOpener = controlOpener(name, seed),
    private readonly now: () => number = Date.now,
  ) {}

  /** True when writes are signed (and foreign ones can be told apart). */
  get signed(): boolean {
    return this.seed !== undefined;
  }

  async put(key: string, payload: string): Promise<void> {
    if (this.seed === undefined) {
      await this.kv.put(key, payload);
      return;
    }
    const seq = this.sequence.next(this.now());
    const value = signValue(this.seed, { kind: 'put', bucket: this.name, key }, seq, payload);
    // Its own write comes back through the guard's watch and the next read: no check needed.
    this.opener.remember('put', key, value);
    await this.kv.put(key, value);
  }

  async delete(key: string): Promise<void> {
    if (this.seed === undefined) {
      await this.kv.delete(key);
      return;
    }
    const seq = this.sequence.next(this.now());
    const line = signatureLine(this.seed, { kind: 'del', bucket: this.name, key }, seq, '');
    this.opener.remember('del', key, `${line}\n`);
    const h = headers();
    h.set(KV_OPERATION, 'DEL');
    await this.js.publish(`$KV.${this.name}.${key}`, new TextEncoder().encode(`${line}\n`), {
      headers: h,
    });
  }
}
