import { BucketView } from '@app/contracts';
import type { KvEntry, QueuedIterator } from 'nats';
import type { Foreign } from './bucket-change';
import type { ControlBucket } from './bucket-writes';
import { Turns } from './turns';

/**
 * Watches the control bucket for writes the admin did not make (docs/architecture.md, "Signed
 * control"): with CONTROL_SEED, it reads the bucket as a limiter does (a BucketView with the
 * admin's public key, remembering each key's sequence), so anything a limiter refuses (unsigned,
 * signed by another key, an older entry put back, a delete nobody signed) is reported to
 * `found`, and the publisher puts its own state back. It also keeps the admin's sequence above
 * every sequence in the bucket.
 */
export class BucketGuard {
  private following: ControlBucket | undefined;
  private watch: QueuedIterator<KvEntry> | undefined;

  constructor(
    private readonly found: (foreign: Foreign) => void,
    /** The watch ended without being asked to (the bucket deleted, NATS gone). */
    private readonly lost: (why: string) => void,
  ) {}

  /** Follows `bucket` (a signed one) from now on; the same bucket again changes nothing. */
  follow(bucket: ControlBucket): void {
    if (this.following === bucket || !bucket.signed) return;
    this.stop();
    this.following = bucket;
    void this.run(bucket);
  }

  stop(): void {
    this.following = undefined;
    this.watch?.stop();
    this.watch = undefined;
  }

  private async run(bucket: ControlBucket): Promise<void> {
    const view = new BucketView<string>((_key, raw) => ({ ok: true, value: raw }), {
      opener: bucket.opener,
      onRefused: (refusal, reason, key) => this.found({ key, refusal, reason }),
    });
    let why = 'the watch ended';
    try {
      const watch = await bucket.kv.watch({ key: '>' });
      if (this.following !== bucket) {
        watch.stop();
        return;
      }
      this.watch = watch;
      const turns = new Turns();
      for await (const entry of watch) {
        const raw = entry.string();
        if (entry.operation === 'PUT') view.put(entry.key, raw);
        else view.remove(entry.key, raw);
        bucket.sequence.raise(view.highestSeq);
        await turns.pace();
      }
    } catch (error) {
      why = error instanceof Error ? error.message : String(error);
    }
    if (this.following === bucket) {
      this.following = undefined;
      this.watch = undefined;
      this.lost(why);
    }
  }
}
