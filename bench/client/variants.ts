/**
 * The callers compared by bench:client: the SDK with and without auto-batching (and with request
 * ids), and the peer, raw nats.js `request` with JSON encode and decode, as a service would write
 * it by hand.
 */
import type { AcquireReply, AcquireRequest } from '@app/contracts';
import { RateLimitClient } from '@app/client';
import type { NatsConnection } from 'nats';

/** One acquire as a caller makes it; resolves with the decision. */
export type Acquire = (request: AcquireRequest) => Promise<AcquireReply>;

export interface Variant {
  readonly name: string;
  make(nc: NatsConnection, prefix: string): { acquire: Acquire; close(): Promise<void> };
}

function sdk(name: string, batching: boolean, requestIds: boolean): Variant {
  return {
    name,
    make(nc, prefix) {
      const client = new RateLimitClient({
        connection: nc,
        subjectPrefix: prefix,
        batching,
        requestIds,
        timeoutMs: 10_000,
      });
      return { acquire: (request) => client.acquire(request), close: () => client.close() };
    },
  };
}

export const RAW: Variant = {
  name: 'raw nats.js request',
  make(nc, prefix) {
    const subject = `${prefix}.acquire`;
    return {
      acquire: async (request) => {
        const msg = await nc.request(subject, Buffer.from(JSON.stringify(request)), {
          timeout: 10_000,
        });
        return JSON.parse(Buffer.from(msg.data).toString('utf8')) as AcquireReply;
      },
      close: () => Promise.resolve(),
    };
  },
};

export const SDK_BATCHED = sdk('SDK, auto-batching', true, false);
export const SDK_SINGLE = sdk('SDK, no batching', false, false);
export const SDK_BATCHED_IDS = sdk('SDK, auto-batching + requestIds', true, true);
