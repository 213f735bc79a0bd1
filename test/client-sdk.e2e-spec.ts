/**
 * The client SDK (libs/client) against two real limiter replicas on NATS and Redis: one table of
 * cases run by both the NATS client and the HTTP client, then what only NATS has (auto-batching
 * on the wire, a closed connection), and the two examples of examples/calling.
 */
import { randomUUID } from 'node:crypto';
import { connect } from 'nats';
import {
  ClientClosedError,
  InvalidRequestError,
  LimiterUnavailableError,
  RateLimitClient,
  RateLimitHttpClient,
  RequestAbortedError,
  RequestRefusedError,
  type FailurePolicy,
  type KeyStats,
  type RateLimitClientOptions,
} from '@app/client';
import { callOverNats } from '../examples/calling/sdk';
import { callOverHttp } from '../examples/calling/sdk-http';
import { startClientFixture, NATS_URL, type ClientFixture } from './support/client-fixtures';

jest.setTimeout(120_000);

type Client = RateLimitClient | RateLimitHttpClient;

interface ClientSettings {
  readonly failurePolicy?: FailurePolicy;
  readonly requestIds?: boolean;
  readonly timeoutMs?: number;
  /** NATS only; the HTTP client has no auto-batching. */
  readonly batching?: RateLimitClientOptions['batching'];
}

/** One transport of the shared table: clients to the limiters, to nobody, to a silent peer. */
interface Flavour {
  readonly name: string;
  /** How an unreachable limiter is reported on this transport. */
  readonly unreachable: 'no-responders' | 'http';
  served(settings?: ClientSettings): Client;
  unserved(settings?: ClientSettings): Client;
  silent(settings?: ClientSettings): Client;
}

let fx: ClientFixture;
const opened: Client[] = [];
const key = (): string => `k-${randomUUID()}`;

function keep<T extends Client>(client: T): T {
  opened.push(client);
  return client;
}

const natsFlavour: Flavour = {
  name: 'NATS',
  unreachable: 'no-responders',
  served: (s) => keep(new RateLimitClient({ connection: fx.nc, subjectPrefix: fx.prefix, ...s })),
  unserved: (s) =>
    keep(new RateLimitClient({ connection: fx.nc, subjectPrefix: fx.unservedPrefix, ...s })),
  silent: (s) =>
    keep(new RateLimitClient({ connection: fx.nc, subjectPrefix: fx.silentPrefix, ...s })),
};

let httpReplica = 0;
const httpFlavour: Flavour = {
  name: 'HTTP',
  unreachable: 'http',
  // Alternate replicas: cluster-scope counts are the same on both.
  served: (s) =>
    keep(new RateLimitHttpClient({ baseUrl: fx.limiters[httpReplica++ % 2]!.url, ...s })),
  unserved: (s) => keep(new RateLimitHttpClient({ baseUrl: fx.closedUrl, ...s })),
  silent: (s) => keep(new RateLimitHttpClient({ baseUrl: fx.silentUrl, ...s })),
};

beforeAll(async () => {
  fx = await startClientFixture();
});

afterAll(async () => {
  await Promise.allSettled(opened.map((client) => client.close()));
  if (fx !== undefined) expect(await fx.stop()).toEqual([0, 0]);
});

describe.each([natsFlavour, httpFlavour])('client over $name', (flavour) => {
  it('acquire admits up to the limit and answers each caller its own reply', async () => {
    const client = flavour.served();
    const k = key();
    const replies = await Promise.all(
      Array.from({ length: 8 }, () => client.acquire({ key: k, quota: fx.quota })),
    );
    expect(replies.filter((r) => r.code === 'OK')).toHaveLength(5);
    expect(replies.filter((r) => r.code === 'RATE_LIMITED')).toHaveLength(3);
    expect(new Set(replies.filter((r) => r.allowed).map((r) => r.remaining))).toEqual(
      new Set([0, 1, 2, 3, 4]),
    );
    expect(new Set(replies.map((r) => r.requestId)).size).toBe(8);
    expect(replies.every((r) => r.key === k && r.policy === undefined)).toBe(true);
  });

  it('decide answers as acquire would and charges nothing; stats shows it', async () => {
    const client = flavour.served();
    const k = key();
    const first = await client.decide({ key: k, quota: fx.quota });
    const second = await client.decide({ key: k, quota: fx.quota });
    expect([first.allowed, first.remaining, second.remaining]).toEqual([true, 4, 4]);
    const stats = await client.stats({ key: k, quota: fx.quota });
    expect(stats).toMatchObject({ key: k, quota: fx.quota, scope: 'cluster' });
    expect(stats.limits[0]).toMatchObject({ used: 0, limit: 5 });
  });

  it('release frees the acquired request; an unknown id releases nothing', async () => {
    const client = flavour.served();
    const k = key();
    const admitted = await client.acquire({ key: k, quota: fx.quota });
    expect(admitted.allowed).toBe(true);
    const released = await client.release({
      key: k,
      quota: fx.quota,
      requestId: admitted.requestId,
    });
    expect(released).toEqual({ released: true });
    expect(await client.release({ key: k, quota: fx.quota, requestId: 'never-sent' })).toEqual({
      released: false,
    });
  });

  it('usage records cost and answers the stats after it', async () => {
    const client = flavour.served();
    const k = key();
    const reply = await client.usage({ key: k, quota: fx.quota, cost: 2 });
    expect(reply.ok).toBe(true);
    expect(reply.usage.limits[0]).toMatchObject({ used: 2, remaining: 3 });
  });

  it('an unknown quota is a RequestRefusedError naming the quota (stats), a reply (acquire)', async () => {
    const client = flavour.served();
    const refused = client.stats({ key: key(), quota: `nope-${randomUUID()}` });
    await expect(refused).rejects.toBeInstanceOf(RequestRefusedError);
    await expect(refused).rejects.toMatchObject({ code: 'UNKNOWN_QUOTA', field: 'quota' });
    const reply = await client.acquire({ key: key(), quota: `nope-${randomUUID()}` });
    expect(reply).toMatchObject({ allowed: false, code: 'UNKNOWN_QUOTA' });
  });

  it('batch answers in order, each entry on its own', async () => {
    const client = flavour.served();
    const k = key();
    const entries = [
      { key: k, quota: fx.quota },
      { key: k, quota: fx.quota, cost: 2 },
    ];
    const first = await client.batch(entries);
    expect(first.map((r) => [r.code, r.remaining])).toEqual([
      ['OK', 4],
      ['OK', 2],
    ]);
    const second = await client.batch([...entries, { key: k, quota: fx.quota }]);
    expect(second.map((r) => r.code)).toEqual(['OK', 'RATE_LIMITED', 'OK']);
    expect(await client.batch([])).toEqual([]);
  });

  it('a waiting acquire is answered when capacity frees', async () => {
    const client = flavour.served({ timeoutMs: 1000 });
    const k = key();
    expect((await client.acquire({ key: k, quota: fx.waitQuota })).allowed).toBe(true);
    // The bucket refills one a second; the wait (up to 5 s) outlasts the 1 s call timeout.
    const waited = await client.acquire({
      key: k,
      quota: fx.waitQuota,
      wait: true,
      maxWaitMs: 4000,
    });
    expect(waited).toMatchObject({ allowed: true, code: 'OK' });
    expect(waited.waitedMs).toBeGreaterThan(0);
  });

  it('with requestIds, a retry of the same request is charged once, on either replica', async () => {
    const client = flavour.served({ requestIds: true });
    const k = key();
    const first = await client.acquire({ key: k, quota: fx.quota });
    expect(first.requestId).not.toBe('');
    const retries = await Promise.all(
      Array.from({ length: 4 }, () =>
        client.acquire({ key: k, quota: fx.quota, requestId: first.requestId }),
      ),
    );
    expect(retries.map((r) => [r.requestId, r.remaining])).toEqual(
      Array.from({ length: 4 }, () => [first.requestId, 4]),
    );
    expect((await client.stats({ key: k, quota: fx.quota })).limits[0]!.used).toBe(1);
    const other = await client.acquire({ key: k, quota: fx.quota });
    expect(other.requestId).not.toBe(first.requestId);
    expect(other.remaining).toBe(3);
  });

  it('refuses bad input with InvalidRequestError naming the field, charging nothing', async () => {
    const client = flavour.served();
    const k = key();
    const cases: Array<[Promise<unknown>, string]> = [
      [client.acquire({ key: '' }), 'key'],
      [client.acquire({ key: k, quota: fx.quota, cost: { tokens: -1 } }), 'cost.tokens'],
      [client.decide({ key: k, maxWaitMs: 1.5 }), 'maxWaitMs'],
      [client.usage({ key: k } as never), 'cost'],
      [client.release({ key: k, requestId: '' }), 'requestId'],
      [client.stats({ key: k, quota: 'bad quota' }), 'quota'],
      [client.batch([{ key: k }, { key: k, wait: true }]), 'requests[1].wait'],
    ];
    for (const [call, field] of cases) {
      await expect(call).rejects.toBeInstanceOf(InvalidRequestError);
      await expect(call).rejects.toMatchObject({ code: 'INVALID_REQUEST', field });
    }
    expect((await client.stats({ key: k, quota: fx.quota })).limits[0]!.used).toBe(0);
  });

  it('close() sends what is queued, answers it, then refuses new calls', async () => {
    const client = flavour.served();
    const k = key();
    const queued = client.acquire({ key: k, quota: fx.quota });
    await client.close();
    expect(await queued).toMatchObject({ allowed: true, code: 'OK' });
    expect((await queued).policy).toBeUndefined();
    await expect(client.acquire({ key: k })).rejects.toBeInstanceOf(ClientClosedError);
    await expect(client.stats({ key: k })).rejects.toBeInstanceOf(ClientClosedError);
  });

  describe('failure policy when no limiter is there', () => {
    it("'closed' refuses, marked policy", async () => {
      const client = flavour.unserved();
      const reply = await client.acquire({ key: 'x', quota: 'q' });
      expect(reply).toMatchObject({ allowed: false, code: 'UNAVAILABLE', policy: true, key: 'x' });
      const batch = await client.batch([{ key: 'a' }, { key: 'b' }]);
      expect(batch.map((r) => [r.key, r.code, r.policy])).toEqual([
        ['a', 'UNAVAILABLE', true],
        ['b', 'UNAVAILABLE', true],
      ]);
    });

    it("'open' admits, marked policy", async () => {
      const client = flavour.unserved({ failurePolicy: 'open' });
      expect(await client.acquire({ key: 'x' })).toMatchObject({
        allowed: true,
        code: 'OK',
        policy: true,
      });
      expect(await client.decide({ key: 'x' })).toMatchObject({ allowed: true, policy: true });
    });

    it("'throw' throws LimiterUnavailableError, with the request's id to retry with", async () => {
      const client = flavour.unserved({ failurePolicy: 'throw', requestIds: true });
      const call = client.acquire({ key: 'x' });
      await expect(call).rejects.toBeInstanceOf(LimiterUnavailableError);
      await expect(call).rejects.toMatchObject({
        reason: flavour.unreachable,
        requestId: expect.stringMatching(/.+/),
      });
    });

    it('release, usage and stats have no decision to make up: they throw whatever the policy', async () => {
      const client = flavour.unserved({ failurePolicy: 'open' });
      await expect(client.stats({ key: 'x' })).rejects.toBeInstanceOf(LimiterUnavailableError);
      await expect(client.release({ key: 'x', requestId: 'r' })).rejects.toMatchObject({
        reason: flavour.unreachable,
      });
    });
  });

  it('an aborted call rejects with RequestAbortedError at once', async () => {
    const client = flavour.silent({ timeoutMs: 10_000 });
    const controller = new AbortController();
    const call = client.acquire({ key: 'x', wait: true }, { signal: controller.signal });
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(RequestAbortedError);
    await expect(
      client.stats({ key: 'x' }, { signal: AbortSignal.abort() }),
    ).rejects.toBeInstanceOf(RequestAbortedError);
  });

  it("a call's timeoutMs that is not > 0 is refused before sending: nothing charged", async () => {
    const client = flavour.served();
    const k = key();
    for (const timeoutMs of [0, -1, Number.NaN]) {
      await expect(client.acquire({ key: k, quota: fx.quota }, { timeoutMs })).rejects.toThrow(
        /^timeoutMs: must be a number > 0$/,
      );
      await expect(client.batch([{ key: k, quota: fx.quota }], { timeoutMs })).rejects.toThrow(
        RangeError,
      );
    }
    const stats = await client.stats({ key: k, quota: fx.quota });
    expect(stats.limits[0]).toMatchObject({ used: 0 });
  });

  it('a wait beyond what a timer can hold (a far deadline) does not time out at once', async () => {
    const client = flavour.silent();
    const controller = new AbortController();
    const monthAhead = Date.now() + 30 * 24 * 3600 * 1000;
    const call = client.acquire(
      { key: 'x', wait: true, deadline: monthAhead },
      { signal: controller.signal },
    );
    const huge = client.stats({ key: 'x' }, { timeoutMs: 2 ** 31, signal: controller.signal });
    // A timer that overflowed fires after 1 ms, well before this one.
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(RequestAbortedError);
    await expect(huge).rejects.toBeInstanceOf(RequestAbortedError);
  });

  it("a waiting acquire's timeout covers its wait", async () => {
    const client = flavour.silent({ timeoutMs: 300, failurePolicy: 'throw' });
    const started = performance.now();
    const call = client.acquire({ key: 'x', wait: true, maxWaitMs: 400 });
    await expect(call).rejects.toMatchObject({ reason: 'timeout' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(690);
  });

  describe('failure policy when the limiter never answers', () => {
    it("'closed' refuses after the timeout, marked policy", async () => {
      const client = flavour.silent({ timeoutMs: 300 });
      const started = performance.now();
      const reply = await client.acquire({ key: 'x' });
      expect(reply).toMatchObject({ allowed: false, code: 'UNAVAILABLE', policy: true });
      expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    });

    it("'throw' throws LimiterUnavailableError with reason timeout", async () => {
      const client = flavour.silent({ timeoutMs: 300, failurePolicy: 'throw' });
      await expect(client.acquire({ key: 'x' })).rejects.toMatchObject({ reason: 'timeout' });
      await expect(client.acquire({ key: 'x' }, { timeoutMs: 100 })).rejects.toMatchObject({
        reason: 'timeout',
      });
    });
  });
});

describe('NATS client only', () => {
  /** Counts what reaches the limiters' subjects, seen by a plain (non-queue) subscriber. */
  async function observe(prefix: string) {
    const observer = await connect({ servers: NATS_URL });
    const seen = { batches: [] as number[], singles: 0 };
    observer.subscribe(`${prefix}.acquire.batch`, {
      callback: (_, msg) => seen.batches.push(msg.json<{ requests: unknown[] }>().requests.length),
    });
    observer.subscribe(`${prefix}.acquire`, { callback: () => void seen.singles++ });
    await observer.flush();
    return {
      seen,
      /** Every message sent before this has reached the observer (one round trip through NATS). */
      async settled() {
        await observer.flush();
        return seen;
      },
      close: () => observer.close(),
    };
  }

  it('auto-batches the acquires of one turn into one acquire.batch, each caller its own reply', async () => {
    const wire = await observe(fx.prefix);
    const client = natsFlavour.served();
    const keys = Array.from({ length: 50 }, key);
    const replies = await Promise.all(keys.map((k) => client.acquire({ key: k, quota: fx.quota })));
    expect(replies.map((r) => r.key)).toEqual(keys);
    expect(replies.every((r) => r.allowed && r.remaining === 4)).toBe(true);
    await fx.nc.flush();
    expect(await wire.settled()).toEqual({ batches: [50], singles: 0 });
    await wire.close();
  });

  it('caps a batch at maxBatchSize; a batch of one goes as a plain acquire; waiters go alone', async () => {
    const wire = await observe(fx.prefix);
    const client = natsFlavour.served({ batching: { maxBatchSize: 10 } });
    const k = key();
    await Promise.all(
      Array.from({ length: 25 }, () => client.acquire({ key: k, quota: fx.quota })),
    );
    await client.acquire({ key: key(), quota: fx.quota });
    const waiter = await client.acquire({ key: key(), quota: fx.waitQuota, wait: true });
    expect(waiter.allowed).toBe(true);
    await fx.nc.flush();
    expect(await wire.settled()).toEqual({ batches: [10, 10, 5], singles: 2 });
    await wire.close();
  });

  it('without batching, every acquire goes alone', async () => {
    const wire = await observe(fx.prefix);
    const client = natsFlavour.served({ batching: false });
    await Promise.all(
      Array.from({ length: 5 }, () => client.acquire({ key: key(), quota: fx.quota })),
    );
    await fx.nc.flush();
    expect(await wire.settled()).toEqual({ batches: [], singles: 5 });
    await wire.close();
  });

  it('a batch whose signal is already aborted sends nothing and charges nothing', async () => {
    const wire = await observe(fx.prefix);
    const client = natsFlavour.served();
    const k = key();
    const call = client.batch(
      [
        { key: k, quota: fx.quota },
        { key: k, quota: fx.quota },
      ],
      {
        signal: AbortSignal.abort(),
      },
    );
    await expect(call).rejects.toBeInstanceOf(RequestAbortedError);
    await fx.nc.flush();
    expect(await wire.settled()).toEqual({ batches: [], singles: 0 });
    const stats = await client.stats({ key: k, quota: fx.quota });
    expect(stats.limits[0]).toMatchObject({ used: 0 });
    await wire.close();
  });

  it('a closed connection answers by the failure policy at once', async () => {
    const nc = await connect({ servers: NATS_URL });
    const client = keep(
      new RateLimitClient({
        connection: nc,
        subjectPrefix: fx.silentPrefix,
        failurePolicy: 'throw',
      }),
    );
    const pending = client.acquire({ key: 'x' });
    await nc.close();
    await expect(pending).rejects.toMatchObject({ reason: 'connection-closed' });
    await expect(client.acquire({ key: 'x' })).rejects.toMatchObject({
      reason: 'connection-closed',
    });
  });
});

describe('examples/calling', () => {
  /**
   * The tokens used after the example settled 320: its token bucket (10 000 an hour) refills one
   * token every 360 ms, so a slow run reads a little less, never more.
   */
  async function tokensUsed(run: () => Promise<{ stats: KeyStats }>): Promise<number[]> {
    const started = performance.now();
    const { stats } = await run();
    const refilled = Math.ceil(((performance.now() - started) * 10_000) / 3_600_000);
    const used = stats.limits.find((l) => l.unit === 'tokens')?.used ?? -1;
    return [used >= 320 - refilled && used <= 320 ? 320 : used];
  }

  it('sdk.ts acquires, settles its tokens and reads the stats over NATS', async () => {
    let result: Awaited<ReturnType<typeof callOverNats>> | undefined;
    const used = await tokensUsed(async () => {
      result = await callOverNats(NATS_URL, fx.prefix, `${fx.examplePrefix}nats`);
      return result;
    });
    expect(result?.decision).toMatchObject({ allowed: true, code: 'OK' });
    expect(result?.usage?.ok).toBe(true);
    expect(used).toEqual([320]);
  });

  it('sdk-http.ts does the same over HTTP', async () => {
    let result: Awaited<ReturnType<typeof callOverHttp>> | undefined;
    const used = await tokensUsed(async () => {
      result = await callOverHttp(fx.limiters[1]!.url, `${fx.examplePrefix}http`);
      return result;
    });
    expect(result?.decision).toMatchObject({ allowed: true, code: 'OK' });
    expect(used).toEqual([320]);
  });
});
