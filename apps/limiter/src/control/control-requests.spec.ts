import {
  controlNames,
  SIGNATURE_HEADER,
  signingKeyOf,
  signMessage,
  type KeyStats,
  type ReplicaAnswer,
} from '@app/contracts';
import { VirtualClock } from '@app/engine';
import { headers } from 'nats';
import { createUser } from 'nkeys.js';
import { LimiterService } from '../engine-host/limiter.service';
import { readLimiterSettings } from '../settings/limiter-settings';
import { ControlRefusals } from './control-refusals';
import { ControlRequests } from './control-requests';
import { ControlSigning } from './control-signing';

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

  it('with CONTROL_PUBLIC_KEY: serves a signed request once, refuses the rest, resetting nothing', async () => {
    const now = 1_763_750_000_000;
    const admin = signingKeyOf(new TextDecoder().decode(createUser().getSeed()));
    const settings = readLimiterSettings({ CONTROL_PUBLIC_KEY: admin.publicKey });
    const names = controlNames('ratelimit.v1');
    const refusals = new ControlRefusals();
    const signing = new ControlSigning(settings.signing, names, refusals);
    const gated = new ControlRequests('replica-1', limiter, (operation, data, h) =>
      signing.refusesRequest(names[operation], data, h, now),
    );
    admit('alice');
    const body = bytes('{"key":"alice"}');
    const signed = (subject: string) => {
      const h = headers();
      h.set(SIGNATURE_HEADER, signMessage(admin, subject, [], body, now));
      return h;
    };
    const used = async () =>
      ((await json(requests.keyStats(body))).value as KeyStats).limits[0]?.used;

    expect(await json(gated.resetKey(body))).toMatchObject({
      code: 'INVALID_REQUEST',
      reason: expect.stringMatching(/^signature: not signed/),
    });
    // Signed for keyStats, sent as a reset: another subject, refused.
    expect((await json(gated.resetKey(body, signed(names.keyStats)))).code).toBe('INVALID_REQUEST');
    expect(await used()).toBe(1);
    const reset = signed(names.resetKey);
    expect(await json(gated.resetKey(body, reset))).toMatchObject({ value: true });
    expect(await used()).toBe(0);
    admit('alice');
    expect((await json(gated.resetKey(body, reset))).reason).toMatch(/^signature: nonce .* taken/);
    expect(await used()).toBe(1);
    expect(refusals.totals).toEqual([
      { kind: 'request', reason: 'unsigned', count: 1 },
      { kind: 'request', reason: 'bad-signature', count: 1 },
      { kind: 'request', reason: 'replayed', count: 1 },
    ]);
  });
});
