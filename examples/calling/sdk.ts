/**
 * Calling the limiter from a backend service with the SDK over NATS: acquire before the work,
 * report the real cost after it, and look at the key's counts.
 */
import { connect } from 'nats';
import {
  RateLimitClient,
  type ClientAcquireReply,
  type KeyStats,
  type UsageReply,
} from '@ratelimit/client';

export interface SdkExampleResult {
  readonly decision: ClientAcquireReply;
  readonly usage: UsageReply | undefined;
  readonly stats: KeyStats;
}

export async function callOverNats(
  natsUrl: string,
  subjectPrefix: string,
  key: string,
): Promise<SdkExampleResult> {
  const connection = await connect({ servers: natsUrl });
  // One client per process; it shares the connection, and batches the acquires of each turn.
  const client = new RateLimitClient({ connection, subjectPrefix, failurePolicy: 'closed' });
  try {
    const decision = await client.acquire({ key, cost: { requests: 1, tokens: 500 } });
    let usage: UsageReply | undefined;
    if (decision.allowed) {
      // ... the work, which turned out to use 320 tokens: settle the estimate.
      usage = await client.usage({ key, requestId: decision.requestId, cost: { tokens: 320 } });
    }
    const stats = await client.stats({ key });
    return { decision, usage, stats };
  } finally {
    await client.close();
    await connection.close();
  }
}
