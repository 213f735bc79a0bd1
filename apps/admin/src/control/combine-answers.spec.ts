import type { KeyStats, ReplicaAnswer } from '@app/contracts';
import {
  combineKeyStats,
  combineReset,
  isBoolean,
  isKeyStats,
  parseReplicaAnswer,
} from './combine-answers';

function stats(used: number, over: Partial<KeyStats> = {}): KeyStats {
  return {
    key: 'k',
    quota: 'api',
    limits: [
      { name: 'rps', unit: 'requests', limit: 10, used, remaining: 10 - used, resetMs: 100 },
    ],
    queued: 1,
    inFlight: 1,
    approved: used,
    denied: 0,
    ...over,
  };
}

const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

describe('combineKeyStats', () => {
  it('says UNAVAILABLE when nobody answered', () => {
    expect(combineKeyStats([])).toEqual({
      replicas: 0,
      code: 'UNAVAILABLE',
      reason: 'no limiter replica answered',
    });
  });

  it('passes on the refusal most replicas gave', () => {
    const answers: ReplicaAnswer<KeyStats>[] = [
      { replica: 'a', code: 'UNAVAILABLE', reason: 'redis down' },
      { replica: 'b', code: 'UNKNOWN_QUOTA', reason: 'no quota' },
      { replica: 'c', code: 'UNKNOWN_QUOTA', reason: 'no quota' },
    ];
    expect(combineKeyStats(answers)).toEqual({
      replicas: 3,
      code: 'UNKNOWN_QUOTA',
      reason: 'no quota',
    });
  });

  it('ignores refusals when some replica answered', () => {
    const result = combineKeyStats([
      { replica: 'a', code: 'UNKNOWN_QUOTA' },
      { replica: 'b', scope: 'local', value: stats(3) },
    ]);
    expect(result).toMatchObject({ replicas: 2, scope: 'local', stats: stats(3) });
    expect(result.code).toBeUndefined();
  });

  it('sums local limits by name, keeps limit 0 (unlimited) remaining as reported', () => {
    const a = stats(2, {
      limits: [
        { name: 'rps', unit: 'requests', limit: 10, used: 2, remaining: 8, resetMs: 100 },
        { name: 'free', unit: 'requests', limit: 0, used: 5, remaining: 0, resetMs: 0 },
      ],
    });
    const b = stats(4, {
      limits: [
        { name: 'extra', unit: 'tokens', limit: 50, used: 60, remaining: 0, resetMs: 9 },
        { name: 'rps', unit: 'requests', limit: 10, used: 4, remaining: 6, resetMs: 250 },
      ],
    });
    const result = combineKeyStats([
      { replica: 'a', scope: 'local', value: a },
      { replica: 'b', value: b }, // no scope: local
    ]);
    expect(result.stats).toEqual({
      key: 'k',
      quota: 'api',
      limits: [
        { name: 'rps', unit: 'requests', limit: 10, used: 6, remaining: 4, resetMs: 250 },
        { name: 'free', unit: 'requests', limit: 0, used: 5, remaining: 0, resetMs: 0 },
        { name: 'extra', unit: 'tokens', limit: 50, used: 60, remaining: 0, resetMs: 9 },
      ],
      queued: 2,
      inFlight: 2,
      approved: 6,
      denied: 0,
    });
  });

  it('takes the last cluster answer when scopes are mixed, summing queued over all', () => {
    const result = combineKeyStats([
      { replica: 'a', scope: 'cluster', value: stats(5, { queued: 2 }) },
      { replica: 'b', scope: 'local', value: stats(1, { queued: 3 }) },
      { replica: 'c', scope: 'cluster', value: stats(6, { queued: 0 }) },
    ]);
    expect(result).toEqual({ replicas: 3, scope: 'cluster', stats: stats(6, { queued: 5 }) });
  });
});

describe('combineReset', () => {
  it('is reset when any replica reset, UNAVAILABLE when none answered', () => {
    expect(
      combineReset([
        { replica: 'a', value: false },
        { replica: 'b', value: true },
      ]),
    ).toEqual({ replicas: 2, reset: true });
    expect(combineReset([])).toMatchObject({ replicas: 0, reset: false, code: 'UNAVAILABLE' });
    expect(combineReset([{ replica: 'a', code: 'INVALID_REQUEST', reason: 'key' }])).toEqual({
      replicas: 1,
      reset: false,
      code: 'INVALID_REQUEST',
      reason: 'key',
    });
  });
});

describe('parseReplicaAnswer', () => {
  it('accepts answers and refusals, refuses anything else', () => {
    expect(parseReplicaAnswer(bytes({ replica: 'a', value: true }), isBoolean)).toEqual({
      replica: 'a',
      scope: undefined,
      value: true,
    });
    expect(
      parseReplicaAnswer(bytes({ replica: 'a', scope: 'cluster', value: stats(1) }), isKeyStats),
    ).toMatchObject({ scope: 'cluster', value: stats(1) });
    expect(parseReplicaAnswer(bytes({ replica: 'a', code: 'UNAVAILABLE' }), isBoolean)).toEqual({
      replica: 'a',
      scope: undefined,
      code: 'UNAVAILABLE',
      reason: undefined,
    });
    for (const bad of [
      'nope',
      [],
      { value: true },
      { replica: '', value: true },
      { replica: 'a', value: 'yes' },
      { replica: 'a', scope: 'global', value: true },
      { replica: 'a', code: 7 },
    ]) {
      const data = typeof bad === 'string' ? new TextEncoder().encode(bad) : bytes(bad);
      expect(parseReplicaAnswer(data, isBoolean)).toBeUndefined();
    }
    expect(parseReplicaAnswer(bytes({ replica: 'a', value: { key: 'k' } }), isKeyStats)).toBe(
      undefined,
    );
  });
});
