/** The same calls over the limiter's JSON HTTP API, for services without NATS. */
import {
  RateLimitHttpClient,
  type ClientAcquireReply,
  type KeyStats,
  type UsageReply,
} from '@ratelimit/client';

export interface SdkHttpExampleResult {
  readonly decision: ClientAcquireReply;
  readonly usage: UsageReply | undefined;
  readonly stats: KeyStats;
}

export async function callOverHttp(baseUrl: string, key: string): Promise<SdkHttpExampleResult> {
  const client = new RateLimitHttpClient({ baseUrl, failurePolicy: 'closed' });
  try {
    const decision = await client.acquire({ key, cost: { requests: 1, tokens: 500 } });
    let usage: UsageReply | undefined;
    if (decision.allowed) {
      usage = await client.usage({ key, requestId: decision.requestId, cost: { tokens: 320 } });
    }
    const stats = await client.stats({ key });
    return { decision, usage, stats };
  } finally {
    await client.close();
  }
}
