import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Decision, KeyStats as EngineKeyStats } from '@app/engine/types';
import { AcquireReplySchema, type AcquireReply } from './acquire';
import type { Expect, IsSameShape } from './engine-compat';
import { GoccDebugReplySchema } from './gocc-debug';
import { KeyStatsSchema, type KeyStats } from './stats';
import { UsageReplySchema } from './usage';

// The checks in engine-compat.ts are only worth something if they can fail: these must not compile.
// @ts-expect-error a reply without `shadow` is not the engine's Decision
export type ReplyMissingShadow = Expect<IsSameShape<Omit<AcquireReply, 'shadow'>, Decision>>;
// @ts-expect-error a stats shape with an extra required field is not the engine's KeyStats
export type StatsWithExtra = Expect<IsSameShape<KeyStats & { extra: string }, EngineKeyStats>>;

const decision: Decision = {
  allowed: true,
  code: 'OK',
  requestId: 'c0ffee',
  key: 'user-1',
  quota: 'api',
  limit: 100,
  remaining: 37,
  resetMs: 420,
  retryAfterMs: 0,
  waitedMs: 0,
  limitName: 'rps',
  leaseId: 'lease-1',
  shadow: false,
};

describe('reply schemas', () => {
  it('accept an engine Decision as an AcquireReply', () => {
    const reply: AcquireReply = decision;
    expect(TypeCompiler.Compile(AcquireReplySchema).Check(reply)).toBe(true);
  });

  it('refuse a reply with an unknown code', () => {
    expect(TypeCompiler.Compile(AcquireReplySchema).Check({ ...decision, code: 'NOPE' })).toBe(
      false,
    );
  });

  it('describe KeyStats, usage and the GoCC debug view', () => {
    const stats: EngineKeyStats = {
      key: 'user-1',
      quota: 'api',
      limits: [{ name: 'rps', unit: 'requests', limit: 10, used: 3, remaining: 7, resetMs: 200 }],
      queued: 0,
      inFlight: 1,
      approved: 3,
      denied: 0,
    };
    expect(TypeCompiler.Compile(KeyStatsSchema).Check(stats)).toBe(true);
    expect(TypeCompiler.Compile(UsageReplySchema).Check({ ok: true, usage: stats })).toBe(true);
    expect(
      TypeCompiler.Compile(GoccDebugReplySchema).Check({
        Key: 'user-1',
        Config: { WindowMillis: 1000, MaxRequestsPerWindow: 100, MaxRequestsInQueue: 400 },
        NumApprovedThisWindow: 3,
        NumDeniedThisWindow: 0,
        NumWaiting: 0,
        Found: true,
      }),
    ).toBe(true);
  });
});
