import type { KeyStats, ReplicaAnswer } from '@app/contracts';
import { VirtualClock } from '@app/engine';
import { LimiterService } from '../engine-host/limiter.service';
import { readLimiterSettings } from '../settings/limiter-settings';
import { ControlRequests } from './control-requests';

const bytes = (text: string): Uint8Array => Buffer.from(text);
const json = async (reply: Uint8Array | Promise<Uint8Array>): Promise<ReplicaAnswer<unknown>> =>
  JSON.parse(Buffer.from(await reply).toString('utf8')) as ReplicaAnswer<unknown>;

describe('ControlRequests (keyStats, resetKey)', () => {
  let limiter: LimiterService;
  let requests: ControlRequests;

  beforeEach(() => {
    // A clock that stands still: the default quota's 1 s window must not turn between two checks.
    const clock = new VirtualClock(1_763_750_000_000);
    limiter = new LimiterService(readLimiterSettings({ NATS_URL: '', MAX_REQUESTS: '5' }), clock);
    limiter.setQuotas([
      {
        name: 'shared',
        scope: 'cluster',
        limits: [
          { name: 'rpm', unit: 'requests', limit: 9, windowMs: 60_000, algorithm: 'fixed_window' },
        ],
      },
    ]);
    requests = new ControlRequests('replica-1', limiter);
  });
  afterEach(() => limiter.onModuleDestroy());

  const admit = (key: string): void => {
    const decision = limiter.acquire({ key, cost: { requests: 1 } });
    if (decision instanceof Promise) throw new Error('a local acquire answers at once');
    expect(decision.allowed).toBe(true);
  };

  it('answers a key’s stats with this replica’s id and scope', async () => {
    admit('alice');
    admit('alice');
    const answer = await json(requests.keyStats(bytes('{"key":"alice"}')));
    expect(answer).toMatchObject({ replica: 'replica-1', scope: 'local' });
    const value = answer.value as KeyStats;
    expect(value).toMatchObject({ key: 'alice', quota: 'default', approved: 2, denied: 0 });
    expect(value.limits[0]).toMatchObject({ limit: 5, used: 2, remaining: 3 });
    // A cluster quota without REDIS_URL is decided here alone: its counts are this replica's.
    expect(await json(requests.keyStats(bytes('{"key":"a","quota":"shared"}')))).toMatchObject({
      scope: 'local',
    });
  });

  it('resets a key: true when this replica held state for it', async () => {
    admit('bob');
    expect(await json(requests.resetKey(bytes('{"key":"bob"}')))).toEqual({
      replica: 'replica-1',
      scope: 'local',
      value: true,
    });
    const after = await json(requests.keyStats(bytes('{"key":"bob"}')));
    expect((after.value as KeyStats).limits[0]?.used).toBe(0);
  });

  it.each([
    ['not json', 'body'],
    ['[]', 'body'],
    ['{}', 'key'],
    ['{"key":""}', 'key'],
    ['{"key":"k","quota":7}', 'quota'],
    ['{"key":"k","quota":"no spaces"}', 'quota'],
  ])('answers %s with INVALID_REQUEST naming %s', async (payload, field) => {
    const asks = [
      (data: Uint8Array) => requests.keyStats(data),
      (data: Uint8Array) => requests.resetKey(data),
    ];
    for (const ask of asks) {
      const answer = await json(ask(bytes(payload)));
      expect(answer).toMatchObject({ replica: 'replica-1', code: 'INVALID_REQUEST' });
      expect(answer.reason).toMatch(new RegExp(`^${field}`));
      expect(answer.value).toBeUndefined();
    }
  });

  it('answers UNKNOWN_QUOTA for a quota this replica does not serve', async () => {
    const answer = await json(requests.keyStats(bytes('{"key":"k","quota":"nope"}')));
    expect(answer).toMatchObject({ replica: 'replica-1', code: 'UNKNOWN_QUOTA' });
    expect(answer.reason).toContain('nope');
  });
});
